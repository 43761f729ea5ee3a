"""Benchmark: issue 20's study through ``ul.study``, in a fresh process with an empty and then a warm JAX cache.

Study: GRR, OUE, OLH, uRR, uRAP (10% of the items sensitive), HR and SS at d = 256, eps in {0.5, 1, 2, 4},
n in {1e4, 1e5}, 30 repetitions, methods emp and emp+thr (EM left out, as the issue's target says), iid users
from a fixed Zipf-like ``p``, metric mse. Each run is a child process (``python bench_study.py --child``) that
times ``ul.study`` end to end (import excluded; reported separately) and counts, through ``jax.monitoring``,
XLA compile requests (JAX's "stage" programs excluded; a request is served by the persistent cache or compiled),
persistent-cache hits and misses (a miss is a real compilation); the parent records each child's CPU seconds
(user + system, ``resource.getrusage``), which a loaded machine does not inflate as it does wall time.

Cache: the parent points both children at one fresh directory with JAX's persistent compilation cache
(``JAX_COMPILATION_CACHE_DIR``, ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0``,
``JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1``; ``ULDP_JAX_CACHE_DIR`` too): run 1 starts empty, run 2 finds
run 1's kernels. The toolkit's own default cache (``uldp_jax._cache``, on by default) never overrides a
``JAX_COMPILATION_CACHE_DIR`` set by the user, so these settings only make the directory explicit and empty.

Run: ``nice python experiments/benchmarks/bench_study.py [--reps R] [--n N ...]`` (writes ``bench_study.json``
next to this file; a run with other sizes than the issue's is labelled reduced). The machine is shared:
``os.getloadavg()`` is recorded around each child.
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
FULL = {"reps": 30, "n": [10_000, 100_000]}


def child(reps: int, ns: list) -> dict:
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
    mechs = {"GRR": lambda eps: ul.GRR(d, eps), "OUE": lambda eps: ul.OUE(d, eps), "OLH": lambda eps: ul.OLH(d, eps),
             "uRR": lambda eps: ul.URR(d, S, eps), "uRAP": lambda eps: ul.URAP(d, S, eps),
             "HR": lambda eps: ul.HR(d, eps), "SS": lambda eps: ul.SS(d, eps)}
    t1 = time.perf_counter()
    res = ul.study(jax.random.key(0), mechs, eps=[0.5, 1.0, 2.0, 4.0], n=ns, reps=reps, p=p,
                   methods=("emp", "emp+thr"), metrics=("mse",))
    wall = time.perf_counter() - t1
    rows = res.rows()
    per_mech = {}
    for r in rows:
        if r["method"] == "emp":  # compile_s/run_s are per point; one method's rows sum to the totals
            m = per_mech.setdefault(r["mechanism"], {"compile_s": 0.0, "run_s": 0.0})
            m["compile_s"] += r["compile_s"]
            m["run_s"] += r["run_s"]
    zs = [abs(r["z"]) for r in rows if r["method"] == "emp"]
    return {"import_s": import_s, "study_s": wall, "timing": res.timing, **counts, "rows": len(rows),
            "max_abs_z_emp": max(zs), "per_mechanism": per_mech}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--reps", type=int, default=FULL["reps"])
    ap.add_argument("--n", type=int, nargs="+", default=FULL["n"])
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.reps, args.n)))
        return
    out = {"config": {"reps": args.reps, "n": args.n, "d": 256, "eps": [0.5, 1, 2, 4],
                      "mechanisms": ["GRR", "OUE", "OLH", "uRR", "uRAP(10%)", "HR", "SS"],
                      "methods": ["emp", "emp+thr"]},
           "reduced": {"reps": args.reps, "n": args.n} != FULL, "platform": platform.platform(),
           "cpus": os.cpu_count(), "runs": {}}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache, ULDP_JAX_CACHE_DIR=cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1")
        for label in ("empty_cache", "warm_cache"):
            load0 = os.getloadavg()
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, "--child", "--reps", str(args.reps), "--n",
                                   *map(str, args.n)], env=env, capture_output=True, text=True, check=True)
            run = json.loads(proc.stdout.strip().splitlines()[-1])
            run["process_s"] = time.perf_counter() - t0
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            run["process_cpu_s"] = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            run["loadavg_before"], run["loadavg_after"] = load0, os.getloadavg()
            out["runs"][label] = run
            print(label, json.dumps({k: run[k] for k in ("study_s", "process_s", "process_cpu_s", "compile_requests", "cache_hits", "cache_misses",
                                                          "loadavg_before", "loadavg_after")}), flush=True)
    (HERE / "bench_study.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
