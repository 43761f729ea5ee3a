"""Benchmark: EM reconstruction in 001's heaviest setting (Fig 7, 9 attributes) against the paper's timings.

Setting (001 §6.2): d = 12800, s = |X_S| = 2432 (the first 2432 items), n = 240000, eps = 6, for RR (GRR), uRR,
RAPPOR and uRAP. 001 reports 3121 s, 1258 s, 5225 s and 1073 s for "EM" on a 6-core Xeon E5-2620 v3.

The US Census microdata are not available offline, so the true distribution is a Zipf(1) law over the 12800
items in a random order (fixed seed): heavy head, long tail, like the census cross-tabulation.

What is timed: the EM solve alone (start from "emp+thr", SQUAREM unless --plain), compiled ahead of time,
from the aggregate histogram (RR, uRR) or from the bit-vector reports packed as support lists (RAPPOR, uRAP).
Generating the reports and packing them is setup, not timed (001 times the estimation only).

Stopping rule (001 does not state one; the same for every mechanism and in the "before" figures): stop after
the first iteration (a SQUAREM cycle, or an EM step with --plain) in which the mean log-likelihood *per report*
rose by at most ``tol`` nats, or after ``max_iters`` iterations. ``tol`` = 1e-7 here (0.024 nats of total
log-likelihood per iteration at n = 240000, far below the statistical resolution of a 12800-parameter
likelihood; the library's float64 default is 1e-10). The log-likelihood is summed in float64 per report; the
two passes over the RAPPOR/uRAP reports (gathers and their sums) run in float32 (``--pass-dtype``).

RAPPOR/uRAP reports are packed as ``SupportReports`` with the column layout (``--layout columns``): uint16 item
lists by row for the gather-sum of ``p`` and uint16 row lists by column (blocks of <= 65535 rows, segments of
256) for the second sum, so an EM map is two gathers plus sorted segment sums (no scatter-add). XLA CPU splits
each gather fusion over both cores. SQUAREM cycles cost two EM maps (``_em_core``).

Figures (RAPPOR: nnz = 146M reported ones; machine shared, load average 10-12 during every run, so wall time is
2-3x the CPU time): before (row layout, scatter-add, int16, SQUAREM with 3 maps a cycle, float32 per-chunk
log-likelihood): 97 EM maps (32 cycles), 0.72 CPU s a map, 70 s CPU / 103 s wall. After (load 13-15): 85 maps
(42 cycles), 0.62 CPU s / 1.10 s wall a map, 52.7 s CPU / 93.8 s wall (99x / 56x faster than 001's 5225 s);
uRAP 73 maps, 1.98 s CPU / 2.07 s wall (540x / 520x; before: 10.2 s wall); RR 0.055 s, uRR 0.046 s wall.
Details and what changed: the EM section of ``experiments/benchmarks/README.md``.

Seconds are wall-clock and process CPU time (``cpu_seconds``, all threads); the load average is recorded.
Run: ``python experiments/benchmarks/bench_em.py`` (prints JSON; about 4 min of setup per bit-vector mechanism
for generating and packing the reports, not timed); ``--mechs RAPPOR`` for one mechanism.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.estimation import _em, _em_reports

from uldp_jax import engine as sim
PAPER_SECONDS = {"RR": 3121.0, "uRR": 1258.0, "RAPPOR": 5225.0, "uRAP": 1073.0}


def zipf(key, d, a=1.0):
    w = 1.0 / np.arange(1, d + 1) ** a
    perm = np.asarray(jax.random.permutation(key, d))
    p = np.empty(d)
    p[perm] = w / w.sum()
    return p


def report_blocks(key, mech, p, n, block_size=2048):
    """Yields the reports block by block with simulate's randomness layout (iid model, repetition 0)."""
    data = sim.alias_table(p)
    key_r = jax.random.fold_in(key, 0)

    @jax.jit
    def block(b):
        ky, xs, w = sim.block_inputs(key_r, b, jnp.int32(n), data, True, block_size)
        return mech.perturb_batch(ky, xs), w

    for b in range(math.ceil(n / block_size)):
        bits, w = block(b)
        yield np.asarray(bits)[np.asarray(w)]


