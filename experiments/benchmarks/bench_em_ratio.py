"""Benchmark: EM on support-ratio reports (OLH, SS, uSS, uLH) through ``ul.estimation.em``, issue 54.

d = 256, n = 1e5 users iid from a Zipf-like ``p`` (``1 / i^1.1``), eps in {0.5, 1, 2, 4}, EM's default rule and
``tol="stat"``: passes over the reports (``EMInfo.num_evals``), Newton steps, and warm seconds (best of 2, after the
call that compiles). uSS and uLH: the first 25 items sensitive. Run it on two checkouts (``PYTHONPATH=...``) to
compare them; each run also saves its estimates (``--save DIR``) so that two runs can be compared item by item.

Run: ``python experiments/benchmarks/bench_em_ratio.py LABEL [MECH ...]``; one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul

MECHS = {"OLH": lambda d, e: ul.OLH(d, e), "SS": lambda d, e: ul.SS(d, e),
         "uSS": lambda d, e: ul.USS(d, list(range(25)), e), "uLH": lambda d, e: ul.ULH(d, list(range(25)), e)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("mechanisms", nargs="*", default=list(MECHS), choices=list(MECHS))
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--save", default=None, help="a directory for the estimates (.npy)")
    args = ap.parse_args()
    d, n = args.d, args.n
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    p /= p.sum()
    xs = jax.random.choice(jax.random.key(0), d, (n,), p=jnp.asarray(p))
    for name in args.mechanisms:
        for eps in (0.5, 1.0, 2.0, 4.0):
            mech = MECHS[name](d, eps)
            ys = ul.perturb(jax.random.key(5), mech, xs)
            for rule, opts in (("default", {}), ("stat", {"tol": "stat"})):
                est, info = ul.estimation.em(mech, ys, return_info=True, **opts)
                best = float("inf")
                for _ in range(2):
                    t = time.perf_counter()
                    jax.block_until_ready(ul.estimation.em(mech, ys, **opts))
                    best = min(best, time.perf_counter() - t)
                row = {"label": args.label, "mechanism": name, "eps": eps, "rule": rule, "passes": int(info.num_evals),
                       "steps": int(info.num_steps), "converged": bool(info.converged), "warm_s": round(best, 3),
                       "load": round(os.getloadavg()[0], 2)}
                if args.save:
                    out = pathlib.Path(args.save)
                    out.mkdir(parents=True, exist_ok=True)
                    np.save(out / f"{args.label}_{name}_{eps}_{rule}.npy", np.asarray(est))
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
