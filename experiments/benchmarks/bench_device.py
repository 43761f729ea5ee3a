"""Backend-agnostic engine benchmark (issue 17): per-user and counts paths, HR decoding, against raw RNG throughput.

Records the device, the backend and the versions; every row reports compile (first call minus the best warm
call) separately from the best of ``--repeat`` warm calls, and ``words_per_s`` / ``raw_fraction`` against
``jax.random.bits`` (threefry) measured in the same run. ``--reduced`` (default on CPU) shrinks n and reps and
labels the JSON ``"reduced": true``; the sizing policy in force (``engine.sizing()``) is recorded, and
``--chunk-bytes`` sweeps it (results are identical for every size; only the time changes).

EM rows (``path="em"``): RAPPOR and uRAP at 001 Fig 7's setting (d = 12800, s = 2432, n = 240000, eps = 6;
``--reduced``: d, s and n / 10, labelled with their sizes), timed as ``bench_em.py`` and README do it:
``ys = ul.perturb(key, mech, xs)`` then ``ul.estimate(mech, ys, "em", tol=1e-7, pass_dtype=jnp.float32)``,
with x64 enabled locally (``jax.enable_x64(True)``); ``xs`` are n draws of a Zipf(1) distribution in a random
order, as in ``bench_em.py``. ``--skip-em`` leaves them out, ``--em-only`` runs only them.

Run: ``python experiments/benchmarks/bench_device.py [--full] [--out FILE.json]``. Committed:
``bench_device_cpu_reduced.json`` = ``--chunk-bytes 262144 4194304 --out ...`` on the 2-core CPU with nothing else
running (2026-11-25, load average 1.1-1.5; 73 s): per-user GRR/uRR at 0.80/0.56 of the raw threefry word rate
(9.0e7 words/s), the counts path at 10^9 users x 100 reps in 0.06-0.08 s warm (SS: 10 reps, 7.5 s), and the
reduced EM rows. No accelerator has been lent to this project yet: no GPU JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.simulate import _engine as engine

D = 625
S = tuple(range(63))  # |X_S| = d / 10


def _timed(fn, repeat: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return max(first - best, 0.0), best


def raw_bits_rate(words: int, repeat: int) -> float:
    """uint32 words a second from ``jax.random.bits`` (threefry), jitted, warm."""
    f = jax.jit(lambda k: jnp.sum(jax.random.bits(k, (words,), jnp.uint32) & 1))
    _, best = _timed(lambda: f(jax.random.key(0)), repeat)
    return words / best


def em_rows(reduced: bool, repeat: int) -> list:
    """EM for RAPPOR and uRAP at 001 Fig 7's setting (reduced: d, s, n / 10), through the public API."""
    d, s, n, eps = (1280, 243, 24_000, 6.0) if reduced else (12_800, 2432, 240_000, 6.0)
    rng = np.random.default_rng(2019)
    w = 1.0 / np.arange(1, d + 1)
    p = np.empty(d)
    p[rng.permutation(d)] = w / w.sum()
    rows = []
    with jax.enable_x64(True):
        xs = jnp.asarray(np.random.default_rng(1).choice(d, size=n, p=p), jnp.int32)
        for name, mech in {"RAPPOR": ul.RAPPOR(d, eps), "uRAP": ul.URAP(d, tuple(range(s)), eps)}.items():
            def est(m=mech):
                ys = ul.perturb(jax.random.key(0), m, xs)
                return ul.estimate(m, ys, "em", tol=1e-7, pass_dtype=jnp.float32)

            compile_s, warm = _timed(est, repeat)
            tv = 0.5 * float(np.abs(np.asarray(est(), np.float64) - np.bincount(np.asarray(xs), minlength=d) / n).sum())
            rows.append(dict(path="em", mech=name, d=d, s=s, n=n, eps=eps, reduced=reduced, compile_s=compile_s,
                             warm_s=warm, tv_em=tv))
    return rows


