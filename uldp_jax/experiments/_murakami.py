"""001 (Murakami & Kawamoto, ULDP) reproductions: Fig 5/10 (eps), Fig 6/11 (|X_S|), Fig 7/12 (attributes), demo.

Every sweep is declared as ``ul.study`` calls under 001's sampling model (``_murakami_study``: a random ``n`` of
the population's people report, scored against the population's distribution; ``--set sample=iid`` is the
labelled iid extra). This module holds the data (configs, datasets, panels) and 001's claims.
"""

from __future__ import annotations

import math

import numpy as np

from uldp_jax.experiments import _claims, _common, _datasets, _plot
from uldp_jax.experiments import _murakami_study as S
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register

MECHS = ["RR", "RAPPOR", "uRR", "uRAP"]
EPS_001 = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]


def _label(mech: str, method: str) -> str:
    return mech if not method else f"{mech} ({_common.METHOD_LABELS.get(method, method)})"


def _skipped(cfg: dict, methods: tuple) -> list:
    miss = [m for m in cfg["methods"] if m not in methods]
    out = [f"estimation method(s) {', '.join(miss)} not available in this build; omitted"] if miss else []
    rr = S.report_reps(cfg)
    if "em" in methods and not rr:
        out.append("EM for RAPPOR/uRAP needs every report (exact product likelihood); skipped here "
                   "(--set report_reps=N with N > 0); EM for RR/uRR runs on the output histogram.")
    elif "em" in methods:
        out.append(f"EM for RAPPOR/uRAP (ul.study, exact per-report likelihood) on {rr} of {cfg.get('reps')} "
                   "repetitions; EM for RR/uRR on the output histogram of every repetition.")
    return out


def _data(ds, cfg: dict) -> tuple[dict, dict, int | None, str]:
    """``(study data, no-privacy data, population size, model line)`` of one dataset under the config's model."""
    if S.check_sample(cfg) == "iid":
        return dict(p=ds.p), dict(p=ds.p), None, S.model_text("iid", ds.n, 0)
    xs = S.population(ds, ds.n, cfg.get("population", 0))
    counts = np.bincount(xs, minlength=ds.d)
    return dict(xs=xs), dict(counts=counts), int(xs.size), S.model_text("population", ds.n, int(xs.size))


def _nonprivate_rows(key, ds, cfg, nopd, xs_axis, extra, metric) -> tuple[float, list]:
    mean, se, draws = S.nonprivate(key, ds.n, cfg["reps"] * cfg.get("cases", 1), metric, **nopd)
    r = dict(mechanism="no privacy", method="", mean=mean, se=se, reps=draws, theory=math.nan, z=math.nan,
             sample=S.check_sample(cfg))
    return mean, [S.row(dict(r, eps=e), metric, **extra) for e in xs_axis]


def _figure_name(cfg: dict, metric: str, stem: str) -> str:
    """The config's figure name for its first metric, ``stem + metric`` for the others."""
    return cfg.get("figure", stem + metric) if metric == S.metrics(cfg)[0] else stem + metric


def _row_keys(cfg: dict, keys: tuple) -> tuple:
    return (("metric",) if len(S.metrics(cfg)) > 1 else ()) + keys


def _tagged(cfg: dict, metric: str, lines: list) -> list:
    """Summary lines prefixed with ``[metric]`` when the run scores several metrics."""
    return [(f"[{metric}] " if len(S.metrics(cfg)) > 1 else "") + ln for ln in lines]


def _lines(study_rows: list, mechs, methods, key: str = "eps", **match) -> list:
    """Plot lines ``(label, mech, method, x, y)`` from study rows (one per mechanism x method present)."""
    out = []
    for mech in mechs:
        for m in methods:
            pts = sorted((r[key], r["mean"]) for r in study_rows if r["mechanism"] == mech and r["method"] == m
                         and all(r.get(k) == v for k, v in match.items()))
            if pts:
                out.append((_label(mech, m), mech, m, [x for x, _ in pts], [y for _, y in pts]))
    return out


