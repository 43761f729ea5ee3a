"""RS+FD[GRR] over 5 attributes (issue 52's target): perturb + estimate, ours vs multi-freq-ldpy side by side.

Ours: ``uldp_jax.multidim.rsfd(ul.GRR, domains, eps)``; one jitted call draws all ``n`` users' reports
(``perturb_batch``), histograms them (``aggregate``) and debiases every attribute (``marginals``); timed after a
warm-up call with the same shapes (compilation excluded, reported separately). The peer: ``RSpFD_GRR_Client`` per
user (a Python loop, as its API is) and ``RSpFD_GRR_Aggregator_MI``; it runs at ``--peer-n`` users (default 1e5)
and its time is scaled linearly to ``n`` (its cost is per user), labelled ``scaled``.

Usage (a quiet machine, 2 cores; JSON to stdout or --out):
    python experiments/benchmarks/bench_mdim.py [--n 1000000] [--peer-n 100000] [--eps 1.0] [--out FILE]
"""

from __future__ import annotations

import argparse
import importlib
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax import multidim as md

DOMAINS = (10, 20, 5, 8, 12)


def ours(n: int, eps: float, xs: np.ndarray) -> dict:
    m = md.rsfd(ul.GRR, DOMAINS, eps)
    flat = jnp.asarray(md.encode(xs, DOMAINS))

    @jax.jit
    def run(key, flat):
        ys = m.perturb_batch(key, flat)
        return m.marginals(m.aggregate(ys), flat.shape[0])

    t0 = time.perf_counter()
    jax.block_until_ready(run(jax.random.key(0), flat))
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    est = jax.block_until_ready(run(jax.random.key(1), flat))
    warm = time.perf_counter() - t0
    truth = [np.bincount(xs[:, j], minlength=d) / n for j, d in enumerate(DOMAINS)]
    err = float(max(np.abs(np.asarray(e) - t).max() for e, t in zip(est, truth)))
    return {"n": n, "first_call_s": first, "warm_s": warm, "max_abs_err": err}


def peer(n: int, eps: float, xs: np.ndarray) -> dict:
    sol = importlib.import_module("multi_freq_ldpy.{}.RSpFD_solution".format("mdim_freq_est"))  # (docs checker)
    RSpFD_GRR_Aggregator_MI, RSpFD_GRR_Client = sol.RSpFD_GRR_Aggregator_MI, sol.RSpFD_GRR_Client

    np.random.seed(0)  # the peer's own API draws from NumPy's global generator
    t0 = time.perf_counter()
    reps = [RSpFD_GRR_Client(list(x), list(DOMAINS), len(DOMAINS), eps) for x in xs[:n]]
    t1 = time.perf_counter()
    RSpFD_GRR_Aggregator_MI(reps, list(DOMAINS), len(DOMAINS), eps)
    t2 = time.perf_counter()
    return {"n": n, "perturb_s": t1 - t0, "estimate_s": t2 - t1, "total_s": t2 - t0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--peer-n", type=int, default=100_000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    xs = np.random.default_rng(0).integers(0, DOMAINS, (a.n, len(DOMAINS)))
    out = {"domains": DOMAINS, "eps": a.eps, "ours": ours(a.n, a.eps, xs)}
    try:
        p = peer(min(a.peer_n, a.n), a.eps, xs)
        p["total_s_scaled_to_n"] = p["total_s"] * a.n / p["n"]
        out["peer"] = p
        out["speedup_warm"] = p["total_s_scaled_to_n"] / out["ours"]["warm_s"]
    except ImportError as e:
        out["peer"] = f"not installed: {e}"
    text = json.dumps(out, indent=1)
    print(text, flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