def tv(a, b):
    return 0.5 * float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=240_000)
    ap.add_argument("--d", type=int, default=12_800)
    ap.add_argument("--s", type=int, default=2432)
    ap.add_argument("--eps", type=float, default=6.0)
    ap.add_argument("--tol", type=float, default=1e-7)
    ap.add_argument("--pass-dtype", default="float32", help="precision of the passes over reports (float32/64)")
    ap.add_argument("--max-iters", type=int, default=10_000)
    ap.add_argument("--plain", action="store_true", help="plain EM instead of SQUAREM")
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--mechs", default="RR,uRR,RAPPOR,uRAP")
    ap.add_argument("--layout", default="columns", help="SupportReports layout: columns (default) or rows")
    args = ap.parse_args()
    ctx = jax.enable_x64(not args.float32)
    ctx.__enter__()
    key = jax.random.key(2019)
    d, s, n, eps = args.d, args.s, args.n, args.eps
    p = zipf(jax.random.fold_in(key, 99), d)
    sens = tuple(range(s))
    mechs = {"RR": ul.GRR(d, eps), "uRR": ul.URR(d, sens, eps), "RAPPOR": ul.RAPPOR(d, eps),
             "uRAP": ul.URAP(d, sens, eps)}
    opts = {"tol": args.tol, "max_iters": args.max_iters, "accelerate": not args.plain}
    setting = {"d": d, "s": s, "n": n, "eps": eps, "tol_per_report": args.tol, "max_iters": args.max_iters,
               "pass_dtype": args.pass_dtype, "layout": args.layout, "load_average": list(os.getloadavg()),
               "cpus": os.cpu_count(), "accelerate": not args.plain,
               "dtype": "float32" if args.float32 else "float64", "devices": str(jax.devices()),
               "true_p": "Zipf(1), random order"}
    out = {"setting": setting, "results": {}}
    for name in args.mechs.split(","):
        mech = mechs[name]
        t0 = time.perf_counter()
        if mech.report_kind == "item":
            data = sum(mech.aggregate(jnp.asarray(b)) for b in report_blocks(jax.random.fold_in(key, 1), mech, p, n))
            fn = jax.jit(lambda m, st: _em.em_stats(m, st, None, **opts))
        else:
            data = _em_reports.to_support(mech, report_blocks(jax.random.fold_in(key, 2), mech, p, n),
                                          layout=args.layout)
            pdt = jnp.float32 if args.pass_dtype == "float32" else None
            fn = jax.jit(lambda m, r, pdt=pdt: _em_reports.em_reports(m, r, pass_dtype=pdt, **opts))
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        compiled = fn.lower(mech, data).compile()
        compile_s = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        p_hat, info = jax.block_until_ready(compiled(mech, data))
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        stats = data if mech.report_kind == "item" else data.stats
        p_thr = ul.estimation.empirical_threshold(mech, stats, n)
        p_emp = ul.estimation.empirical(mech, stats, n)
        out["results"][name] = {
            "seconds": round(secs, 3), "cpu_seconds": round(cpu, 3), "paper_seconds": PAPER_SECONDS[name],
            "speedup_vs_paper": round(PAPER_SECONDS[name] / secs, 1),
            "speedup_vs_paper_cpu_seconds": round(PAPER_SECONDS[name] / max(cpu, 1e-9), 1),
            "compile_seconds": round(compile_s, 2), "setup_seconds": round(setup, 2),
            "iterations": int(info.num_steps), "em_map_evals": int(info.num_evals),
            "seconds_per_map": round(secs / int(info.num_evals), 4),
            "cpu_seconds_per_map": round(cpu / int(info.num_evals), 4),
            "converged": bool(info.converged), "final_loglik_change_per_report": float(info.loglik_change),
            "tv_emp": round(tv(p_emp, p), 4), "tv_emp_thr": round(tv(p_thr, p), 4), "tv_em": round(tv(p_hat, p), 4),
            "report_nnz": None if mech.report_kind == "item" else int(np.sum(np.asarray(data.support) < d))}
        print(json.dumps({name: out["results"][name]}), flush=True)
    ctx.__exit__(None, None, None)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