def run_eps(cfg: dict, ctx: Context) -> Report:
    """001 Fig 5 (TV) / Fig 10 (MSE): eps vs error for RR/RAPPOR/uRR/uRAP x emp/emp+thr/EM, plus no privacy.

    ``metric`` may list several metrics (``--set metric=tv,l2sq``: Figs 5 and 10 from one run's estimates)."""
    datasets = _datasets.resolve(cfg["datasets"], ctx.data, cfg.get("n"))
    methods = _common.available_methods(cfg["methods"])
    metrics = S.metrics(cfg)
    rows, vlines, notes, models = [], [], _skipped(cfg, methods), []
    panels: dict = {mt: [] for mt in metrics}
    with _common.progress(len(datasets), cfg.get("title", "eps sweep"), ctx.progress) as bar:
        for di, ds in enumerate(datasets):
            eps = sorted(set(cfg["eps"]) | {round(math.log(ds.d), 4)})
            data, nopd, size, model = _data(ds, cfg)
            models.append(f"{ds.name}: {model}")
            extra = dict(dataset=ds.name, n=ds.n, d=ds.d, s=ds.s, population=size)
            study_rows = S.curves(ctx.key(di), cfg["mechanisms"], ds.d, ds.sensitive, eps, ds.n, cfg, **data)
            for mt in metrics:
                npm, np_rows = _nonprivate_rows(ctx.key(di, 10_000), ds, cfg, nopd, eps, extra, mt)
                mrows = [r for r in study_rows if r["metric"] == mt]
                rows += np_rows + [S.row(r, mt, **extra) for r in mrows]
                lines = [("no privacy", "no privacy", "", eps, [npm] * len(eps))]
                lines += _lines(mrows, cfg["mechanisms"], methods)
                panels[mt].append((f"{ds.name} ({ds.source}): d={ds.d}, |X_S|={ds.s}, n={ds.n}", lines))
                notes += _tagged(cfg, mt, _eps_checks([r for r in rows if r["metric"] == mt], ds, mt))
            vlines.append(math.log(ds.d))
            bar.update(1, ds.name)
    figs = {_figure_name(cfg, mt, "eps_vs_"): _plot.line_panels(panels[mt], "epsilon",
                                                                _common.METRIC_AXIS.get(mt, mt.upper()), vlines=vlines)
            for mt in metrics}
    label = " / ".join(_common.METRIC_AXIS.get(mt, mt) for mt in metrics)
    table = (f"{label}, mean of {cfg['reps']} repetitions, against eps (columns); emp is not projected (its "
             "entries can be negative), so its TV can exceed 1:\n"
             + format_table(rows, _row_keys(cfg, ("dataset", "mechanism", "method")), "eps"))
    return Report(rows, figs, table, notes, "; ".join([ds.summary() for ds in datasets] + models))


def _best(rows, ds_name, mech, eps):
    """(value, se, reps) of the lowest-error estimator of ``mech`` at ``eps`` (nan when absent)."""
    vals = [(r["value"], math.nan if r.get("se") is None else r["se"], _se_sample(r)) for r in rows
            if r["dataset"] == ds_name and r["mechanism"] == mech and abs(r["eps"] - eps) < 1e-9]
    return min(vals) if vals else (float("nan"), float("nan"), 0)


def _z(a: tuple, b: tuple) -> float:
    """t statistic of mean a - mean b from two independent (mean, se, reps) triples."""
    se = math.hypot(a[1], b[1])
    return (a[0] - b[0]) / se if se > 0 else float("nan")


def _crit(a: tuple, b: tuple, alpha: float) -> tuple[float, int | None]:
    """One-sided critical value at ``alpha`` for ``_z(a, b)``: Student t with the smaller sample's ``reps - 1``
    degrees of freedom (conservative; each se comes from its own repetitions), ``(value, dof)``; normal (``dof``
    None) when a row does not give its repetitions (an old CSV)."""
    dof = _claims.sample_dof([a, b])
    return _claims.z_one_sided(alpha, dof), dof


