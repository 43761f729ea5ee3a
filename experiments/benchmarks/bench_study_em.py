"""Benchmark: issue 54's six-mechanism study with EM everywhere, through ``ul.study``, fresh then warm cache.

Study: GRR, OUE, OLH, uRR, uRAP (10% of the items sensitive), HR at d = 256, eps in {0.5, 1, 2, 4}, n in
{1e4, 1e5}, 30 repetitions, methods emp, emp+thr and em for every mechanism and n, iid users from a fixed
Zipf-like ``p``, metrics mse_per_item and tv. ``--em-max-n N`` runs EM only where n <= N (``ul.study``'s methods
per n, issue 54 item 1) to show what a study in the user's control costs. Each run is a child process (``python
bench_study_em.py --child ...``) timing ``ul.study`` end to end (import excluded), with XLA compile requests and
persistent-cache hits/misses counted through ``jax.monitoring`` and the child's CPU seconds (user + system)
recorded by the parent; ``os.getloadavg()`` around each child. Per mechanism and n: the engine call's compile and
run seconds (every method of a cell runs in one call, so EM is not separated from emp there).

Cache: both children share one fresh persistent compilation cache directory (as ``bench_study.py``): run 1
starts empty ("fresh"), run 2 finds run 1's kernels ("warm").

Run (the issue's full size; about an hour on a loaded 2-core machine before issue 54's EM work):
``nice python experiments/benchmarks/bench_study_em.py``. Reduced: ``--reps 3 --n 10000 --eps 1 4``, or
``--mechanisms GRR OLH``; ``--tol stat`` stops every EM at the statistical resolution. Writes ``bench_study_em.json`` (full size) or ``bench_study_em_reduced.json`` next to
this file.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import resource
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
FULL = {"reps": 30, "n": [10_000, 100_000], "eps": [0.5, 1.0, 2.0, 4.0],
        "mechanisms": ["GRR", "OUE", "OLH", "uRR", "uRAP", "HR"], "em_max_n": None}


def child(args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    import jax
    import numpy as np

    import uldp_jax as ul

    import_s = time.perf_counter() - t0
    counts = {"compile_requests": 0, "cache_hits": 0, "cache_misses": 0}

    def on_duration(event, secs, **kw):
        if event == "/jax/core/compile/backend_compile_duration" and kw.get("fun_name") not in ("stage", "jit(stage)"):
            counts["compile_requests"] += 1

    def on_event(event, **kw):
        if event in ("/jax/compilation_cache/cache_hits", "/jax/compilation_cache/cache_misses"):
            counts[event.rsplit("/", 1)[1]] += 1

    jax.monitoring.register_event_duration_secs_listener(on_duration)
    jax.monitoring.register_event_listener(on_event)
    d = 256
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    p /= p.sum()
    S = range(d // 10)  # 10% sensitive
    every = {"GRR": lambda eps: ul.GRR(d, eps), "OUE": lambda eps: ul.OUE(d, eps), "OLH": lambda eps: ul.OLH(d, eps),
             "uRR": lambda eps: ul.URR(d, S, eps), "uRAP": lambda eps: ul.URAP(d, S, eps),
             "HR": lambda eps: ul.HR(d, eps)}
    mechs = {k: every[k] for k in args.mechanisms}
    em_max_n = args.em_max_n

    def methods(name, n):
        return ("emp", "emp+thr", "em") if em_max_n is None or n <= em_max_n else ("emp", "emp+thr")

    t1 = time.perf_counter()
    # --tol stat: every EM stops at the data's statistical resolution (``ul.estimation.em``'s ``tol="stat"``)
    options = {} if args.tol is None else {"simulate_options": {"method_options": {"em": {"tol": args.tol}}}}
    res = ul.study(jax.random.key(0), mechs, eps=args.eps, n=args.n, reps=args.reps, p=p, methods=methods,
                   metrics=("mse_per_item", "tv"), progress="stderr", **options)
    wall = time.perf_counter() - t1
    rows = res.rows()
    cells = {}
    for r in rows:
        if r["method"] == "emp" and r["metric"] == "tv":  # compile_s/run_s: the call's, split over its points
            c = cells.setdefault(f"{r['mechanism']} n={r['n']}", {"compile_s": 0.0, "run_s": 0.0})
            c["compile_s"] += r["compile_s"]
            c["run_s"] += r["run_s"]
    em_vs_emp = {}
    for r in rows:
        if r["method"] == "em" and r["metric"] == "tv":
            emp = next(q for q in rows if q["metric"] == "tv" and q["method"] == "emp" and q["mechanism"] == r["mechanism"]
                       and q["eps"] == r["eps"] and q["n"] == r["n"])
            em_vs_emp[f"{r['mechanism']} eps={r['eps']} n={r['n']}"] = {"em_tv": r["mean"], "emp_tv": emp["mean"]}
    zs = [r["z"] for r in rows if r["method"] == "emp" and r["metric"] == "mse_per_item"]
    return {"import_s": import_s, "study_s": wall, "timing": res.timing, **counts, "rows": len(rows),
            "emp_z": {"mean": float(np.nanmean(zs)), "sd": float(np.nanstd(zs, ddof=1)) if len(zs) > 1 else None,
                      "max_abs": float(np.nanmax(np.abs(zs)))},
            "per_cell": cells, "em_vs_emp_tv": em_vs_emp}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--reps", type=int, default=FULL["reps"])
    ap.add_argument("--n", type=int, nargs="+", default=FULL["n"])
    ap.add_argument("--eps", type=float, nargs="+", default=FULL["eps"])
    ap.add_argument("--mechanisms", nargs="+", default=FULL["mechanisms"], choices=FULL["mechanisms"])
    ap.add_argument("--em-max-n", type=int, default=None, help="run EM only where n <= this (default: everywhere)")
    ap.add_argument("--warm", action="store_true", help="also run a second child on the warm cache")
    ap.add_argument("--tol", default=None, help="EM's tol (e.g. 'stat'; default: EM's own default)")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    given = {"reps": args.reps, "n": args.n, "eps": args.eps, "mechanisms": args.mechanisms, "em_max_n": args.em_max_n}
    reduced = given != FULL
    given["tol"] = args.tol
    out = {"config": dict(given, d=256, sensitive="10%", methods=["emp", "emp+thr", "em"]), "reduced": reduced,
           "platform": platform.platform(), "cpus": os.cpu_count(), "runs": {}}
    argv = [sys.executable, __file__, "--child", "--reps", str(args.reps), "--n", *map(str, args.n), "--eps",
            *map(str, args.eps), "--mechanisms", *args.mechanisms]
    if args.em_max_n is not None:
        argv += ["--em-max-n", str(args.em_max_n)]
    if args.tol is not None:
        argv += ["--tol", args.tol]
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache, ULDP_JAX_CACHE_DIR=cache,
                   JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0", JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1")
        for label in ("fresh", "warm") if args.warm or not reduced else ("fresh",):
            load0 = os.getloadavg()
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, text=True, check=True)
            run = json.loads(proc.stdout.strip().splitlines()[-1])
            run["process_s"] = time.perf_counter() - t0
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            run["process_cpu_s"] = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            run["loadavg_before"], run["loadavg_after"] = load0, os.getloadavg()
            out["runs"][label] = run
            print(label, json.dumps({k: run[k] for k in ("study_s", "process_s", "process_cpu_s", "compile_requests",
                                                          "cache_hits", "cache_misses", "loadavg_before",
                                                          "loadavg_after")}), flush=True)
    name = ("bench_study_em_reduced" if reduced else "bench_study_em") + ("" if args.tol is None else f"_tol_{args.tol}")
    name += ".json"
    (HERE / name).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