WORDS_PER_USER = {"GRR": 2, "uRR": 2, "OUE": D, "uRAP": len(S) + 1, "OLH": 3, "SS": 4}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="paper-sized n and reps (default: reduced on CPU)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--chunk-bytes", type=int, nargs="*", default=[], help="extra per-user chunk budgets to sweep")
    ap.add_argument("--out", default=None)
    ap.add_argument("--skip-em", action="store_true", help="leave out the EM rows")
    ap.add_argument("--em-only", action="store_true", help="only the EM rows (and the raw RNG rate)")
    args = ap.parse_args()
    dev = jax.devices()[0]
    reduced = not args.full
    n_pu, reps_pu = (200_000, 4) if reduced else (10_000_000, 100)
    n_c, reps_c = (10**9, 100)
    p = np.random.default_rng(0).dirichlet(np.ones(D))
    raw = raw_bits_rate(2**24 if reduced else 2**28, args.repeat)
    rows = []
    per_user = {"GRR": ul.GRR(D, 1.0), "uRR": ul.URR(D, S, 1.0), "OUE": ul.OUE(D, 1.0), "uRAP": ul.URAP(D, S, 1.0),
                "OLH": ul.OLH(D, 1.0), "SS": ul.SS(D, 1.0)}
    budgets = [] if args.em_only else [None] + list(args.chunk_bytes)
    for budget in budgets:
        engine.SIZING_OVERRIDE.clear()
        if budget:
            engine.SIZING_OVERRIDE["chunk_bytes"] = budget
        for name, mech in per_user.items():
            n = n_pu // 10 if name in ("OUE", "SS") and reduced else n_pu
            fn = lambda m=mech, n=n: ul.simulate_stats(jax.random.key(1), m, p=p, n=n, reps=reps_pu, path="per_user")[0]
            compile_s, warm = _timed(fn, args.repeat)
            rate = n * reps_pu * WORDS_PER_USER[name] / warm
            rows.append(dict(path="per_user", mech=name, n=n, reps=reps_pu, chunk_bytes=engine.sizing(dev).chunk_bytes,
                             compile_s=compile_s, warm_s=warm, words_per_s=rate, raw_fraction=rate / raw))
    engine.SIZING_OVERRIDE.clear()
    counts = {"GRR": ul.GRR(D, 1.0), "OUE": ul.OUE(D, 1.0), "uRAP": ul.URAP(D, S, 1.0), "SS": ul.SS(D, 1.0)}
    for name, mech in ({} if args.em_only else counts).items():
        reps = 10 if name == "SS" else reps_c
        fn = lambda m=mech, r=reps: ul.simulate_stats(jax.random.key(2), m, p=p, n=n_c, reps=r, path="counts")[0]
        compile_s, warm = _timed(fn, args.repeat)
        rows.append(dict(path="counts", mech=name, n=n_c, reps=reps, compile_s=compile_s, warm_s=warm))
    if not args.em_only:
        K = 1024 if reduced else 65536
        hr = ul.HR(K - 1, 1.0)
        stats = ul.simulate_stats(jax.random.key(3), hr, p=np.full(K - 1, 1.0 / (K - 1)), n=10**6, reps=1,
                                  path="counts")[0][0]
        dec = jax.jit(lambda m, st: m.debias(st, 10**6))
        compile_s, warm = _timed(lambda: dec(hr, stats), args.repeat)
        rows.append(dict(path="hr_decode", mech="HR", K=K, compile_s=compile_s, warm_s=warm))
    if not args.skip_em:
        rows += em_rows(reduced, args.repeat)
    out = dict(device=str(dev), platform=dev.platform, device_kind=getattr(dev, "device_kind", None),
               backend=jax.default_backend(), jax=jax.__version__, jaxlib=jax.lib.__version__ if hasattr(
                   jax.lib, "__version__") else None, python=platform.python_version(), reduced=reduced,
               sizing=engine.sizing(dev)._asdict(), raw_threefry_words_per_s=raw, rbg="refused by simulate (chunk "
               "invariance); not measured", loadavg=os.getloadavg(), rows=rows)
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
