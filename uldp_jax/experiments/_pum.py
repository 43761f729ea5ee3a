"""001's personalized-mechanism study: Fig 8 (eps vs TV), Fig 13 (eps vs MSE), Table 1 (Theorem 1's terms), Fig 9.

The PUM with two semantic tags (home, workplace) runs on ``uldp_jax.data.pum_scenario`` (a synthetic Manhattan
population; the real Foursquare home/workplace tags are not available here) for the three kinds of background
knowledge about the bot distributions: (I) none, (II) the POI distribution of each tag, (III) the true one.

001's model (§6.1): the *population* (all people, 2 x 179,527 in Foursquare) defines the true distributions
``p``, ``r`` and ``pi_k``; a random half of it are the users who report. The error therefore includes the
sampling error of the users, which a non-private collector would also make (the ``no privacy`` rows).

``reps_by_mech`` (e.g. ``{"uRAP": 5}``) gives a mechanism its own repetition count: EM for uRAP runs on every
report (exact product likelihood), one repetition at a time, and converges slowly at small eps.
"""

from __future__ import annotations

import math

import numpy as np

import uldp_jax as ul
from uldp_jax import data as _data
from uldp_jax.experiments import _claims, _common, _plot
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register

_BASES = {"uRR": "urr", "uRAP": "urap"}
_CASE_STYLE = {"I": "emp", "II": "emp+thr", "III": "em"}
Z_LEVEL = 0.05  # one-sided level of the automatic claim checks (Student t with the repetitions' dof)


def population_and_users(cfg: dict, ctx: Context):
    """001's model: a population of ``population`` people and a random half (``n``) of them as users.

    Returns ``(scenario, user_index)``; ``scenario`` holds the whole population.
    """
    pop = cfg.get("population", 2 * cfg["n"])
    sc = _data.pum_scenario(ctx.key(99), n=pop)
    rng = np.random.default_rng(ctx.seed + 12345)
    users = np.sort(rng.choice(pop, cfg["n"], replace=False))
    return sc, users


def _paired_z(a: np.ndarray, b: np.ndarray) -> float:
    """z of mean(a - b) > 0 from paired repetitions (same reports, different prior)."""
    diff = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    if diff.size < 2:
        return float("nan")
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    return float(diff.mean() / se) if se > 0 else float("inf") * np.sign(diff.mean())


def figure(rows: list, title: str, metric: str, d: int):
    """The eps-vs-error figure of 001 Figs 8/13 from the rows ``run`` writes (also from a committed CSV's rows):
    one line per mechanism x case (line style: case (I) dotted, (II) dashed, (III) solid), the non-private error,
    and a labelled ``eps = ln d`` line."""
    curves = [r for r in rows if r["case"] in _CASE_STYLE]
    eps_list = sorted({float(r["eps"]) for r in curves})
    lines = []
    for label in dict.fromkeys(r["mechanism"] for r in curves):
        for case, style in _CASE_STYLE.items():
            pts = {float(r["eps"]): float(r["value"]) for r in curves if r["mechanism"] == label and r["case"] == case}
            if pts:
                lines.append((f"{label} ({case})", label, style, sorted(pts), [pts[e] for e in sorted(pts)]))
    nonpriv = [float(r["value"]) for r in rows if r["mechanism"] == "no privacy"]
    if nonpriv:
        lines.append(("no privacy", "no privacy", "", eps_list, nonpriv * len(eps_list)))
    return _plot.line_panels([(title, lines)], "epsilon", _common.METRIC_AXIS.get(metric, metric.upper()),
                             vlines=[math.log(d)],
                             suptitle="line style: case (I) dotted, (II) dashed, (III) solid; color: mechanism",
                             vline_label=f"eps = ln d = {math.log(d):.2f}")


