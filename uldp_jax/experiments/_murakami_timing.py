"""001 §6.2's running-time measurement (``001-em-timing``): seconds to estimate p with emp, emp+thr and EM."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _common, _datasets, _plot
from uldp_jax.experiments._runner import Context, Report, Experiment, format_table, register
from uldp_jax.engine import _engine as engine

MECHS = ["RR", "RAPPOR", "uRR", "uRAP"]
_M = ["emp", "emp+thr", "em"]


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
