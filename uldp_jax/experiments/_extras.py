"""Paper items without a simulation study: 003 Fig 1 + Table 1's costs, 004 Fig 1 (error regions), 004 Fig 3.

* ``003-fig1``: closed-form MSE (003's unit: sum over items, fixed model) and communication cost of uRR, uRAP
  and uHR against uLH as ``|X_S|`` grows, plus 003 Table 1's ``log2 |Y|`` next to the library's ``comm_bits``.
* ``004-fig1``: the error region of a test between two inputs under (a) standard LDP and (b) eq 9's asymmetric
  constraints (004 Theorem 1, App. B eqs 22-23), from the closed form and from eq 9's exact channel.
* ``004-fig3``: heatmap of the Gowalla check-in distribution (synthetic proxy unless ``--data`` names the file).

All numbers here are exact (no sampling); the ``se`` columns are 0, except 004-fig3's, which give the sampling
standard error ``sqrt(p (1 - p) / n)`` of each cell's empirical frequency.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _datasets, _glutf_text, _plot
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register

_FIG1_MECHS = {"uRR": lambda d, s, e, t: ul.URR(d, s, e), "uRAP": lambda d, s, e, t: ul.URAP(d, s, e),
               "uHR": lambda d, s, e, t: ul.HighLowHR(d, s, e),
               "uLH": lambda d, s, e, t: ul.ULH(d, s, e, theta_n=t)}


def table1_bits(label: str, d: int, s: int, eps: float) -> float:
    """003 Table 1's communication cost ``log2 |Y|`` (its big-O argument, read as an exact count)."""
    e = math.exp(eps)
    if label == "uRR":
        return math.log2(d)
    if label in ("uRAP", "uUE"):
        return s + math.log2(1 + (d - s) * 2.0 ** (-s))  # log2(2^s + d - s) without overflow
    if label == "uSS":
        return math.log2(math.comb(s, max(1, round(s / (e + 1)))) + d - s)
    if label == "uLH":
        return math.log2(e + d - s)
    return float("nan")


