"""Benchmark: EM's ``tol="stat"`` against its default rule (issue 54 item 1), through the public calls.

Part 1, ``ul.estimation.em`` on one set of reports per mechanism (OLH, SS, OUE, uRAP with 10% sensitive, GRR) at
d = 256, n = 1e5, eps = 1, iid users from a Dirichlet(1) ``p``: passes over the reports (``EMInfo.num_evals``),
warm seconds (best of 3, after one call that compiles), and the largest distance of the ``tol="stat"`` estimate
from the default one in standard errors of the empirical estimator (``ul.theory.item_variance``).

Part 2, ``ul.simulate`` of OLH at the same sizes with ``methods=("em",)``: seconds per repetition of a warm call
with ``--reps`` repetitions, default rule against ``method_options={"em": {"tol": "stat"}}`` (issue 54's target: at
most 2 s a repetition).

Run: ``python experiments/benchmarks/bench_em_stat_tol.py`` (``--n``, ``--reps``, ``--parts``); prints one JSON
line per measurement and writes ``bench_em_stat_tol.json`` next to this file.
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

HERE = pathlib.Path(__file__).resolve().parent


def _best(fn, times=3):
    out, best = None, float("inf")
    for _ in range(times):
        t = time.perf_counter()
        out = jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t)
    return out, best


def part_estimate(d, n, p, xs):
    rows = []
    mechs = {"OLH": ul.OLH(d, 1.0), "SS": ul.SS(d, 1.0), "OUE": ul.OUE(d, 1.0),
             "uRAP": ul.URAP(d, np.arange(d // 10), 1.0), "GRR": ul.GRR(d, 1.0)}
    for name, mech in mechs.items():
        ys = ul.perturb(jax.random.key(5), mech, xs)
        se = np.sqrt(np.asarray(ul.theory.item_variance(mech, p, n)))
        row = {"mechanism": name, "d": d, "n": n, "load": os.getloadavg()[0]}
        for rule, opts in (("default", {}), ("stat", {"tol": "stat"})):
            est, info = ul.estimation.em(mech, ys, return_info=True, **opts)
            _, secs = _best(lambda: ul.estimation.em(mech, ys, **opts))
            row[rule] = {"evals": int(info.num_evals), "steps": int(info.num_steps),
                         "converged": bool(info.converged), "warm_s": round(secs, 3)}
            row[rule + "_est"] = np.asarray(est)
        row["max_se"] = float(np.max(np.abs(row.pop("stat_est") - row.pop("default_est")) / se))
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def part_simulate(d, n, p, reps):
    mech = ul.OLH(d, 1.0)
    rows = []
    for rule, opts in (("default", None), ("stat", {"em": {"tol": "stat"}})):
        call = lambda: ul.simulate(jax.random.key(1), mech, p=p, n=n, reps=reps, methods=("em",),  # noqa: E731
                                   method_options=opts, progress=False).estimates["em"]
        t = time.perf_counter()
        jax.block_until_ready(call())
        first = time.perf_counter() - t
        _, secs = _best(call, 2)
        row = {"simulate": "OLH", "rule": rule, "d": d, "n": n, "reps": reps, "first_call_s": round(first, 2),
               "warm_s": round(secs, 2), "per_rep_s": round(secs / reps, 3), "load": os.getloadavg()[0]}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--parts", nargs="+", default=["estimate", "simulate"], choices=["estimate", "simulate"])
    args = ap.parse_args()
    p = np.random.default_rng(0).dirichlet(np.ones(args.d))
    xs = jnp.asarray(np.random.default_rng(1).choice(args.d, args.n, p=p), jnp.int32)
    out = {"config": vars(args), "load_before": os.getloadavg()}
    if "estimate" in args.parts:
        out["estimate"] = part_estimate(args.d, args.n, p, xs)
    if "simulate" in args.parts:
        out["simulate"] = part_simulate(args.d, args.n, p, args.reps)
    out["load_after"] = os.getloadavg()
    (HERE / "bench_em_stat_tol.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