def run(cfg: dict, ctx: Context) -> Report:
    sc, users = population_and_users(cfg, ctx)
    xs, personal = sc.xs[users], sc.personal[users]
    d = sc.grid**2
    eps_list = sorted(set(cfg["eps"]) | {round(math.log(d), 4)})
    rows, table1, checks = [], [], []
    metric = cfg["metric"]
    score = _common.METRICS[metric]
    mech0 = ul.PUM(d, sc.sensitive, 2, 1.0)
    truth = ul.pum_truth(mech0, sc.xs, sc.personal)  # the population's p, r, pi_k (001's truth)
    user_truth = ul.pum_truth(mech0, xs, personal)
    # Theorem 1's first term l1(r_hat, r) against the population's r: emp's r_hat is unbiased for the users' r, so
    # by Jensen E[first] >= l1(users' r, population's r), the sampling floor of the first term.
    first_floor = float(np.abs(np.asarray(user_truth.r, np.float64) - np.asarray(truth.r, np.float64)).sum())
    priors = {"I": None, "II": sc.poi_prior, "III": "true"}  # "true": the population's pi_k (``population``)
    if metric == "tv":
        nonpriv = float(np.abs(user_truth.p - truth.p).sum() / 2)
    else:
        nonpriv = float(score(np.asarray(user_truth.p), np.asarray(truth.p)))
    with _common.progress(len(cfg["mechanisms"]) * len(eps_list), "001 PUM", ctx.progress) as bar:
        for bi, label in enumerate(cfg["mechanisms"]):
            per_case = {c: [] for c in priors}
            reps = cfg.get("reps_by_mech", {}).get(label, cfg["reps"])
            for ei, e in enumerate(eps_list):
                mech = ul.PUM(d, sc.sensitive, 2, e, base=_BASES[label])
                res = ul.simulate_pum(ctx.key(bi, ei), mech, xs, personal, priors=priors, reps=reps,
                                      method=cfg["method"], population=truth)
                for case in priors:
                    loss = res.losses[case]  # against the population's p, r, pi_k
                    if metric == "tv":
                        err = np.asarray(loss.l1_p) / 2
                    else:
                        err = np.asarray(score(res.estimates[case].p, truth.p))
                    per_case[case].append(err)
                    se = float(err.std(ddof=1) / math.sqrt(reps)) if reps > 1 else float("nan")
                    rows.append(dict(mechanism=label, case=case, eps=e, metric=metric, value=float(err.mean()),
                                     se=se, method=cfg["method"], reps=reps, n=cfg["n"], d=d,
                                     s=len(sc.sensitive)))
                    if abs(e - math.log(d)) < 1e-3:
                        l1, fi, sec = (np.asarray(v, np.float64) for v in (loss.l1_p, loss.first, loss.second))
                        sd = (lambda v: float(v.std(ddof=1) / math.sqrt(reps)) if reps > 1 else float("nan"))
                        table1.append(dict(method=f"{label} ({case})", reps=reps, l1=float(l1.mean()), l1_se=sd(l1),
                                           first=float(fi.mean()), first_se=sd(fi), second=float(sec.mean()),
                                           second_se=sd(sec), first_floor=first_floor,
                                           bound_holds=bool(np.all(l1 <= np.asarray(loss.bound) + 1e-9))))
                bar.update(1, f"{label} eps={e:g}")
            # 001: "(II) lies in between (I) and (III)": one-sided paired z-tests (I) > (II) and (II) > (III).
            for e, a, b, c in zip(eps_list, per_case["I"], per_case["II"], per_case["III"]):
                checks.append((label, e, _paired_z(a, b), _paired_z(b, c), len(a)))
    rows.append(dict(mechanism="no privacy", case="-", eps=float("nan"), metric=metric, value=nonpriv, se=0.0,
                     method="users' empirical distribution", reps=1, n=cfg["n"], d=d, s=len(sc.sensitive)))
    for r in table1:
        rows.append(dict(mechanism=r["method"], case="table1", eps=round(math.log(d), 4), metric="l1/first/second",
                         value=r["l1"], se=r["l1_se"], first=r["first"], first_se=r["first_se"],
                         second=r["second"], second_se=r["second_se"], first_floor=r["first_floor"],
                         bound_holds=r["bound_holds"],
                         reps=r["reps"]))
    fig = figure(rows, f"PUM, synthetic Manhattan (n={cfg['n']} of {sc.n}, d={d}, |X_S|={len(sc.sensitive)})",
                 metric, d)
    notes = [f"Truth: the population's distribution ({sc.n} people); users: a random half (n = {cfg['n']}). "
             f"No-privacy {metric} (users' empirical distribution vs the population): {nonpriv:.3g}."]
    notes.append(f"Table 1 (eps = ln d, {cfg['method']}; 001: uRR l1 0.0673 / 0.0424 / 0.0262, first 0.0270): " +
                 "; ".join(f"{r['method']}: l1 {r['l1']:.3g} +- {r['l1_se']:.1g}, first {r['first']:.3g}, "
                           f"second {r['second']:.3g}{'' if r['bound_holds'] else ' (BOUND VIOLATED)'}"
                           for r in table1))
    crit = {k: _claims.z_one_sided(Z_LEVEL, k - 1) for *_, k in checks if k > 1}  # t with reps - 1 dof
    between = [(lab, e) for lab, e, z12, z23, k in checks if k > 1 and z12 > crit[k] and z23 > crit[k]]
    notes.append(f"001's '(II) lies in between (I) and (III)' (one-sided paired t-tests (I) > (II) and (II) > (III), "
                 f"each at level {Z_LEVEL}, t > " + (", ".join(f"{c:.2f} ({k - 1} dof)" for k, c in crit.items())
                                                     or "-") +
                 f"): holds at {len(between)} of {len(checks)} (mechanism, eps) settings; t per setting: " +
                 ", ".join(f"{lab} {e:g}: {z12:.1f}/{z23:.1f}" for lab, e, z12, z23, _ in checks) + ".")
    table = format_table([r for r in rows if r["case"] not in ("table1", "-")], ("mechanism", "case"), "eps")
    return Report(rows, {f"pum_eps_vs_{metric}": fig}, table, notes,
                  f"PUM scenario: population {sc.n}, users n={cfg['n']}, d={d}, |X_S|={len(sc.sensitive)}, "
                  f"tags={sc.tags}")


