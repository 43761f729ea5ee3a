"""001 (Murakami & Kawamoto, ULDP) reproductions: Fig 5/10 (eps), Fig 6/11 (|X_S|), Fig 7/12 (attributes)."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.simulate import _engine as engine
from uldp_jax.experiments import _common, _datasets, _plot
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register

MECHS = ["RR", "RAPPOR", "uRR", "uRAP"]
EPS_001 = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]


def _label(mech: str, method: str) -> str:
    return mech if not method else f"{mech} ({_common.METHOD_LABELS.get(method, method)})"


def _report_reps(cfg: dict) -> int:
    """Repetitions of the report-based methods (EM for RAPPOR/uRAP): ``report_reps`` = "all" (the default of the
    registered configs: every repetition, as 001) or a number (capped at ``reps``)."""
    rr = cfg.get("report_reps", 0) or 0
    return int(cfg.get("reps", 1)) if rr == "all" else min(int(rr), int(cfg.get("reps", 1)))


def _skipped(cfg: dict, methods: tuple) -> list:
    miss = [m for m in cfg["methods"] if m not in methods]
    out = [f"estimation method(s) {', '.join(miss)} not available in this build; omitted"] if miss else []
    rr = _report_reps(cfg)
    if "em" in methods and not rr:
        out.append("EM for RAPPOR/uRAP needs every report (exact product likelihood); skipped here "
                   "(--set report_reps=N with N > 0); EM for RR/uRR runs on the output histogram.")
    elif "em" in methods:
        out.append(f"EM for RAPPOR/uRAP (ul.simulate, exact per-report likelihood) on {rr} of {cfg.get('reps')} "
                   "repetitions; EM for RR/uRR on the output histogram of every repetition.")
    return out


def run_eps(cfg: dict, ctx: Context) -> Report:
    """001 Fig 5 (TV) / Fig 10 (MSE): eps vs error for RR/RAPPOR/uRR/uRAP x emp/emp+thr/EM, plus no privacy."""
    datasets = _datasets.resolve(cfg["datasets"], ctx.data, cfg.get("n"))
    methods = _common.available_methods(cfg["methods"])
    metric, reps = cfg["metric"], cfg["reps"]
    rows, panels, vlines, notes = [], [], [], _skipped(cfg, methods)
    with _common.progress(len(datasets) * len(cfg["mechanisms"]), cfg.get("title", "eps sweep"), ctx.progress) as bar:
        for di, ds in enumerate(datasets):
            n = ds.n
            eps = sorted(set(cfg["eps"]) | {round(math.log(ds.d), 4)})
            lines = []
            npm, nps = _common.nonprivate_error(ctx.key(di, 10_000), ds.p, n, reps, metric)
            rows += [dict(dataset=ds.name, mechanism="no privacy", method="", eps=e, metric=metric, value=npm,
                          se=nps, reps=max(reps, 200), n=n, d=ds.d, s=ds.s) for e in eps]
            lines.append(("no privacy", "no privacy", "", eps, [npm] * len(eps)))
            for mi, mech in enumerate(cfg["mechanisms"]):
                curves = _common.error_curve(ctx.key(di, mi), mech, ds.d, ds.sensitive, eps, ds.p, n, reps, methods,
                                             metric, cfg.get("path"), _report_reps(cfg))
                for m, (mean, se) in curves.items():
                    r_m = _common.reps_used(mech, ds.d, ds.sensitive, m, reps, _report_reps(cfg))
                    rows += [dict(dataset=ds.name, mechanism=mech, method=_common.METHOD_LABELS[m], eps=e,
                                  metric=metric, value=float(v), se=float(s_), reps=r_m, n=n, d=ds.d, s=ds.s)
                             for e, v, s_ in zip(eps, mean, se)]
                    lines.append((_label(mech, m), mech, m, eps, mean))
                bar.update(1, f"{ds.name} {mech}")
            panels.append((f"{ds.name} ({ds.source}): d={ds.d}, |X_S|={ds.s}, n={n}", lines))
            vlines.append(math.log(ds.d))
            notes += _eps_checks(rows, ds, metric)
    fig = _plot.line_panels(panels, "epsilon", metric.upper(), vlines=vlines)
    table = format_table(rows, ("dataset", "mechanism", "method"), "eps")
    return Report(rows, {cfg.get("figure", "eps_vs_" + metric): fig}, table, notes,
                  "; ".join(ds.summary() for ds in datasets))


def _best(rows, ds_name, mech, eps):
    """(value, se) of the lowest-error estimator of ``mech`` at ``eps`` (nan when absent)."""
    vals = [(r["value"], r.get("se", float("nan"))) for r in rows if r["dataset"] == ds_name
            and r["mechanism"] == mech and abs(r["eps"] - eps) < 1e-9]
    return min(vals) if vals else (float("nan"), float("nan"))


def _z(a: tuple, b: tuple) -> float:
    """z of mean a - mean b from two independent (mean, se) pairs."""
    se = math.hypot(a[1], b[1])
    return (a[0] - b[0]) / se if se > 0 else float("nan")


def _eps_checks(rows, ds, metric) -> list:
    """001's qualitative claims, evaluated on this run with z-tests (level 0.05)."""
    lnd = round(math.log(ds.d), 4)
    out = []
    nop = _best(rows, ds.name, "no privacy", lnd)
    urr = _best(rows, ds.name, "uRR", lnd)
    if np.isfinite(urr[0]):
        z = _z(urr, nop)
        out.append(f"{ds.name}: at eps = ln d = {lnd:.2f}, best uRR {metric} = {urr[0]:.3g} vs no privacy {nop[0]:.3g} "
                   f"(ratio {urr[0] / nop[0]:.2f}; two-sided z-test of equal error, level 0.05: z = {z:.1f}, "
                   f"{'not distinguishable' if abs(z) < 1.96 else 'different'}; 001: 'almost the same').")
    eps = sorted({r["eps"] for r in rows if r["dataset"] == ds.name})
    for e in (eps[0], lnd):
        best = {m: _best(rows, ds.name, m, e) for m in MECHS}
        best = {k: v for k, v in best.items() if np.isfinite(v[0])}
        if len(best) > 1:
            order = sorted(best, key=lambda k: best[k][0])
            z = _z(best[order[1]], best[order[0]])
            out.append(f"{ds.name}: best mechanism at eps = {e:g}: {order[0]} ({best[order[0]][0]:.3g}); ahead of "
                       f"{order[1]} ({best[order[1]][0]:.3g}) by z = {z:.1f} (one-sided, level 0.05: "
                       f"{'significant' if z > 1.645 else 'not significant'}).")
    return out


