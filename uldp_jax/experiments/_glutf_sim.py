"""003's simulated figures: Fig 4 (eps vs MSE), Fig 8 (MAE), Fig 9 (top-30 F1 / NDCG), and ``003-sims`` (all four
metrics from one simulation per setting).

Each dataset is one ``ul.study`` (mechanisms x eps, the fixed model, the emp estimator): the study groups the
eps points that share static parameters into one engine call (GLUTF mechanisms whose static parameters follow eps
get one call per eps), and scores every setting's estimates with every metric in ``cfg["metric"]`` (a name or a
list), so the four figures cost one set of simulations. Top-k metrics are skipped on datasets with fewer than k items (Drug, d = 10;
003 Fig 9 leaves Drug out too).
"""

from __future__ import annotations

import statistics

import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _common, _datasets, _plot, _studies
from uldp_jax.experiments._glutf import (_DS, EPS_003, FIXED_SIM, GLUTF_MECHS, MSE_SUM, PUBLISHED, _ranking,
                                         fixed_users, make)
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register


def _applies(metric: str, d: int) -> bool:
    """Top-``k`` metrics (``"f1@30"``) need at least ``k`` items."""
    return "@" not in metric or d >= int(metric.split("@")[1])


def _fig_name(metric: str) -> str:
    return f"eps_vs_{metric.replace('@', '_at_')}"


def _factory(label: str, ds):
    """``eps -> mechanism``: 003's ``label`` in dataset ``ds``'s setting (a study's mechanism factory)."""
    return lambda eps: make(label, ds.d, ds.sensitive, eps, ds.theta_n)


def run_eps(cfg: dict, ctx: Context) -> Report:
    """003 Fig 4 (MSE) / Fig 8 (MAE) / Fig 9 (F1, NDCG): eps vs each metric, simulated.

    One ``ul.study`` per dataset: 003's mechanisms x eps, the fixed model (``xs`` = 003's users), ``reps``
    repetitions, the emp estimator, every metric of ``cfg["metric"]`` scored on the same estimates; the study's
    ``theory`` / ``z`` columns are the MSE closed form and the z-score of the simulated mean against it.
    """
    datasets = _datasets.resolve(cfg["datasets"], ctx.data, cfg.get("n"))
    metrics = [cfg["metric"]] if isinstance(cfg["metric"], str) else list(cfg["metric"])
    labels = cfg["mechanisms"] + cfg.get("published", [])
    rows, notes = [], []
    panels: dict = {m: [] for m in metrics}
    with _common.progress(len(datasets), cfg.get("title", "003 eps sweep"), ctx.progress) as bar:
        for di, ds in enumerate(datasets):
            xs = fixed_users(ds.p, ds.n)
            ms = [m for m in metrics if _applies(m, ds.d)]
            res = ul.study(ctx.key(di), {label: _factory(label, ds) for label in labels}, eps=cfg["eps"],
                           xs=xs, sample="fixed", reps=cfg["reps"], methods=("emp",),
                           metrics=_studies.study_metrics(ms),
                           simulate_options=_common._simulate_kwargs(cfg.get("path")))
            mine = _studies.rows(res, dataset=ds.name)
            for r in mine:
                r.update(d=ds.d, s=ds.s)
                if r["metric"] == "mse":  # 003's unit: the sum over items (003 eq 28)
                    r.update(value_sum=r["value"] * ds.d, se_sum=r["se"] * ds.d, theory_sum=r["theory"] * ds.d)
            rows += mine
            for metric in ms:
                scale = ds.d if metric == "mse" else 1
                lines = [(label, label.split(" ")[0], "emp" if label in cfg["mechanisms"] else "emp+thr", cfg["eps"],
                          [r["value"] * scale for r in mine if r["mechanism"] == label and r["metric"] == metric])
                         for label in labels]
                panels[metric].append((f"{ds.name}: d={ds.d}, s={ds.s}, n={xs.size}", lines))
                notes += _ranking([r for r in mine if r["metric"] == metric], ds.name, cfg["mechanisms"], cfg["eps"],
                                  metric)
            bar.update(1, f"{ds.name} ({res.timing['wall_s']:.0f} s)")
    mse_rows = [r for r in rows if r["metric"] == "mse" and r["mechanism"] in cfg["mechanisms"]
                and np.isfinite(r["z"]) and r["theory"] > 0]
    if mse_rows and cfg["reps"] >= 10:  # z-test of "simulated MSE = closed form" (Bonferroni); >= 10 reps for the SE
        crit = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * len(mse_rows)))
        worst = max(mse_rows, key=lambda r: abs(r["z"]))
        bad = sum(abs(r["z"]) > crit for r in mse_rows)
        notes.append(f"simulated MSE = closed form (two-sided z-tests, family level 0.05 with Bonferroni over "
                     f"{len(mse_rows)} settings, |z| > {crit:.2f} rejects): {bad} rejected; largest |z| = "
                     f"{abs(worst['z']):.2f} ({worst['dataset']}, {worst['mechanism']}, eps={worst['eps']}).")
    figs = {_fig_name(m): _plot.line_panels(panels[m], "epsilon", MSE_SUM if m == "mse" else m.upper(), logx=False,
                                            logy=m not in _common.HIGHER_IS_BETTER, suptitle=_STYLE_NOTE)
            for m in metrics if panels[m]}
    keys = ("dataset", "mechanism") if len(metrics) == 1 else ("metric", "dataset", "mechanism")
    table = format_table(rows, keys, "eps")
    return Report(rows, figs, table, list(dict.fromkeys(notes)),
                  FIXED_SIM + "; ".join(ds.summary() for ds in datasets))


