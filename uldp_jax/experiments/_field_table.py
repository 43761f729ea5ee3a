"""The field table (issue 49 item 4): every frequency oracle of the library at d in {16, 128, 1024, 22000} and eps in
{1, 2, 4, 5}, the ULDP ones at |X_S| / d in {0.1, 0.5}.

Per mechanism, distribution (uniform, Zipf), d and eps: the closed-form per-item ``n Var`` (``ul.theory.mse`` in the
iid model, times ``n / d``: the mean over the ``d`` items of ``n E (p_hat_x - p_x)^2``, which is ``n Var`` for the
unbiased estimators and adds the squared bias of a sketch given its hashes), the simulated value (one ``ul.study``
per distribution, d and group, eps as data, iid model, ``emp``) with its standard error over the repetitions, the
report size (``comm_bits``) and the server's decode time (``ul.estimate(..., "emp")`` on ``time_n`` reports, best of
three after a compiling call; reports of the first distribution). Every simulated mean is tested against its closed
form (two-sided z-tests, family level ``_claims.LEVEL``, ``_claims.agree``).

Mechanisms: ``LDP_ORACLES`` and ``ULDP_ORACLES`` below; ``NOT_IN_TABLE`` names every other registered constructor
and why it has no row (tests/experiments/test_field_table.py checks that the three cover the registry).
"""

from __future__ import annotations

import functools
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax import data as _data
from uldp_jax.experiments import _claims, _common, _field_table_plot
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register

# label -> (factory(d, eps), reference)
LDP_ORACLES = {
    "GRR": (lambda d, e: ul.GRR(d, e), "Kairouz et al. 2016"),
    "OUE": (lambda d, e: ul.OUE(d, e), "Wang et al. 2017"),
    "SUE": (lambda d, e: ul.SUE(d, e), "RAPPOR, Erlingsson et al. 2014"),
    "OLH": (lambda d, e: ul.OLH(d, e), "Wang et al. 2017"),
    "Wheel": (lambda d, e: ul.Wheel(d, e), "Wang et al. 2020"),
    "SS": (lambda d, e: ul.SS(d, e), "Wang et al. 2016; Ye, Barg 2018"),
    "RWS": (lambda d, e: ul.RWS(d, e), "Fang et al. 2025"),
    "PGR": (lambda d, e: ul.PGR(d, e), "Feldman et al. 2022"),
    "HPGR": (lambda d, e: ul.HPGR(d, e), "Feldman et al. 2022"),
    "HR": (lambda d, e: ul.HR(d, e), "Acharya et al. 2019 (one block)"),
    "HadamardResponse": (lambda d, e: ul.HadamardResponse(d, e), "Acharya et al. 2019"),
    "HM": (lambda d, e: ul.HM(d, e), "Cormode et al. 2018"),
    "RHR": (lambda d, e: ul.RHR(d, e), "Chen et al. 2020"),
    "PIRAPPOR": (lambda d, e: ul.PIRAPPOR(d, e), "Feldman, Talwar 2021"),
    "THE": (lambda d, e: ul.THE(d, e), "Wang et al. 2017"),
    "SHE": (lambda d, e: ul.SHE(d, e), "Wang et al. 2017"),
    "CMS": (lambda d, e: ul.CMS(d, e), "Apple 2017"),
    "HCMS": (lambda d, e: ul.HCMS(d, e), "Apple 2017"),
}
# label -> (factory(d, sensitive, eps), reference)
ULDP_ORACLES = {
    "URR": (lambda d, s, e: ul.URR(d, s, e), "Murakami, Kawamoto 2019"),
    "URAP": (lambda d, s, e: ul.URAP(d, s, e), "Murakami, Kawamoto 2019"),
    "UUE": (lambda d, s, e: ul.UUE(d, s, e), "He et al. (GLUTF)"),
    "USS": (lambda d, s, e: ul.USS(d, s, e), "He et al. (GLUTF)"),
    "ULH": (lambda d, s, e: ul.ULH(d, s, e), "He et al. (GLUTF)"),
    "UWheel": (lambda d, s, e: ul.UWheel(d, s, e), "He et al. (GLUTF)"),
    "HighLowHR": (lambda d, s, e: ul.HighLowHR(d, s, e), "Acharya et al. 2020 (high-low LDP)"),
    "UBD": (lambda d, s, e: ul.UBD(d, s, e), "Yoon et al. 2025"),
}
NOT_IN_TABLE = {
    "UE": "OUE's class (OUE is UE at its default p)", "RAPPOR": "SUE's class", "HE": "SHE's alias",
    "GLUTF": "a transform: its named instances are the U* rows", "glutf": "GLUTF's function form",
    "BinaryCA": "binary context-aware RR (d = 2, E-LDP)", "Warner": "binary (d = 2)", "Mangat": "binary (d = 2)",
    "BlockHR": "block-structured LDP (a guarantee per block of items, not one eps)",
    "PUM": "personalized utility: users' tags, not a frequency oracle over d items",
}