def _eps_checks(rows, ds, metric) -> list:
    """001's qualitative claims, evaluated on this run with z-tests (level 0.05)."""
    lnd = round(math.log(ds.d), 4)
    out = []
    nop = _best(rows, ds.name, "no privacy", lnd)
    urr = _best(rows, ds.name, "uRR", lnd)
    if np.isfinite(urr[0]):
        z = _z(urr, nop)
        crit, dof = _crit(urr, nop, 0.025)
        out.append(f"{ds.name}: at eps = ln d = {lnd:.2f}, best uRR {metric} = {urr[0]:.3g} vs no privacy {nop[0]:.3g} "
                   f"(ratio {urr[0] / nop[0]:.2f}; "
                   + ("no standard error: one repetition, not tested" if not np.isfinite(z) else
                      f"two-sided {'z-test' if dof is None else f't-test ({dof} dof)'} of equal error, level 0.05: "
                      f"t = {z:.1f}, "
                      f"{'not distinguishable' if abs(z) < crit else 'different'}")
                   + "; 001: 'almost the same').")
    eps = sorted({r["eps"] for r in rows if r["dataset"] == ds.name})
    for e in (eps[0], lnd):
        best = {m: _best(rows, ds.name, m, e) for m in MECHS}
        best = {k: v for k, v in best.items() if np.isfinite(v[0])}
        if len(best) > 1:
            order = sorted(best, key=lambda k: best[k][0])
            z = _z(best[order[1]], best[order[0]])
            crit, dof = _crit(best[order[1]], best[order[0]], 0.05)
            head = (f"{ds.name}: best mechanism at eps = {e:g}: {order[0]} ({best[order[0]][0]:.3g}); ahead of "
                    f"{order[1]} ({best[order[1]][0]:.3g})")
            out.append(head + (" (no standard error: one repetition; not tested)." if not np.isfinite(z) else
                               f" by t = {z:.1f} (one-sided {'z-test' if dof is None else f't-test, {dof} dof'}, "
                               f"level 0.05, critical {crit:.2f}: "
                               f"{'significant' if z > crit else 'not significant'})."))
    return out


def run_sensitive(cfg: dict, ctx: Context) -> Report:
    """001 Fig 6 (TV) / Fig 11 (MSE): |X_S| vs error at eps = 0.1 and ln d, X_S drawn at random.

    Each of ``cases`` random sensitive sets gets ``reps`` repetitions (001: 100 sets x 1): one ``ul.study`` per
    case over eps x |X_S|. A random X_S is the same as X_S = {0..s-1} with the items randomly relabelled (the
    population's people, or p's entries in the iid model), so the grid of s is static data of the mechanisms.
    The standard error is over the cases (it includes the repetitions' noise); with one case, the study's.
    """
    datasets = _datasets.resolve(cfg["datasets"], ctx.data, cfg.get("n"))
    methods = _common.available_methods(cfg["methods"])
    metrics, cases = S.metrics(cfg), cfg["cases"]
    rows, notes, models = [], _skipped(cfg, methods), []
    panels: dict = {mt: [] for mt in metrics}
    with _common.progress(len(datasets) * cases, cfg.get("title", "|X_S| sweep"), ctx.progress) as bar:
        for di, ds in enumerate(datasets):
            eps = [e if e != "ln d" else round(math.log(ds.d), 4) for e in cfg["eps"]]
            s_values = [s for s in cfg["s_values"] if s <= ds.d]
            rng = np.random.default_rng(ctx.seed + di)
            perms = [rng.permutation(ds.d) for _ in range(cases)]
            data, nopd, size, model = _data(ds, cfg)
            models.append(f"{ds.name}: {model}")
            acc: dict = {}
            for c, perm in enumerate(perms):
                inv = np.argsort(perm).astype(np.int32)
                cdata = dict(xs=inv[data["xs"]]) if "xs" in data else dict(p=ds.p[perm])
                for r in S.curves(ctx.key(di, c), cfg["mechanisms"], ds.d, ds.sensitive, eps, ds.n, cfg,
                                  s_values=s_values, **cdata):
                    for s in (s_values if r.get("s") is None else [r["s"]]):  # RR/RAPPOR: no X_S
                        acc.setdefault((r["metric"], r["eps"], s, r["mechanism"], r["method"]), []).append(r)
                bar.update(1, f"{ds.name} case {c + 1}/{cases}")
            for mt in metrics:
                npm, _ = _nonprivate_rows(ctx.key(di, 10_000), ds, cfg, nopd, [], {}, mt)
                summ = []
                for (metric, e, s, mech, m), rs in acc.items():
                    if metric != mt:
                        continue
                    means = np.array([r["mean"] for r in rs])
                    se = means.std(ddof=1) / math.sqrt(len(means)) if len(means) > 1 else rs[0]["se"]
                    summ.append(dict(rs[0], eps=e, s=s, mean=float(means.mean()), se=se, theory=math.nan, z=math.nan))
                    rows.append(S.row(summ[-1], mt, dataset=ds.name, s=s, cases=cases, n=ds.n, d=ds.d,
                                      population=size))
                for e in eps:
                    lines = [("no privacy", "no privacy", "", s_values, [npm] * len(s_values))]
                    lines += _lines(summ, cfg["mechanisms"], methods, key="s", eps=e)
                    panels[mt].append((f"{ds.name}: eps = {e:g}", lines))
                notes.append(f"{ds.name}: no privacy {npm:.3g}" + (f" ({mt})." if len(metrics) > 1 else "."))
    for mt in metrics:
        notes += _tagged(cfg, mt, sweep_checks([r for r in rows if r["metric"] == mt], "s"))
    figs = {_figure_name(cfg, mt, "sensitive_vs_"): _plot.line_panels(panels[mt], "|X_S|",
                                                                      _common.METRIC_AXIS.get(mt, mt.upper()))
            for mt in metrics}
    table = format_table(rows, _row_keys(cfg, ("dataset", "eps", "mechanism", "method")), "s")
    return Report(rows, figs, table, notes, "; ".join([ds.summary() for ds in datasets] + models))