_STYLE_NOTE = "dotted: simulated emp of the corrected mechanisms; dashed: 003's published z (exceeds eps)"


_FIG4 = dict(datasets=_DS, mechanisms=GLUTF_MECHS, published=list(PUBLISHED), eps=EPS_003, reps=50,
             metric="mse", title="003 Fig 4")
_FIG4Q = dict(_FIG4, datasets=["drug"], mechanisms=["uSS"], published=["uLH (published z)"], eps=[2.0], reps=2,
              n=2_000)
_FIG9 = dict(_FIG4, datasets=["foursquare25", "census1200", "normal"], metric="f1@30", title="003 Fig 9")
_SIMS = dict(_FIG4, metric=["mse", "mae", "f1@30", "ndcg@30"], title="003 Figs 4/8/9")
_SIMSQ = dict(_FIG4Q, datasets=["drug", "foursquare25"], metric=["mse", "mae", "f1@30", "ndcg@30"],
              published=[], n=1_000)

register(Experiment("003-fig4", "003 Fig 4: eps vs MSE on Foursquare/Census/Drug/Normal (simulated)", _FIG4, _FIG4Q,
                    run_eps))
register(Experiment("003-fig8", "003 Fig 8: eps vs MAE (simulated)", dict(_FIG4, metric="mae", title="003 Fig 8"),
                    dict(_FIG4Q, metric="mae"), run_eps))
register(Experiment("003-fig9", "003 Fig 9: top-30 F1 (frequent items, simulated)", _FIG9,
                    dict(_FIG4Q, datasets=["foursquare25"], metric="f1@30"), run_eps))
register(Experiment("003-fig9-ndcg", "003 Fig 9: top-30 NDCG (frequent items, simulated)",
                    dict(_FIG9, metric="ndcg@30"), dict(_FIG4Q, datasets=["foursquare25"], metric="ndcg@30"),
                    run_eps))
register(Experiment("003-sims", "003 Figs 4, 8, 9: eps vs MSE, MAE, top-30 F1 and NDCG from one simulation per "
                    "setting", _SIMS, _SIMSQ, run_eps))