def run_sensitive(cfg: dict, ctx: Context) -> Report:
    """001 Fig 6 (TV) / Fig 11 (MSE): |X_S| vs error at eps = 0.1 and ln d, X_S drawn at random.

    Each of ``cases`` random sensitive sets gets ``reps`` repetitions (001: 100 sets x 1). A random X_S with a
    fixed p is the same as X_S = {0..s-1} with p's items randomly relabelled, so every case reuses one
    compiled mechanism and only the distribution changes.
    """
    datasets = _datasets.resolve(cfg["datasets"], ctx.data, cfg.get("n"))
    methods = _common.available_methods(cfg["methods"])
    metric, reps, cases = cfg["metric"], cfg["reps"], cfg["cases"]
    rows, panels, notes = [], [], _skipped(cfg, methods)
    total = len(datasets) * len(cfg["s_values"]) * len(cfg["mechanisms"])
    with _common.progress(total, cfg.get("title", "|X_S| sweep"), ctx.progress) as bar:
        for di, ds in enumerate(datasets):
            n = ds.n
            eps = [e if e != "ln d" else round(math.log(ds.d), 4) for e in cfg["eps"]]
            s_values = [s for s in cfg["s_values"] if s <= ds.d]
            rng = np.random.default_rng(ctx.seed + di)
            perms = [rng.permutation(ds.d) for _ in range(cases)]
            npm, _ = _common.nonprivate_error(ctx.key(di, 10_000), ds.p, n, reps * cases, metric)
            acc = {}
            for si, s in enumerate(s_values):
                sens = tuple(range(s))
                for mi, mech in enumerate(cfg["mechanisms"]):
                    per_case, case_se = {}, {}
                    for c, perm in enumerate(perms):
                        cur = _common.error_curve(ctx.key(di, si, mi, c), mech, ds.d, sens, eps, ds.p[perm], n, reps,
                                                  methods, metric, cfg.get("path"), _report_reps(cfg))
                        for m, (mean, se) in cur.items():
                            per_case.setdefault(m, []).append(np.asarray(mean, np.float64))
                            case_se[m] = np.asarray(se, np.float64)
                    for m, means in per_case.items():
                        means = np.stack(means)  # [cases, eps]
                        # SE over the random X_S cases (it includes the repetitions' noise); one case: its reps' SE.
                        ses = means.std(0, ddof=1) / math.sqrt(len(means)) if len(means) > 1 else case_se[m]
                        for e, v, se in zip(eps, means.mean(0), ses):
                            acc.setdefault((e, mech, m), []).append(float(v))
                            rows.append(dict(dataset=ds.name, mechanism=mech, method=_common.METHOD_LABELS[m], eps=e,
                                             s=s, metric=metric, value=float(v), se=float(se), cases=cases,
                                             reps=_common.reps_used(mech, ds.d, sens, m, reps, _report_reps(cfg)),
                                             n=n, d=ds.d))
                    bar.update(1, f"{ds.name} s={s} {mech}")
            for e in eps:
                lines = [("no privacy", "no privacy", "", s_values, [npm] * len(s_values))]
                lines += [(_label(mech, m), mech, m, s_values, acc[(e, mech, m)])
                          for mech in cfg["mechanisms"] for m in methods if (e, mech, m) in acc]
                panels.append((f"{ds.name}: eps = {e:g}", lines))
                for i in (0, -1):
                    best = _best_at(acc, e, cfg["mechanisms"], methods, i)
                    notes.append(f"{ds.name}, eps={e:g}, |X_S|={s_values[i]}: best {best[0]} ({best[1]:.3g}).")
    fig = _plot.line_panels(panels, "|X_S|", metric.upper())
    table = format_table(rows, ("dataset", "eps", "mechanism", "method"), "s")
    return Report(rows, {cfg.get("figure", "sensitive_vs_" + metric): fig}, table, notes,
                  "; ".join(ds.summary() for ds in datasets))