def run_fig9(cfg: dict, ctx: Context) -> Report:
    """001 Fig 9: the POI (case II) and true (case III) bot distributions of each tag, as heatmaps."""
    sc, _ = population_and_users(cfg, ctx)
    mech = ul.PUM(sc.d, sc.sensitive, 2, 1.0)
    truth = ul.pum_truth(mech, sc.xs, sc.personal)
    n_k = np.rint(np.asarray(truth.r[sc.d:]) * sc.n).astype(int)  # people mapped to each bot
    rows = []
    for k, tag in enumerate(sc.tags):
        for cell in range(sc.d):
            p_true = float(truth.pi[k, cell])
            rows.append(dict(tag=tag, cell=cell, row=cell // sc.grid, col=cell % sc.grid,
                             poi=float(sc.poi_prior[k, cell]), true=p_true,
                             true_se=math.sqrt(p_true * (1 - p_true) / max(n_k[k], 1))))
    plt = _plot._plt()
    fig, axes = plt.subplots(2, 2, figsize=(8, 7.4))
    for k, tag in enumerate(sc.tags):
        vmax = max(sc.poi_prior[k].max(), truth.pi[k].max())
        for j, (name, arr) in enumerate((("(II) POI", sc.poi_prior[k]), ("(III) true", truth.pi[k]))):
            ax = axes[k][j]
            im = ax.imshow(arr.reshape(sc.grid, sc.grid), cmap="viridis", vmin=0, vmax=vmax, origin="lower")
            ax.set_title(f"{tag}: {name}", fontsize=10)
            ax.set_xticks([])
            ax.set_yticks([])
            fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    tv = [float(np.abs(sc.poi_prior[k] - truth.pi[k]).sum() / 2) for k in range(2)]
    notes = [f"{tag}: {n_k[k]} people mapped to bot_{k + 1}; TV(POI, true) = {tv[k]:.3f}" for k, tag in
             enumerate(sc.tags)]
    table = "\n".join(notes)
    return Report(rows, {"bot_distributions": fig}, table, notes,
                  f"PUM scenario population: {sc.n} people, {sc.grid}x{sc.grid} grid")


_FULL = dict(mechanisms=["uRR", "uRAP"], eps=[0.1, 0.5, 1.0, 2.0, 5.0, 10.0], reps=100, n=179_527,
             population=359_054, method="em", metric="tv")
_QUICK = dict(_FULL, mechanisms=["uRR"], eps=[], reps=3, n=3_000, population=6_000, method="emp")
register(Experiment("001-fig8", "001 Fig 8 + Table 1: PUM eps vs TV, cases (I)/(II)/(III)", _FULL, _QUICK, run,
                    takes_data=False))
register(Experiment("001-fig13", "001 Fig 13: PUM eps vs MSE, cases (I)/(II)/(III)", dict(_FULL, metric="l2sq"),
                    dict(_QUICK, metric="l2sq"), run, takes_data=False))  # 001 App. C: MSE = mean l2 loss
register(Experiment("001-fig9", "001 Fig 9: POI and true bot distributions (home, workplace)",
                    dict(n=179_527, population=359_054), dict(n=3_000, population=6_000), run_fig9,
                    takes_data=False))
