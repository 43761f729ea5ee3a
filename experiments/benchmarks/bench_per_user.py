"""Benchmark: users/second of the per-user simulation path, against the raw JAX RNG rate on this machine.

Task (issue 2 item 7): GRR, OUE, uRR, uRAP, SS at d = 625, n = 10^6, eps = 1, iid model (Zipf-like p), 10 reps,
``ul.simulate(..., path="per_user")`` end to end (perturb every user, aggregate on device, estimate "emp").
Compilation is excluded (one warm-up call on the same shapes). For uRR/uRAP the sensitive set is the first
10% of items (s = 63).

Raw RNG: ``jax.random.uniform`` / ``bernoulli`` / ``randint`` / ``bits`` draws per second in a jitted
reduction over 2^24 draws (a sum, so that nothing is copied to the host). Each mechanism's RNG limit is the
users/s the draws it makes would allow: every user's value costs 2 uint32 words (``bits``; the iid model's
alias table, ``simulate.alias_table``); GRR and uRR then 2 words (flip threshold + exact Lemire integer,
``mechanisms/core/_uniform.py``); OUE d uniforms; uRAP s + 1 uniforms; SS 1 uniform + ``min(k, d - k) + 2`` words
(Floyd's algorithm with exact integers).

Run: ``python experiments/benchmarks/bench_per_user.py [--n 1000000 --reps 10 --bit-reps 2]`` (prints JSON).
The bit mechanisms (OUE, uRAP) and SS cost d (or s, or k) draws per user, so ``--bit-reps`` lets them run fewer
repetitions; users/s does not depend on the number of repetitions. ``--mechs`` restricts the list.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul


def raw_rng_rates(size: int = 2**24, repeat: int = 3) -> dict:
    key = jax.random.key(0)
    fns = {
        "uniform": jax.jit(lambda k: jnp.sum(jax.random.uniform(k, (size,)))),
        "bernoulli": jax.jit(lambda k: jnp.sum(jax.random.bernoulli(k, 0.3, (size,)))),
        "randint": jax.jit(lambda k: jnp.sum(jax.random.randint(k, (size,), 0, 624))),
        "bits": jax.jit(lambda k: jnp.sum(jax.random.bits(k, (size,), jnp.uint32) >> 8)),
    }
    rates = {}
    for name, fn in fns.items():
        fn(key).block_until_ready()
        best = np.inf
        for i in range(repeat):
            t = time.perf_counter()
            fn(jax.random.fold_in(key, i)).block_until_ready()
            best = min(best, time.perf_counter() - t)
        rates[name] = size / best
    return rates


def time_simulate(mech, p, n, reps) -> float:
    key = jax.random.key(1)
    ul.simulate(key, mech, p=p, n=n, reps=reps, path="per_user").estimates["emp"].block_until_ready()  # compile
    t = time.perf_counter()
    ul.simulate(jax.random.key(2), mech, p=p, n=n, reps=reps, path="per_user").estimates["emp"].block_until_ready()
    return time.perf_counter() - t


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=625)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--bit-reps", type=int, default=2)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--mechs", nargs="+", default=["GRR", "OUE", "uRR", "uRAP", "SS"])
    args = ap.parse_args(argv)
    d, n = args.d, args.n
    w = 1.0 / np.arange(1, d + 1)
    p = w / w.sum()
    s = max(1, d // 10)
    sens = list(range(s))
    rng = raw_rng_rates()
    u, bits = rng["uniform"], rng["bits"]
    ss = ul.SS(d, args.eps)
    mechs = {
        "GRR": (ul.GRR(d, args.eps), args.reps, bits / 4),
        "OUE": (ul.OUE(d, args.eps), args.bit_reps, 1 / (2 / bits + d / u)),
        "uRR": (ul.URR(d, sens, args.eps), args.reps, bits / 4),
        "uRAP": (ul.URAP(d, sens, args.eps), args.bit_reps, 1 / (2 / bits + (s + 1) / u)),
        "SS": (ss, args.bit_reps, 1 / (1 / u + (min(ss.k, d - ss.k) + 4) / bits)),
    }
    mechs = {name: mechs[name] for name in args.mechs}
    out = {"device": str(jax.devices()[0]), "cpu_count": os.cpu_count(), "d": d, "n": n, "eps": args.eps,
           "raw_rng_draws_per_s": {k: float(f"{v:.4g}") for k, v in rng.items()}, "mechanisms": {}}
    for name, (mech, reps, limit) in mechs.items():
        secs = time_simulate(mech, p, n, reps)
        ups = n * reps / secs
        out["mechanisms"][name] = {"reps": reps, "seconds": round(secs, 3), "users_per_s": float(f"{ups:.4g}"),
                                   "rng_limit_users_per_s": float(f"{limit:.4g}"),
                                   "fraction_of_rng_limit": round(ups / limit, 3)}
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