def _best_at(acc: dict, e, mechs, methods, i: int) -> tuple:
    """(label, value) of the lowest error at index ``i`` of the x axis over mechanisms x methods."""
    vals = {_label(k, m): acc[(e, k, m)][i] for k in mechs for m in methods if (e, k, m) in acc}
    best = min(vals, key=vals.get)
    return best, vals[best]


def run_attributes(cfg: dict, ctx: Context) -> Report:
    """001 Fig 7 (TV) / Fig 12 (MSE): number of census attributes (4..9) vs error at eps = 0.1, 1, 6."""
    methods = _common.available_methods(cfg["methods"])
    metric, reps = cfg["metric"], cfg["reps"]
    attrs = cfg["attributes"]
    names = ["census" if a == 4 else f"census{a}" for a in attrs]
    datasets = _datasets.resolve(names, ctx.data, cfg.get("n"))
    rows, notes = [], _skipped(cfg, methods)
    acc = {}
    with _common.progress(len(datasets) * len(cfg["mechanisms"]), cfg.get("title", "attributes"), ctx.progress) as bar:
        for di, (a, ds) in enumerate(zip(attrs, datasets)):
            n = ds.n
            npm, _ = _common.nonprivate_error(ctx.key(di, 10_000), ds.p, n, reps, metric)
            for e in cfg["eps"]:
                acc.setdefault((e, "no privacy", ""), []).append(npm)
            for mi, mech in enumerate(cfg["mechanisms"]):
                cur = _common.error_curve(ctx.key(di, mi), mech, ds.d, ds.sensitive, cfg["eps"], ds.p, n, reps,
                                          methods, metric, cfg.get("path"), _report_reps(cfg))
                for m, (mean, se) in cur.items():
                    r_m = _common.reps_used(mech, ds.d, ds.sensitive, m, reps, _report_reps(cfg))
                    for e, v, s_ in zip(cfg["eps"], mean, se):
                        acc.setdefault((e, mech, m), []).append(float(v))
                        rows.append(dict(dataset=ds.name, attributes=a, mechanism=mech,
                                         method=_common.METHOD_LABELS[m], eps=e, metric=metric, value=float(v),
                                         se=float(s_), reps=r_m, n=n, d=ds.d, s=ds.s))
                bar.update(1, f"{a} attrs {mech}")
    panels = []
    for e in cfg["eps"]:
        lines = [("no privacy", "no privacy", "", attrs, acc[(e, "no privacy", "")])]
        lines += [(_label(mech, m), mech, m, attrs, acc[(e, mech, m)])
                  for mech in cfg["mechanisms"] for m in methods if (e, mech, m) in acc]
        panels.append((f"census: eps = {e:g}", lines))
        best = _best_at(acc, e, cfg["mechanisms"], methods, -1)
        notes.append(f"eps={e:g}, {attrs[-1]} attributes: best {best[0]} ({best[1]:.3g}).")
    fig = _plot.line_panels(panels, "number of attributes", metric.upper(), logx=False)
    table = format_table(rows, ("eps", "mechanism", "method"), "attributes")
    return Report(rows, {cfg.get("figure", "attributes_vs_" + metric): fig}, table, notes,
                  "; ".join(ds.summary() for ds in datasets))


