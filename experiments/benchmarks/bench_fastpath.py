"""Benchmark: the exact count-level fast path at n = 10^9 users x 100 repetitions (d = 625, eps = 1).

``ul.simulate(..., path="counts")`` end to end (sample the stats of every repetition exactly in distribution,
estimate "emp") for GRR, uRR, OUE, uRAP and uUE (GLUTF over UE: per-item alone/pair/protected multinomials,
then the base's independent bits), iid model with a Zipf-like p; uRR/uRAP/uUE protect the first 10% of items.
``--mechs`` restricts the list; ``--mechs SS uSS`` times the iid-model item scans of subset selection
(``uldp_jax/mechanisms/subset/_ss_counts.py``; ``d`` sequential steps per repetition, so not under the 2 s target). Reported: the first call (includes XLA compilation) and the best of ``--repeat`` warm calls.

Run: ``python experiments/benchmarks/bench_fastpath.py`` (prints JSON). Target: < 2 s per warm call at d = 625,
< 10 s at d = 12800.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import jax
import numpy as np

import uldp_jax as ul


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=625)
    ap.add_argument("--n", type=int, default=10**9)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mechs", nargs="+", default=["GRR", "uRR", "OUE", "uRAP", "uUE"])
    args = ap.parse_args(argv)
    d = args.d
    w = 1.0 / np.arange(1, d + 1)
    p = w / w.sum()
    sens = list(range(max(1, d // 10)))
    mechs = {"GRR": ul.GRR(d, 1.0), "uRR": ul.URR(d, sens, 1.0), "OUE": ul.OUE(d, 1.0),
             "uRAP": ul.URAP(d, sens, 1.0), "uUE": ul.UUE(d, sens, 1.0), "SS": ul.SS(d, 1.0),
             "uSS": ul.USS(d, sens, 1.0)}
    mechs = {name: mechs[name] for name in args.mechs}
    out = {"device": str(jax.devices()[0]), "n": args.n, "reps": args.reps, "d": d,
           "loadavg": [round(v, 2) for v in os.getloadavg()], "mechanisms": {}}
    for name, mech in mechs.items():
        out["mechanisms"][name] = _time(mech, p, args)
    print(json.dumps(out, indent=1))
    return out


def _time(mech, p, args) -> dict:
    run = lambda i: ul.simulate(jax.random.key(i), mech, p=p, n=args.n, reps=args.reps,
                                path="counts").estimates["emp"].block_until_ready()
    t = time.perf_counter()
    est = run(0)
    first = time.perf_counter() - t
    warm = []
    for i in range(args.repeat):
        t = time.perf_counter()
        run(i + 1)
        warm.append(time.perf_counter() - t)
    l1 = float(np.mean(np.abs(np.asarray(est) - p).sum(axis=1)))
    return {"first_call_s": round(first, 3), "warm_s": round(min(warm), 3), "mean_l1": float(f"{l1:.3g}")}


if __name__ == "__main__":
    main()
