"""``ul.audit_sampler`` throughput and power (issue 50): trials per second through a library mechanism, the
auditor's own cost per trial beside a bare loop over a Python callable, and the bound reached with many trials.

Three parts (each timed after a warm-up call with the same shapes, so compilation is excluded):

* ``mechanism``: ``--trials`` (default 1e8) reports of GRR(d=16, eps=1) through ``perturb_batch`` (``path="reports"``)
  and through its exact count sampler (``path="counts"``); target: under 10 s on 2 CPU cores;
* ``callable``: a plain Python GRR client ``x -> report``; the bare loop ``[f(x) for x in xs]`` over the same
  number of calls is timed beside ``audit_sampler``; the difference per trial is the auditor's own cost (target
  under 1 microsecond);
* ``power``: GRR, SUE, OUE, OLH and SS at d in {16, 64} and eps in {0.5, 1, 4}, ``--power-trials`` (default 1e8)
  reports over all inputs; the bound should reach 0.9 eps and never exceed eps.

Usage (a quiet machine, 2 cores; JSON to stdout or --out):
    python experiments/benchmarks/bench_audit.py [--trials 100000000] [--parts mechanism,callable,power]
        [--power-trials 100000000] [--callable-trials 2000000] [--out bench_audit.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time

import jax

import uldp_jax as ul


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_mechanism(trials: int) -> dict:
    mech, out = ul.GRR(16, 1.0), {}
    for path in ("reports", "counts"):
        run = lambda k: ul.audit_sampler(jax.random.key(k), mech, trials=trials, path=path, progress=False)  # noqa
        _, first = _timed(lambda: run(0))  # compile + run
        res, t = _timed(lambda: run(1))
        out[path] = dict(trials=res.trials, seconds=t, first_call_s=first, trials_per_s=res.trials / t,
                         eps_lower=res.eps_lower)
    return out


def _python_grr(d: int, eps: float):
    p, rnd, randrange = math.exp(eps) / (math.exp(eps) + d - 1), random.random, random.randrange

    def client(x: int) -> int:
        if rnd() < p:
            return x
        y = randrange(d - 1)
        return y + (y >= x)

    return client


def bench_callable(trials: int) -> dict:
    """Bare loop and audit at ``trials`` and ``trials / 4`` calls: the difference of the differences is the
    auditor's marginal cost per trial (its fixed cost, the Clopper-Pearson solves, is reported apart)."""
    d, f = 16, _python_grr(16, 1.0)
    audit = lambda k, n: ul.audit_sampler(jax.random.key(k), f, spec=1.0, d=d, trials=n, inputs=(0, d - 1),  # noqa
                                          progress=False)
    audit(0, trials)  # warm-up: compiles the Clopper-Pearson solver's shapes
    out = {}
    for n in (trials // 4, trials):
        xs = [0, d - 1] * (n // 2)
        _, bare = _timed(lambda: [f(x) for x in xs])
        res, t = _timed(lambda: audit(1, n))
        out[n] = (bare, t, res.eps_lower)
    (b1, t1, _), (b2, t2, eps) = out[trials // 4], out[trials]
    per_trial = ((t2 - b2) - (t1 - b1)) / (trials - trials // 4)
    return dict(trials=trials, bare_loop_s=b2, audit_s=t2, fixed_s=(t2 - b2) - per_trial * trials,
                overhead_us_per_trial=per_trial * 1e6, bare_us_per_trial=b2 / trials * 1e6, eps_lower=eps)


def bench_power(trials: int) -> list:
    rows = []
    for d in (16, 64):
        for eps in (0.5, 1.0, 4.0):
            for mech in (ul.GRR(d, eps), ul.SUE(d, eps), ul.OUE(d, eps), ul.OLH(d, eps), ul.SS(d, eps)):
                res, t = _timed(lambda: ul.audit_sampler(jax.random.key(0), mech, trials=trials, progress=False))
                rows.append(dict(mechanism=type(mech).__name__, repr=repr(mech), d=d, eps=eps, trials=res.trials,
                                 eps_lower=res.eps_lower, ratio=res.eps_lower / eps, ok=res.ok,
                                 events_from=res.events_from, seconds=t))
                print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=float, default=1e8)
    ap.add_argument("--callable-trials", type=float, default=2e6)
    ap.add_argument("--power-trials", type=float, default=1e8)
    ap.add_argument("--parts", default="mechanism,callable,power")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    parts = args.parts.split(",")
    out = dict(jax=jax.__version__, devices=[str(x) for x in jax.devices()], cpus=os.cpu_count(),
               load_before=os.getloadavg())
    if "mechanism" in parts:
        out["mechanism"] = bench_mechanism(int(args.trials))
    if "callable" in parts:
        out["callable"] = bench_callable(int(args.callable_trials))
    if "power" in parts:
        out["power"] = bench_power(int(args.power_trials))
    out["load_after"] = os.getloadavg()
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