_M = ["emp", "emp+thr", "em"]
# Bit-vector mechanisms use the exact O(d) counts path (independent of n); item mechanisms the per-user path.
_PATH = {"RAPPOR": "auto", "uRAP": "auto"}
# EM for RAPPOR/uRAP (001 shows it in Figs 5-7, 10-12) runs through ul.simulate on every repetition by default.
_FIG5 = dict(datasets=["foursquare", "census"], mechanisms=MECHS, methods=_M, eps=EPS_001, reps=100, metric="tv",
             path=_PATH, report_reps="all")
_FIG5Q = dict(_FIG5, datasets=["foursquare"], mechanisms=["RR", "uRAP"], eps=[0.5], reps=2, n=2_000, path=None)
_FIG6 = dict(datasets=["foursquare", "census"], mechanisms=MECHS, methods=_M, eps=[0.1, "ln d"],
             s_values=[1, 2, 5, 10, 20, 50, 100, 200, 400, 625], cases=100, reps=1, metric="tv", path=_PATH,
             report_reps="all")
_FIG6Q = dict(_FIG6, datasets=["foursquare"], mechanisms=["uRR"], methods=["emp"], s_values=[1, 100], cases=2,
              reps=1, n=2_000)
_FIG7 = dict(attributes=[4, 5, 6, 7, 8, 9], mechanisms=MECHS, methods=["emp", "emp+thr", "em"], eps=[0.1, 1.0, 6.0],
             reps=10, metric="tv", n=240_000, path=_PATH, report_reps="all")
_FIG7Q = dict(_FIG7, attributes=[4, 5], eps=[1.0], mechanisms=["uRR"], methods=["emp"], reps=2, n=2_000)
# The demo keeps to ~2 minutes on 2 cores: EM for RAPPOR/uRAP (~20 s per repetition and eps for uRAP, more for
# RAPPOR, at n = 1e5; experiments/demo/NOTES.md) does not fit, so it is off (report_reps = 0; emp+thr stands in and
# run_config.json says so); `python experiments/reproduce.py demo --set report_reps=1` (or `uldp demo --set report_reps=1`) runs it on 1 repetition.
_DEMO = dict(_FIG5, datasets=["foursquare"], eps=[0.1, 0.5, 1.0, 2.0, 5.0, 10.0], reps=5, n=100_000,
             title="demo (001 Fig 5, reduced)", figure="demo_eps_vs_tv", path=None, report_reps=0)
_DEMOQ = dict(_DEMO, mechanisms=["uRR", "uRAP"], methods=["emp", "emp+thr"], eps=[5.0], reps=2, n=2_000)


def _mse(cfg):
    """001 App. C's "MSE": the sample mean of the l2 loss ``sum_x (p_hat(x) - p(x))^2`` (not the per-item mean)."""
    return dict(cfg, metric="l2sq")


def _NO_BITS_EM(cfg: dict) -> list:
    """001 shows EM for all four mechanisms; RAPPOR/uRAP EM needs every report (``report_reps`` repetitions)."""
    rr = _report_reps(cfg)
    if rr >= cfg.get("reps", 1):
        return []
    if rr:
        return [f"methods: EM for RAPPOR/uRAP on {rr} of {cfg.get('reps')} repetitions (report_reps)"]
    return ["methods: no EM for RAPPOR/uRAP (it needs every report; --set report_reps=N); emp+thr stands in "
            "(001: 'very close' to EM)"]