def sweep_checks(rows: list, key: str) -> list:
    """001's "best mechanism" at both ends of a |X_S| (``key="s"``) or attribute sweep, per dataset and eps, as a
    test (``_claims.best``: one-sided t-tests of the best mechanism against each other one, family level 0.05,
    Bonferroni, with the smallest sample's ``reps - 1`` (or ``cases - 1``) degrees of freedom). Each mechanism
    enters with its lowest-error estimator (a selection the test does not correct for).
    ``rows``: the CSV's rows (``value``, ``se``; a missing se leaves the claim untested), so it rescores a
    committed CSV too (``experiments/rescore_001_eps.py``)."""
    out = []
    group = (lambda r: "census") if key == "attributes" else (lambda r: r["dataset"])  # one census per count
    for ds in dict.fromkeys(group(r) for r in rows):
        for e in dict.fromkeys(float(r["eps"]) for r in rows if group(r) == ds):
            at_e = [r for r in rows if group(r) == ds and float(r["eps"]) == e and r["mechanism"] in MECHS]
            xs = sorted({int(r[key]) for r in at_e})
            for x in dict.fromkeys((xs[0], xs[-1])):
                vals = {}
                for m in MECHS:
                    cand = [(float(r["value"]), float("nan") if r["se"] in (None, "") else float(r["se"]),
                             r["method"], _se_sample(r)) for r in at_e if r["mechanism"] == m and int(r[key]) == x]
                    if cand:
                        v = min(cand)
                        vals[f"{m} ({v[2]})"] = (v[0], v[1], v[3])  # (mean, se, sample): best() takes t's dof
                where = f"|X_S| = {x}" if key == "s" else f"{x} attributes"
                if any(math.isnan(v[1]) for v in vals.values()):
                    best = min(vals, key=lambda k: vals[k][0])
                    out.append(f"{ds}, eps = {e:g}, {where}: lowest {best} ({vals[best][0]:.3g}); no standard "
                               "error (one repetition), not tested.")
                else:
                    out.append(f"{ds}, eps = {e:g}, {where}: " + _claims.best(
                        vals, name="mechanism (each at its lowest-error estimator)"))
    return out


def _se_sample(row: dict) -> int:
    """How many values a row's se comes from: its cases when more than one (Fig 6: se over the random X_S), else
    its repetitions; 0 when the row does not say (an old CSV: the claim falls back to the normal test)."""
    def num(k):
        try:
            return int(float(row.get(k) or 0))
        except ValueError:
            return 0
    return num("cases") if num("cases") > 1 else num("reps")