def run_003_fig1(cfg: dict, ctx: Context) -> Report:
    """003 Fig 1: MSE and communication cost vs |X_S| (uniform p over d items; 003 does not state Fig 1's data)."""
    d, n, eps = cfg["d"], cfg["n"], cfg["eps"]
    p = np.full(d, 1.0 / d)
    rows, mse_lines, bit_lines, same = [], [], [], []
    for label, make in _FIG1_MECHS.items():
        ys, bs, ts = [], [], []
        for s in cfg["sizes"]:
            mech = make(d, tuple(range(s)), eps, 1.0 - s / d)
            with jax.enable_x64(True):
                mse = float(ul.theory.mse(mech, jnp.asarray(p, jnp.float64), n, model="fixed"))
            bits = float(ul.mechanisms.core.comm_bits(mech))
            rows.append(dict(mechanism=label, s=s, d=d, n=n, eps=eps, metric="mse_sum (003 unit)", value=mse,
                             se=0.0, mse_per_item=mse / d, comm_bits=bits,
                             table1_bits=table1_bits(label, d, s, eps)))
            ys.append(mse)
            bs.append(bits)
            ts.append(table1_bits(label, d, s, eps))
        mse_lines.append((label, label, "theory", cfg["sizes"], ys))
        bit_lines.append((f"{label}: library comm_bits", label, "theory", cfg["sizes"], bs))
        if np.all(np.isfinite(ts)):
            bit_lines.append((f"{label}: 003 Table 1 log2|Y|", label, "emp+thr", cfg["sizes"], ts))
            if np.allclose(bs, ts, rtol=1e-3):  # the dashed line hides under the solid one of its own colour
                same.append(label)
    big = cfg["sizes"][-1]
    last = {r["mechanism"]: r for r in rows if r["s"] == big}
    notes = [f"|X_S| = {big}: MSE (sum over items) " + ", ".join(f"{k} {v['value']:.3g}" for k, v in last.items())
             + "; bits " + ", ".join(f"{k} {v['comm_bits']:.1f}" for k, v in last.items()) + ".",
             "003: uRR's MSE grows fastest with |X_S|: "
             f"{last['uRR']['value'] == max(v['value'] for v in last.values())}"
             f"; uRAP's cost (003 Table 1, log2(2^s + d - s)) grows with |X_S| "
             f"({rows[len(cfg['sizes'])]['table1_bits']:.1f} -> {last['uRAP']['table1_bits']:.1f} bits; the "
             f"library's uRAP report is a d-bit vector, {last['uRAP']['comm_bits']:.0f} bits at every |X_S|); uLH "
             "has both MSE below uRR's "
             f"({last['uLH']['value'] < last['uRR']['value']}) and cost below uRAP's "
             f"({last['uLH']['table1_bits'] < last['uRAP']['table1_bits']} by 003 Table 1, "
             f"{last['uLH']['comm_bits'] < last['uRAP']['comm_bits']} by comm_bits, which counts uLH's hash seed).",
             "uHR's MSE here is its exact risk (docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms), not the upper bound 003 plots.",
             "All values are exact closed forms (no sampling): the comparisons above need no statistical test."]
    for label in ("uRR", "uRAP", "uSS", "uUE", "uLH"):  # 003 Table 1 vs the library's comm_bits at the largest s
        mech = {"uSS": lambda: ul.USS(d, tuple(range(big)), eps, theta_n=1 - big / d),
                "uUE": lambda: ul.UUE(d, tuple(range(big)), eps, theta_n=1 - big / d)}.get(
                    label, lambda: _FIG1_MECHS[label](d, tuple(range(big)), eps, 1 - big / d))()
        rows.append(dict(mechanism=label, s=big, d=d, n=n, eps=eps, metric="table1 comm bits",
                         value=table1_bits(label, d, big, eps), se=0.0,
                         comm_bits=float(ul.mechanisms.core.comm_bits(mech))))
    notes.append("003 Table 1 log2|Y| vs library comm_bits at |X_S| = " + str(big) + ": " + ", ".join(
        f"{r['mechanism']} {r['value']:.1f} / {r['comm_bits']:.1f}" for r in rows if r["metric"] == "table1 comm bits"))
    o = cfg["orders"]
    order_rows, order_notes = _glutf_text.table1_orders(o["d"], o["sizes"], o["eps_high"], o["eps_medium"])
    rows += order_rows
    notes += order_notes
    fig = _plot.line_panels([(f"MSE (sum over items), d={d}, n={n}, eps={eps}", mse_lines),
                             (f"communication cost (bits), d={d}" + "".join(
                                 f"; {m}: solid = dashed" for m in same), bit_lines)], "|X_S|",
                            ["MSE, sum over items (exact, fixed model)", "bits per report"],
                            suptitle="right panel: solid = the library's comm_bits (log2 of its report space), "
                                     "dashed = 003 Table 1's log2 |Y|")
    table = format_table([r for r in rows if r["metric"].startswith("mse")], ("mechanism",), "s")
    return Report(rows, {"fig1_mse_and_bits": fig}, table, notes, "sampling model: fixed (exactly n p(x) users hold x), "
                  f"exact closed forms, no sampling. uniform p over d={d} items, n={n}, eps={eps}")