def _demo_deviations(cfg: dict) -> list:
    return ([f"n: {cfg.get('n')} (001 Fig 5: 179,527)", f"reps: {cfg.get('reps')} (001: 100)",
             "datasets: Foursquare only (001 Fig 5: Foursquare and Census)",
             "eps: 6 values (001 Fig 5: 0.1 to 10 with ln d)"] + _NO_BITS_EM(cfg))


register(Experiment("demo", "reduced 001 Fig 5 on the Foursquare proxy (eps vs TV)", _DEMO, _DEMOQ, run_eps,
                    paper_deviations=_demo_deviations))
register(Experiment("001-fig5", "001 Fig 5: eps vs TV (common mechanism)", _FIG5, _FIG5Q, run_eps,
                    paper_deviations=_NO_BITS_EM))
register(Experiment("001-fig10", "001 Fig 10: eps vs MSE (common mechanism)", _mse(_FIG5), _mse(_FIG5Q), run_eps,
                    paper_deviations=_NO_BITS_EM))
register(Experiment("001-fig6", "001 Fig 6: |X_S| vs TV at eps = 0.1 and ln d", _FIG6, _FIG6Q, run_sensitive,
                    paper_deviations=_NO_BITS_EM))
register(Experiment("001-fig11", "001 Fig 11: |X_S| vs MSE at eps = 0.1 and ln d", _mse(_FIG6), _mse(_FIG6Q),
                    run_sensitive, paper_deviations=_NO_BITS_EM))
register(Experiment("001-fig7", "001 Fig 7: number of census attributes vs TV", _FIG7, _FIG7Q, run_attributes,
                    paper_deviations=_NO_BITS_EM))
register(Experiment("001-fig12", "001 Fig 12: number of census attributes vs MSE", _mse(_FIG7), _mse(_FIG7Q),
                    run_attributes, paper_deviations=_NO_BITS_EM))