def _dist(name: str, d: int) -> np.ndarray:
    if name == "uniform":
        return _data.uniform(d).p
    return _data.zipf(d, float(name.split(":")[1])).p


def sensitive_size(d: int, ratio: float) -> int:
    """``|X_S|``: ``ratio * d`` rounded, at least 2 (uSS and uBD need two sensitive items) and below ``d``."""
    return min(max(2, round(ratio * d)), d - 1)


def closed_form(mech, p: np.ndarray, n: int) -> float:
    """Per-item ``n E (p_hat_x - p_x)^2`` of ``emp`` (iid), from ``ul.theory.mse`` (float64)."""
    with jax.enable_x64(True):
        return float(ul.theory.mse(mech, p, float(n), model="iid")) * n / p.shape[0]


@functools.partial(jax.jit, static_argnums=2)
def _decode(mech, ys, n):
    # the mechanism is an argument (a pytree: eps is data), so each oracle compiles once for the whole eps grid
    return ul.mechanisms.core.debias(mech, mech.aggregate(ys), n)


def decode_time(key, mech, p: np.ndarray, n: int, max_bits: int) -> tuple[float, int]:
    """``(seconds, reports)``: the server's decode (``aggregate`` then ``debias``, jitted; no report validation) of
    ``n`` reports (fewer where they would exceed ``max_bits`` bits: SHE's float32[n, d], UE's bits), best of three
    after one compiling call."""
    bits = max(float(ul.mechanisms.core.comm_bits(mech)), 1.0)
    n = max(100, min(n, int(max_bits // bits)))
    k_x, k_y = jax.random.split(key)
    xs = jax.random.choice(k_x, p.shape[0], (n,), p=jnp.asarray(p, jnp.float32))
    ys = ul.perturb(k_y, mech, xs)
    jax.block_until_ready(_decode(mech, ys, n))
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        jax.block_until_ready(_decode(mech, ys, n))
        best = min(best, time.perf_counter() - t0)
    return best, n


def _simulate(key, factories: dict, eps_grid: list, p: np.ndarray, n: int, reps: int) -> dict:
    """``{(label, eps): (mean, se)}`` of the per-item ``n MSE`` (iid, emp): one ``ul.study`` over the eps grid."""
    res = ul.study(key, factories, eps=eps_grid, n=[n], reps=reps, p=p, metrics=("mse_per_item",), progress=False)
    return {(r["mechanism"], float(r["eps"])): (n * r["mean"], n * r["se"]) for r in res.rows()}


def _groups(d: int, ratios: list, wanted):
    """``(group, ratio, s, {label: factory(eps)}, {label: reference})``: the LDP group, then one per ratio; only
    the labels in ``wanted``; a group left empty is skipped."""
    pick = lambda table: {k: v for k, v in table.items() if k in wanted}  # noqa: E731
    ldp, uldp = pick(LDP_ORACLES), pick(ULDP_ORACLES)
    if ldp:
        yield "LDP", "", "", {k: (lambda eps, f=f: f(d, eps)) for k, (f, _) in ldp.items()}, \
            {k: r for k, (_, r) in ldp.items()}
    for ratio in ratios if uldp else ():
        s = sensitive_size(d, ratio)
        sens = tuple(range(s))
        yield "ULDP", ratio, s, {k: (lambda eps, f=f: f(d, sens, eps)) for k, (f, _) in uldp.items()}, \
            {k: r for k, (_, r) in uldp.items()}


def run(cfg: dict, ctx: Context) -> Report:
    n, reps, eps_grid = int(cfg["n"]), int(cfg["reps"]), [float(e) for e in cfg["eps"]]
    rows, notes, checks = [], [], []
    times: dict = {}
    wanted = list(cfg["mechanisms"])
    picked = lambda table: any(k in wanted for k in table)  # noqa: E731
    groups = int(picked(LDP_ORACLES)) + len(cfg["ratios"]) * int(picked(ULDP_ORACLES))
    total = len(cfg["distributions"]) * len(cfg["d"]) * groups
    with _common.progress(total, "field table", ctx.progress) as bar:
        for di, dname in enumerate(cfg["distributions"]):
            for ki, d in enumerate(cfg["d"]):
                p = _dist(dname, d)
                for gi, (group, ratio, s, factories, refs) in enumerate(_groups(d, cfg["ratios"], wanted)):
                    simulated = d <= int(cfg["sim_max_d"])
                    sim = _simulate(ctx.key(di, ki, gi), factories, eps_grid, p, n, reps) if simulated else {}
                    for ei, eps in enumerate(eps_grid):
                        for li, (lab, make) in enumerate(factories.items()):
                            mech = make(eps)
                            tkey = (d, group, ratio, lab, eps)
                            if tkey not in times:
                                times[tkey] = decode_time(ctx.key(99, ki, gi, ei, li), mech, p, int(cfg["time_n"]),
                                                             int(cfg["time_max_bits"]))
                            base = dict(group=group, mechanism=lab, guarantee=mech.privacy_spec().kind,
                                        reference=refs[lab], distribution=dname, d=d, eps=eps, ratio=ratio, s=s,
                                        n=n, metric="n_var_per_item_iid",
                                        bits=round(float(ul.mechanisms.core.comm_bits(mech)), 3),
                                        decode_s=times[tkey][0], decode_n=times[tkey][1])
                            theory = closed_form(mech, p, n)
                            rows.append(dict(base, method="theory", value=theory, se=0.0, reps=""))
                            if simulated:
                                mean, se = sim[(lab, eps)]
                                rows.append(dict(base, method="emp", value=mean, se=se, reps=reps))
                                checks.append((mean, theory, se))
                    bar.update(1, f"{dname} d={d} {group} {ratio}")
    # Student t: each standard error is estimated from the same reps repetitions as its mean
    k = sum(1 for *_, se in checks if se > 0)
    crit = _claims.t_one_sided(_claims.LEVEL / (2 * max(k, 1)), reps - 1) if checks else math.inf
    bad = sum(abs(o - e) > crit * se for o, e, se in checks if se > 0)
    worst = max(checks, key=lambda c: abs(c[0] - c[1]) / c[2] if c[2] > 0 else 0.0, default=None)
    notes.append(f"Simulated mean = closed form (n = {n}, {reps} repetitions, iid model, emp): two-sided t-tests "
                 f"({reps - 1} dof), family level {_claims.LEVEL:g}, Bonferroni over {k} settings (|t| > {crit:.2f} "
                 f"rejects; largest |t| {abs(worst[0] - worst[1]) / worst[2] if worst else 0:.2f}): {bad} "
                 f"rejected. Simulated: d <= sim_max_d = {cfg['sim_max_d']}; larger d: closed forms, bits and "
                 "decode times only.")
    notes.append("Not in the table: " + "; ".join(f"{k} ({v})" for k, v in NOT_IN_TABLE.items()) + ".")
    keys = ("distribution", "d", "group", "ratio", "mechanism")
    theory_rows = [r for r in rows if r["method"] == "theory"]
    first = [r for r in theory_rows if r["distribution"] == cfg["distributions"][0]]
    emp_rows = [r for r in rows if r["method"] == "emp"]
    table = ("closed-form n Var per item (columns: eps)\n" + format_table(theory_rows, keys, "eps")
             + ("\n\nsimulated n MSE per item\n" + format_table(emp_rows, keys, "eps") if emp_rows else "")
             + "\n\nreport bits\n" + format_table(first, keys[1:], "eps", "bits")
             + "\n\nserver decode time, ms (reports: decode_n in the CSV)\n"
             + format_table([dict(r, ms=1e3 * r["decode_s"]) for r in first], keys[1:], "eps", "ms"))
    return Report(rows, {"field_table": _field_table_plot.figure(rows)}, table, notes,
                  f"sampling model: iid (each of the n users drawn from p), scored against p; closed forms in the same "
                  f"model. d in {cfg['d']}, eps in {eps_grid}, |X_S|/d in {cfg['ratios']}, n = {n}, {reps} "
                  f"repetitions; decode times on {cfg['time_n']} reports (fewer where their bits exceed "
                  f"{cfg['time_max_bits']})")


_FULL = dict(d=[16, 128, 1024, 22000], eps=[1.0, 2.0, 4.0, 5.0], distributions=["uniform", "zipf:1.1"],
             ratios=[0.1, 0.5], n=100_000, reps=50, time_n=100_000, time_max_bits=2**27,
             sim_max_d=22000, mechanisms=[*LDP_ORACLES, *ULDP_ORACLES])
_QUICK = dict(_FULL, d=[16], eps=[1.0, 4.0], distributions=["zipf:1.1"], ratios=[0.5], n=2000, reps=20, time_n=500)


def _ratio(v) -> str | None:
    return None if isinstance(v, (int, float)) and 0 < v < 1 else "|X_S|/d values in (0, 1)"


def _label(v) -> str | None:
    known = [*LDP_ORACLES, *ULDP_ORACLES]
    return None if v in known else f"labels from {known}"


_CHOICES = dict(mechanisms=_label, n=lambda v: None if v >= 1 else "an integer >= 1",
                reps=lambda v: None if v >= 2 else "an integer >= 2 (a standard error needs two repetitions)",
                time_n=lambda v: None if v >= 1 else "an integer >= 1",
                time_max_bits=lambda v: None if v >= 1 else "an integer >= 1",
                sim_max_d=lambda v: None if v >= 2 else "an integer >= 2", ratios=_ratio)

register(Experiment("field-table", "The field's frequency oracles: closed-form and simulated n Var per item, report "
                    "bits, decode time (issue 49)", _FULL, _QUICK, run, takes_data=False, choices=_CHOICES))
