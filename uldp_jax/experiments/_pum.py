"""001's personalized-mechanism study: Fig 8 (eps vs TV), Fig 13 (eps vs MSE) and Table 1 (Theorem 1's terms).

The PUM with two semantic tags (home, workplace) runs on ``uldp_jax.data.pum_scenario`` (a synthetic Manhattan
population with 001's sizes; the real Foursquare home/workplace tags are not available here) for the three
kinds of background knowledge about the bot distributions: (I) none, (II) the POI distribution of each tag,
(III) the true distribution.

``reps_by_mech`` (e.g. ``{"uRAP": 5}``) gives a mechanism its own repetition count: EM for uRAP runs on every
report (exact product likelihood), one repetition at a time, and converges slowly at small eps.
"""

from __future__ import annotations

import math

import numpy as np

import uldp_jax as ul
from uldp_jax import data as _data
from uldp_jax.experiments import _common, _plot
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register

_BASES = {"uRR": "urr", "uRAP": "urap"}
_CASE_STYLE = {"I": "emp", "II": "emp+thr", "III": "em"}


def run(cfg: dict, ctx: Context) -> Report:
    sc = _data.pum_scenario(ctx.key(99), n=cfg["n"])
    d = sc.grid**2
    eps_list = sorted(set(cfg["eps"]) | {round(math.log(d), 4)})
    priors = {"I": None, "II": sc.poi_prior, "III": "true"}
    rows, lines, table1 = [], [], []
    metric = cfg["metric"]
    with _common.progress(len(cfg["mechanisms"]) * len(eps_list), "001 PUM", ctx.progress) as bar:
        for bi, label in enumerate(cfg["mechanisms"]):
            acc = {c: [] for c in priors}
            reps = cfg.get("reps_by_mech", {}).get(label, cfg["reps"])
            for ei, e in enumerate(eps_list):
                mech = ul.PUM(d, sc.sensitive, 2, e, base=_BASES[label])
                res = ul.simulate_pum(ctx.key(bi, ei), mech, sc.xs, sc.personal, priors=priors, reps=reps,
                                      method=cfg["method"])
                for case in priors:
                    loss = res.losses[case]
                    if metric == "tv":
                        err = np.asarray(loss.l1_p) / 2
                    else:
                        err = np.asarray(_common.METRICS[metric](res.estimates[case].p, res.truth.p))
                    acc[case].append(float(err.mean()))
                    rows.append(dict(mechanism=label, case=case, eps=e, metric=metric, value=float(err.mean()),
                                     method=cfg["method"], reps=reps, n=cfg["n"], d=d, s=len(sc.sensitive)))
                    if abs(e - math.log(d)) < 1e-3:
                        table1.append(dict(method=f"{label} ({case})", reps=reps, l1=float(np.mean(loss.l1_p)),
                                           first=float(np.mean(loss.first)), second=float(np.mean(loss.second)),
                                           bound_holds=bool(np.all(np.asarray(loss.l1_p) <= np.asarray(loss.bound)
                                                                   + 1e-9))))
                bar.update(1, f"{label} eps={e:g}")
            lines += [(f"{label} ({case})", label, _CASE_STYLE[case], eps_list, acc[case]) for case in priors]
    for r in table1:
        rows.append(dict(mechanism=r["method"], case="table1", eps=round(math.log(d), 4), metric="l1/first/second",
                         value=r["l1"], first=r["first"], second=r["second"], bound_holds=r["bound_holds"],
                         reps=r["reps"]))
    fig = _plot.line_panels([(f"PUM, synthetic Manhattan (n={cfg['n']}, d={d}, |X_S|={len(sc.sensitive)})", lines)],
                            "epsilon", metric.upper(), vlines=[math.log(d)])
    notes = [f"Table 1 (eps = ln d, {cfg['method']}): " + "; ".join(
        f"{r['method']}: l1 {r['l1']:.3g}, first {r['first']:.3g}, second {r['second']:.3g}"
        f"{'' if r['bound_holds'] else ' (BOUND VIOLATED)'}" for r in table1)]
    cases_ok = all(r1["l1"] >= r3["l1"] for r1, r3 in zip(table1[0::3], table1[2::3]))
    notes.append(f"(III) true prior at most (I) no prior at eps = ln d for every mechanism: {cases_ok} "
                 "(001: (II) lies between (I) and (III)).")
    table = format_table([r for r in rows if r["case"] != "table1"], ("mechanism", "case"), "eps")
    return Report(rows, {f"pum_eps_vs_{metric}": fig}, table, notes,
                  f"PUM scenario: n={cfg['n']}, d={d}, |X_S|={len(sc.sensitive)}, tags={sc.tags}")


_FULL = dict(mechanisms=["uRR", "uRAP"], eps=[0.1, 0.5, 1.0, 2.0, 5.0, 10.0], reps=20, n=179_527, method="em",
             metric="tv")
_QUICK = dict(_FULL, mechanisms=["uRR"], eps=[], reps=2, n=3_000, method="emp")
register(Experiment("001-fig8", "001 Fig 8 + Table 1: PUM eps vs TV, cases (I)/(II)/(III)", _FULL, _QUICK, run,
                    takes_data=False))
register(Experiment("001-fig13", "001 Fig 13: PUM eps vs MSE, cases (I)/(II)/(III)", dict(_FULL, metric="l2sq"),
                    dict(_QUICK, metric="l2sq"), run, takes_data=False))  # 001 App. C: MSE = mean l2 loss