def _report_blocks(key: jax.Array, mech: Any, p: np.ndarray, n: int, block_size: int = 2048) -> Iterator:
    """One repetition's reports, block by block, in ``simulate``'s per-user randomness layout (iid model)."""
    data = engine.alias_table(p)

    @jax.jit
    def block(m, b):
        return engine.block_reports(key, b, m, jnp.int32(n), data, True, block_size)

    for b in range(-(-n // block_size)):
        ys, w = block(mech, b)
        yield np.asarray(ys)[np.asarray(w)]


def _estimator(mech: Any, method: str, n: int, cfg: dict) -> Callable:
    """``fn(mech, data) -> (p_hat, EMInfo | None)``: data is the aggregate, or ``SupportReports`` for EM on bits."""
    opts = dict(tol=cfg["tol"], max_iters=cfg["max_iters"])
    if method == "em" and mech.report_kind == "bits":
        return lambda m, rep: ul.estimation.em_reports(m, rep, pass_dtype=jnp.float32, **opts)
    if method == "em":
        return lambda m, st: ul.estimation.em_stats(m, st, n, **opts)
    return lambda m, st: (ul.estimate_from_stats(m, st, n, method), None)


def _time_once(fn: Callable, *args) -> tuple:
    """Compiles ``fn`` ahead of time, then times one call: ``(output, wall s, process CPU s, compile s)``."""
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile()
    compile_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(compiled(*args))
    return out, time.perf_counter() - t0, time.process_time() - c0, compile_s


def _em_timing_rows(key: jax.Array, label: str, ds: Any, a: int, cfg: dict) -> list:
    mech = _common.make_mechanism(label, ds.d, ds.sensitive, cfg["eps"])
    n, bits = ds.n, mech.report_kind == "bits"
    t0 = time.perf_counter()
    blocks = _report_blocks(key, mech, ds.p, n)
    if bits:  # support lists with the column layout: memory O(reported ones), never the dense n x d bits
        reports = ul.estimation.to_support(mech, blocks, layout="columns")
        stats, nnz = reports.stats, int(np.sum(np.asarray(reports.support) < ds.d))
    else:
        stats, nnz = sum(np.asarray(mech.aggregate(jnp.asarray(b)), np.int64) for b in blocks), None
        stats = jnp.asarray(stats)
    setup = time.perf_counter() - t0
    rows = []
    for method in _common.available_methods(cfg["methods"]):
        data = reports if bits and method == "em" else stats
        (p_hat, info), secs, cpu, compile_s = _time_once(_estimator(mech, method, n, cfg), mech, data)
        rows.append(dict(attributes=a, d=ds.d, s=ds.s, mechanism=label, method=_common.METHOD_LABELS[method],
                         n=n, eps=cfg["eps"], seconds=secs, cpu_seconds=cpu, compile_seconds=compile_s,
                         setup_seconds=setup, em_map_evals=None if info is None else int(info.num_evals),
                         converged=None if info is None else bool(info.converged), report_nnz=nnz,
                         tv=float(ul.metrics.tv(p_hat, jnp.asarray(ds.p))), load_average=os.getloadavg()[0],
                         metric="seconds", value=secs, backend=jax.default_backend()))
    return rows


def run_em_timing(cfg: dict, ctx: Context) -> Report:
    """001 §6.2's running-time measurement: seconds to estimate p with emp, emp+thr and EM, census 4..9 attributes.

    Every mechanism gets all ``n`` users (one repetition). RR/uRR estimate from the output histogram. EM for
    RAPPOR/uRAP is the exact product likelihood over every report: the reports are generated block by block and
    packed as support lists with the column layout (``ul.estimation.to_support``), so memory is O(reported
    ones) (about 146M ones for RAPPOR at 9 attributes), never the dense ``n x d`` bits; its two passes over the
    reports run in float32 (``pass_dtype``). Everything runs in float64 (x64) with the stopping rule of
    ``experiments/benchmarks/bench_em.py`` (``tol`` per report, SQUAREM).

    What is timed: each estimator alone, compiled ahead of time (``jit(...).lower(...).compile()``), one call.
    Generating, aggregating and packing the reports (``setup_seconds``) and compiling (``compile_seconds``)
    are not timed, as 001 times the estimation only.
    """
    rows = []
    names = ["census" if a == 4 else f"census{a}" for a in cfg["attributes"]]
    datasets = _datasets.resolve(names, ctx.data, cfg.get("n"))
    with jax.enable_x64(True), _common.progress(len(datasets) * len(cfg["mechanisms"]), "EM timing",
                                                 ctx.progress) as bar:
        for di, (a, ds) in enumerate(zip(cfg["attributes"], datasets)):
            for mi, label in enumerate(cfg["mechanisms"]):
                rows += _em_timing_rows(ctx.key(di, mi), label, ds, a, cfg)
                bar.update(1, f"{a} attrs {label}")
    lines = [(f"{m} ({meth})", m, {"EM": "em"}.get(meth, meth), cfg["attributes"],
              [r["seconds"] for r in rows if r["mechanism"] == m and r["method"] == meth])
             for m in cfg["mechanisms"] for meth in sorted({r["method"] for r in rows})]
    fig = _plot.line_panels([(f"estimation time, eps = {cfg['eps']}", [ln for ln in lines if ln[4]])],
                            "number of attributes", "seconds", logx=False)
    last = [r for r in rows if r["attributes"] == cfg["attributes"][-1]]
    notes = [f"{cfg['attributes'][-1]} attributes, EM: "
             + ", ".join(f"{r['mechanism']} {r['seconds']:.3g} s ({r['em_map_evals']} EM maps, TV {r['tv']:.3g})"
                         for r in last if r["method"] == "EM")
             + " (001: 3121 s RR, 1258 s uRR, 5225 s RAPPOR, 1073 s uRAP on a 6-core Xeon; emp/emp+thr < 1 s).",
             f"slowest emp/emp+thr: {max([r['seconds'] for r in rows if r['method'] != 'EM'] or [0]):.3g} s.",
             "load average (1 min) during the run: "
             + f"{min(r['load_average'] for r in rows):.1f}..{max(r['load_average'] for r in rows):.1f}."]
    table = format_table(rows, ("mechanism", "method"), "attributes", value_key="seconds")
    return Report(rows, {"em_timing": fig}, table, notes, "; ".join(ds.summary() for ds in datasets))


_EMT = dict(attributes=[4, 5, 6, 7, 8, 9], mechanisms=MECHS, methods=_M, eps=6.0, n=240_000, tol=1e-7,
            max_iters=10_000)
_EMTQ = dict(_EMT, attributes=[4], mechanisms=["uRR", "uRAP"], n=20_000)
register(Experiment("001-em-timing", "001 EM running time vs number of census attributes (eps = 6)", _EMT, _EMTQ,
                    run_em_timing))
