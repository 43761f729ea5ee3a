"""Benchmark: one EM at 001's full sizes for the bit-vector mechanisms (issue 21), through the public API.

Settings: census proxy (d = 400, |X_S| = 76, n = 1,229,143) and Foursquare proxy (d = 625, |X_S| = 15,
n = 179,527) from ``uldp_jax.data``; RAPPOR and uRAP (sensitive set of the data set); eps = 0.1, 1 and 10.
Per setting: ``xs`` drawn once from the data set's distribution, ``ys = ul.perturb(key, mech, xs)`` (not timed),
then one timed call ``ul.estimation.em(mech, ys, return_info=True)`` (float32, x64 off, default stopping rule;
what ``ul.estimate(mech, ys, "em")`` runs). Compilation is measured apart with jax.monitoring's
backend-compile events and subtracted (``em_seconds``; ``wall_seconds`` includes it), so one call per setting
suffices. The load average (1 min) is recorded before and after each call; peak RSS at the end.

Before/after: run the same script with ``PYTHONPATH`` pointing at the older checkout (the API used exists
there), on the same machine state, e.g.::

    git archive ec89e17 | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base python experiments/benchmarks/bench_em_full.py --data census --mechs RAPPOR
    PYTHONPATH=$PWD     python experiments/benchmarks/bench_em_full.py --data census --mechs RAPPOR

Run: ``nice python experiments/benchmarks/bench_em_full.py [--data census foursquare] [--mechs RAPPOR uRAP]
[--eps 0.1 1 10]`` (one JSON line per setting on stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
import uldp_jax.data as uld

_COMPILE_S: list = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, duration, **_: _COMPILE_S.append(duration)
    if event == "/jax/core/compile/backend_compile_duration" else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", default=["census", "foursquare"])
    ap.add_argument("--mechs", nargs="+", default=["RAPPOR", "uRAP"])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.1, 1.0, 10.0])
    ap.add_argument("--n", type=int, default=None, help="reduced n (default: the data set's full n)")
    ap.add_argument("--tol", type=float, default=None, help="stopping tolerance (default: the library's)")
    args = ap.parse_args()
    for data_name in args.data:
        ds = uld.census_proxy() if data_name == "census" else uld.foursquare_proxy()
        d, n = ds.p.shape[0], args.n or ds.n
        xs = jnp.asarray(np.random.default_rng(1).choice(d, size=n, p=np.asarray(ds.p) / np.sum(ds.p)), jnp.int32)
        for name in args.mechs:
            for eps in args.eps:
                mech = ul.RAPPOR(d, eps) if name == "RAPPOR" else ul.URAP(d, tuple(ds.sensitive), eps)
                ys = jax.block_until_ready(ul.perturb(jax.random.key(0), mech, xs))
                load0 = os.getloadavg()[0]
                del _COMPILE_S[:]
                t0, c0 = time.perf_counter(), time.process_time()
                opts = {} if args.tol is None else {"tol": args.tol}
                p_hat, info = ul.estimation.em(mech, ys, return_info=True, **opts)
                p_hat = jax.block_until_ready(p_hat)
                wall = time.perf_counter() - t0
                cpu = time.process_time() - c0
                comp = float(sum(_COMPILE_S))
                row = {"data": data_name, "mech": name, "eps": eps, "d": d, "n": n, "tol": args.tol or "default",
                       "report_form": type(ys).__name__, "wall_seconds": round(wall, 2),
                       "compile_seconds": round(comp, 2), "em_seconds": round(wall - comp, 2),
                       "cpu_seconds": round(cpu, 2),
                       "steps": int(info.num_steps), "maps": int(info.num_evals),
                       "converged": bool(info.converged), "loglik": float(info.loglik),
                       "tv_to_truth": round(0.5 * float(np.abs(np.asarray(p_hat) - np.asarray(ds.p)).sum()), 4),
                       "load_average": [round(load0, 2), round(os.getloadavg()[0], 2)],
                       "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}
                print(json.dumps(row), flush=True)
                del ys, p_hat


if __name__ == "__main__":
    main()