def run_attributes(cfg: dict, ctx: Context) -> Report:
    """001 Fig 7 (TV) / Fig 12 (MSE): number of census attributes (4..9) vs error at eps = 0.1, 1, 6.

    001 draws n = 240,000 of the census's 2,458,285 people (config ``population``) each repetition.
    """
    methods = _common.available_methods(cfg["methods"])
    metrics, attrs = S.metrics(cfg), cfg["attributes"]
    names = ["census" if a == 4 else f"census{a}" for a in attrs]
    datasets = _datasets.resolve(names, ctx.data, cfg.get("n"))
    rows, notes, models, summ = [], _skipped(cfg, methods), [], []
    nop: dict = {mt: [] for mt in metrics}
    with _common.progress(len(datasets), cfg.get("title", "attributes"), ctx.progress) as bar:
        for di, (a, ds) in enumerate(zip(attrs, datasets)):
            data, nopd, size, model = _data(ds, cfg)
            models.append(f"{a} attributes: {model}")
            for mt in metrics:
                nop[mt].append(_nonprivate_rows(ctx.key(di, 10_000), ds, cfg, nopd, [], {}, mt)[0])
            for r in S.curves(ctx.key(di), cfg["mechanisms"], ds.d, ds.sensitive, cfg["eps"], ds.n, cfg, **data):
                summ.append(dict(r, attributes=a))
                rows.append(S.row(r, r["metric"], dataset=ds.name, attributes=a, n=ds.n, d=ds.d, s=ds.s,
                                  population=size))
            bar.update(1, f"{a} attrs")
    figs = {}
    for mt in metrics:
        panels = []
        for e in cfg["eps"]:
            lines = [("no privacy", "no privacy", "", attrs, nop[mt])]
            lines += _lines(summ, cfg["mechanisms"], methods, key="attributes", eps=e, metric=mt)
            panels.append((f"census: eps = {e:g}", lines))
        notes += _tagged(cfg, mt, sweep_checks([r for r in rows if r["metric"] == mt], "attributes"))
        figs[_figure_name(cfg, mt, "attributes_vs_")] = _plot.line_panels(
            panels, "number of attributes", _common.METRIC_AXIS.get(mt, mt.upper()), logx=False)
    table = format_table(rows, _row_keys(cfg, ("eps", "mechanism", "method")), "attributes")
    return Report(rows, figs, table, notes, "; ".join([ds.summary() for ds in datasets] + models))


_M = ["emp", "emp+thr", "em"]
# Every mechanism takes the exact counts path for its statistics (path "auto"; ul.fastpath); EM for RAPPOR/uRAP
# (001 shows it in Figs 5-7, 10-12) runs on every report (per-user path) on every repetition by default.
# sample="population" is 001's model; population = 0 means 2 n people (a random half reports).
_MODEL = dict(sample="population", population=0, path="auto")
_FIG5 = dict(datasets=["foursquare", "census"], mechanisms=MECHS, methods=_M, eps=EPS_001, reps=100, metric=["tv"],
             report_reps="all", **_MODEL)
# The quick configs give report_reps as a number (every repetition), so `--set report_reps=N` parses as one.
# The quick configs keep every mechanism 001's claims compare (RR, RAPPOR, uRR, uRAP) at a smaller n: a CI run can
# still test that the utility-optimized mechanisms win.
_FIG5Q = dict(_FIG5, datasets=["foursquare"], eps=[0.5], reps=2, n=1_000, report_reps=2)
_FIG6 = dict(datasets=["foursquare", "census"], mechanisms=MECHS, methods=_M, eps=[0.1, "ln d"],
             s_values=[1, 2, 5, 10, 20, 50, 100, 200, 400, 625], cases=100, reps=1, metric=["tv"],
             report_reps="all", **_MODEL)
_FIG6Q = dict(_FIG6, datasets=["foursquare"], methods=["emp", "emp+thr"], s_values=[1, 100], cases=2,
              reps=1, n=1_000, report_reps=1)
_FIG7 = dict(attributes=[4, 5, 6, 7, 8, 9], mechanisms=MECHS, methods=["emp", "emp+thr", "em"], eps=[0.1, 1.0, 6.0],
             reps=10, metric=["tv"], n=240_000, report_reps="all", **dict(_MODEL, population=2_458_285))
_FIG7Q = dict(_FIG7, attributes=[4, 5], eps=[1.0], mechanisms=["uRR"], methods=["emp"], reps=2, n=2_000,
              population=0, report_reps=2)
