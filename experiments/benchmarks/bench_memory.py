"""Benchmark: peak resident memory of a per-user run with n = 10^7 users x 100 repetitions (GRR, d = 625).

The run happens in a child process (so the parent's imports do not count) that reports
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end; the per-user path keeps only ``int32[m]`` stats
per repetition and processes users in chunks of blocks, so memory must not grow with n x reps.

Run: ``python experiments/benchmarks/bench_memory.py [--n 10000000 --reps 100]`` (prints JSON).
Target: peak RSS <= 2 GB. Also prints the baseline RSS of a child that only imports uldp_jax and runs a tiny
simulation (the JAX runtime itself).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = """
import resource, sys, time
import jax, numpy as np
import uldp_jax as ul
n, reps = int(sys.argv[1]), int(sys.argv[2])
p = np.ones(625) / 625
t = time.perf_counter()
res = ul.simulate(jax.random.key(0), ul.GRR(625, 1.0), p=p, n=n, reps=reps, path="per_user")
res.estimates["emp"].block_until_ready()
secs = time.perf_counter() - t
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, secs)
"""


def child_peak(n: int, reps: int) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(reps)], capture_output=True, text=True,
                         check=True)
    kib, secs = out.stdout.split()
    return int(kib) / 2**20, float(secs)  # ru_maxrss is in KiB on Linux


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--reps", type=int, default=100)
    args = ap.parse_args(argv)
    base_gib, _ = child_peak(1000, 1)
    t = time.perf_counter()
    peak_gib, secs = child_peak(args.n, args.reps)
    out = {"n": args.n, "reps": args.reps, "peak_rss_gib": round(peak_gib, 3),
           "baseline_rss_gib": round(base_gib, 3), "simulate_s": round(secs, 1),
           "users_per_s": float(f"{args.n * args.reps / secs:.4g}"),
           "wall_s_with_startup": round(time.perf_counter() - t, 1)}
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