def run_004_fig1(cfg: dict, ctx: Context) -> Report:
    """004 Fig 1: error regions (P_FA, P_MD) under (a) eps-LDP and (b) asymmetric (eps_12, eps_21) constraints."""
    rows, notes = [], []
    plt = _plot._plt()
    fig, axes = plt.subplots(1, len(cfg["panels"]), figsize=(4.2 * len(cfg["panels"]), 4.0), squeeze=False)
    for ax, (name, e12, e21) in zip(axes[0], cfg["panels"]):
        lower = ul.privacy_tradeoff(e12, e21)
        chan = ul.tradeoff_curve(ul.BinaryCA(e12, e21), 0, 1)  # eq 9's channel, decision "0" = symbol 1
        for src, cur in (("closed form (eqs 7-8, 22-23)", lower), ("eq 9 channel", chan)):
            for k, (a, b) in enumerate(zip(cur.p_fa, cur.p_md)):
                rows.append(dict(panel=name, eps12=e12, eps21=e21, source=src, vertex=k, p_fa=float(a),
                                 p_md=float(b), se=0.0))
        gap = float(np.max(np.abs(np.interp(lower.p_fa, chan.p_fa, chan.p_md) - lower.p_md)))
        notes.append(f"{name}: corner (P_FA, P_MD) = ({lower.p_fa[1]:.4f}, {lower.p_md[1]:.4f}); eq 9's channel "
                     f"attains the region (max gap {gap:.1e}).")
        xs = np.concatenate([lower.p_fa, (1 - lower.p_fa)[::-1]])
        ys = np.concatenate([lower.p_md, (1 - lower.p_md)[::-1]])
        ax.fill(xs, ys, color="tab:blue", alpha=0.3, label="achievable (P_FA, P_MD) of any test")
        ax.plot(lower.p_fa, lower.p_md, "-", color="tab:blue", label="region boundary (closed form, eqs 7-8, 22-23)")
        ax.plot(1 - lower.p_fa, 1 - lower.p_md, "-", color="tab:blue")  # the mirror image (tests with flipped output)
        ax.plot(chan.p_fa, chan.p_md, "o", color="tab:red", ms=4, label="eq 9's channel (vertices)")
        ax.plot([0, 1], [1, 0], ":", color="gray", label="P_FA + P_MD = 1: tests that ignore the report")
        ax.set_title(f"{name}: eps12={e12:g}, eps21={e21:g}", fontsize=10)
        ax.set_xlabel("P_FA = Pr(decide 1 | X = 2)")
        ax.set_ylabel("P_MD = Pr(decide 2 | X = 1)")
        ax.set_aspect("equal")
    fig.tight_layout()
    _plot.legend_below(fig, *axes[0][0].get_legend_handles_labels(), 4.2 * len(cfg["panels"]))
    if len(cfg["panels"]) > 1:  # 004: with eps12 < eps21 the miss-detection rate is pushed up vs LDP(eps21)
        (na, a12, a21), (nb, b12, b21) = cfg["panels"][0], cfg["panels"][-1]
        grid = np.linspace(0.0, 1.0, 201)
        low = {k: np.interp(grid, c.p_fa, c.p_md) for k, c in (("a", ul.privacy_tradeoff(a12, a21)),
                                                                ("b", ul.privacy_tradeoff(b12, b21)))}
        higher = bool(np.all(low["b"] >= low["a"] - 1e-12) and np.any(low["b"] > low["a"] + 1e-6))
        k = int(np.argmax(low["b"] - low["a"]))
        notes.append(f"004's claim, {nb} vs {na}: the smallest achievable P_MD at each P_FA is never lower and "
                     f"somewhere higher: {higher} (largest increase {low['b'][k] - low['a'][k]:.3f} at "
                     f"P_FA = {grid[k]:.2f}).")
    table = format_table([r for r in rows if r["source"].startswith("closed") and r["vertex"] == 1], ("panel",),
                         "source", "p_md", "{:.4f}")  # the corner's P_MD (its P_FA is in the notes)
    return Report(rows, {"fig1_error_regions": fig}, "corner P_MD of each region\n" + table, notes,
                  "closed form; no data, no sampling")