# The demo keeps to ~2 minutes on 2 cores: EM for RAPPOR/uRAP (~20 s per repetition and eps for uRAP, more for
# RAPPOR, at n = 1e5; experiments/demo/NOTES.md) does not fit, so it is off (report_reps = 0; emp+thr stands in and
# run_config.json says so); `python experiments/reproduce.py demo --set report_reps=1` (or `uldp demo --set
# report_reps=1`) runs it on 1 repetition.
_DEMO = dict(_FIG5, datasets=["foursquare"], eps=[0.1, 0.5, 1.0, 2.0, 5.0, 10.0], reps=5, n=100_000,
             title="demo (001 Fig 5, reduced)", figure="demo_eps_vs_tv", report_reps=0)
_DEMOQ = dict(_DEMO, mechanisms=["uRR", "uRAP"], methods=["emp", "emp+thr"], eps=[5.0], reps=2, n=2_000)


def _mse(cfg):
    """001 App. C's "MSE": the sample mean of the l2 loss ``sum_x (p_hat(x) - p(x))^2`` (not the per-item mean)."""
    return dict(cfg, metric=["l2sq"])


def _NO_BITS_EM(cfg: dict) -> list:
    """001 shows EM for all four mechanisms; RAPPOR/uRAP EM needs every report (``report_reps`` repetitions).
    A run under the iid model says so (001's model is a random subset of the population)."""
    rr = S.report_reps(cfg)
    out = ([] if S.check_sample(cfg) == "population" else
           ["sample: iid (001: a random half of the population reports, scored against the population)"])
    if rr >= cfg.get("reps", 1):
        return out
    if rr:
        return out + [f"methods: EM for RAPPOR/uRAP on {rr} of {cfg.get('reps')} repetitions (report_reps)"]
    return out + ["methods: no EM for RAPPOR/uRAP (it needs every report; --set report_reps=N); emp+thr stands in "
                  "(001: 'very close' to EM)"]


def _demo_deviations(cfg: dict) -> list:
    size = cfg.get("population") or 2 * cfg.get("n")
    return ([f"n: {cfg.get('n')} of a population of {size} (001 Fig 5: 179,527 of 359,054)",
             f"reps: {cfg.get('reps')} (001: 100)", "datasets: Foursquare only (001 Fig 5: Foursquare and Census)",
             "eps: 6 values (001 Fig 5: 0.1 to 10 with ln d)"] + _NO_BITS_EM(cfg))


# Values the runs read by name (--set checks them before anything runs).
_CHOICES = dict(mechanisms=tuple(MECHS), metric=tuple(_common.METRIC_AXIS))

register(Experiment("demo", "reduced 001 Fig 5 on the Foursquare proxy (eps vs TV)", _DEMO, _DEMOQ, run_eps,
                    paper_deviations=_demo_deviations, choices=_CHOICES))
register(Experiment("001-fig5", "001 Fig 5: eps vs TV (common mechanism)", _FIG5, _FIG5Q, run_eps,
                    paper_deviations=_NO_BITS_EM, choices=_CHOICES))
register(Experiment("001-fig10", "001 Fig 10: eps vs MSE (common mechanism)", _mse(_FIG5), _mse(_FIG5Q), run_eps,
                    paper_deviations=_NO_BITS_EM, choices=_CHOICES))
register(Experiment("001-fig6", "001 Fig 6: |X_S| vs TV at eps = 0.1 and ln d", _FIG6, _FIG6Q, run_sensitive,
                    paper_deviations=_NO_BITS_EM, choices=_CHOICES))
register(Experiment("001-fig11", "001 Fig 11: |X_S| vs MSE at eps = 0.1 and ln d", _mse(_FIG6), _mse(_FIG6Q),
                    run_sensitive, paper_deviations=_NO_BITS_EM, choices=_CHOICES))
register(Experiment("001-fig7", "001 Fig 7: number of census attributes vs TV", _FIG7, _FIG7Q, run_attributes,
                    paper_deviations=_NO_BITS_EM, choices=_CHOICES))
register(Experiment("001-fig12", "001 Fig 12: number of census attributes vs MSE", _mse(_FIG7), _mse(_FIG7Q),
                    run_attributes, paper_deviations=_NO_BITS_EM, choices=_CHOICES))