def run_004_fig3(cfg: dict, ctx: Context) -> Report:
    """004 Fig 3: heatmap of the Gowalla check-in distribution (log scale); CSV: coarsened grid + top cells."""
    (ds,) = _datasets.resolve(["gowalla"], ctx.data, None)
    r, c = ds.shape
    grid = ds.p.reshape(r, c)
    f = cfg["coarsen"]
    coarse = grid[: r - r % f, : c - c % f].reshape(r // f, f, c // f, f).sum((1, 3))
    se = lambda v: float(math.sqrt(v * (1 - v) / ds.n))  # noqa: E731  (sampling SE of a cell frequency)
    rows = [dict(level=f"coarse {f}x{f}", row=i, col=j, value=float(coarse[i, j]), se=se(coarse[i, j]), n=ds.n)
            for i in range(coarse.shape[0]) for j in range(coarse.shape[1])]
    top = np.argsort(-ds.p)[: cfg["top"]]
    rows += [dict(level="top cell", row=int(x // c), col=int(x % c), value=float(ds.p[x]), se=se(ds.p[x]), n=ds.n)
             for x in top]
    plt = _plot._plt()
    fig, ax = plt.subplots(figsize=(10, 4.2))
    floor = 1.0 / ds.n  # below one check-in: shown as empty
    im = ax.imshow(np.log10(np.maximum(grid, floor)), origin="lower", cmap="magma", aspect="auto",
                   extent=(-130, -60, 25, 50), vmin=np.log10(floor))
    fig.colorbar(im, ax=ax, label="log10 share of check-ins")
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.set_title(f"Gowalla check-ins ({ds.source}), {r}x{c} cells of 0.2 degrees, n={ds.n}", fontsize=10)
    fig.tight_layout()
    nonzero = int(np.count_nonzero(ds.p * ds.n >= 1.0))  # cells with at least one expected check-in
    top10 = float(np.sort(ds.p)[::-1][: max(1, ds.d // 10)].sum())
    notes = [f"{nonzero} of {ds.d} cells hold at least one check-in (n p >= 1); the busiest 10% of cells hold "
             f"{top10:.1%} of the check-ins; "
             f"busiest cell {ds.p.max():.3%}."]
    table = format_table([r for r in rows if r["level"] == "top cell"], ("row", "col"), "level", fmt="{:.4g}")
    return Report(rows, {"fig3_heatmap": fig}, "busiest cells (share of check-ins)\n" + table, notes,
                  "sampling model: none (the proxy's cell distribution itself). " + ds.summary())


_F1 = dict(d=1000, n=100_000, eps=1.0, sizes=[10, 20, 50, 100, 200, 500, 900],
           orders=dict(d=4096, sizes=[64, 128, 256, 512, 1024], eps_high=[0.1, 0.3, 0.9], eps_medium=[1.5, 2.5, 3.5]))
_F1Q = dict(_F1, d=100, sizes=[10, 50], orders=dict(d=256, sizes=[16, 64], eps_high=[0.5], eps_medium=[2.0]))
register(Experiment("003-fig1", "003 Fig 1 + Table 1: MSE, bits and MSE orders of uRR/uRAP/uHR/uSS/uUE vs uLH",
                    _F1, _F1Q, run_003_fig1, takes_data=False,
                    paper_deviations=("data: 003 does not state Fig 1's d, n, eps or data; uniform p over d = 1000 "
                                      "items, n = 1e5, eps = 1 assumed",)))
_P = [["(a) LDP", 2.0, 2.0], ["(b) context-aware", 0.5, 2.0]]
register(Experiment("004-fig1", "004 Fig 1: error regions of the binary hypothesis test (LDP vs eq 9)",
                    dict(panels=_P), dict(panels=_P), run_004_fig1, takes_data=False,
                    paper_deviations=("eps: 004 Fig 1 gives no numeric eps; (2, 2) and (0.5, 2) assumed",)))
register(Experiment("004-fig3", "004 Fig 3: heatmap of the Gowalla check-ins", dict(coarsen=5, top=20),
                    dict(coarsen=25, top=5), run_004_fig3))
