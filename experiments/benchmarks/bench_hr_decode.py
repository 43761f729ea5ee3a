"""Decode time of Hadamard response at Gowalla scale (004 §7): n = 10^7 reports over d = 43750 (K = 65536).

Decode = aggregate (bincount of the reports into int32[K]) + one fast Walsh-Hadamard transform + scaling, jitted,
timed after a warm-up call, median of ``--repeats`` runs. The same for BlockHR on the 25 x 70 grid of 004
Table 1 (1750 blocks of 25 items; one batched FWHT of size 32). Report generation is timed separately.

Usage:
    python experiments/benchmarks/bench_hr_decode.py [--n 10000000] [--d 43750] [--repeats 5]

Measured 2026-11-21 on the shared 2-core CPU under heavy contention (load average ~12; jax 0.10.2):
HR decode 129 ms (FWHT + scale alone 0.7 ms), BlockHR decode 198 ms (0.4 ms); perturbing the 10^7 users
took ~1.1 s. The bincount (scatter-add of 10^7 reports) dominates decode time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

import uldp_jax as ul


def _time(fn, *args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))  # compile + warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(mech, n: int, repeats: int) -> dict:
    key = jax.random.key(0)
    xs = jax.random.randint(jax.random.fold_in(key, 1), (n,), 0, mech.d, dtype=jnp.int32)
    perturb = jax.jit(lambda k, x: mech.perturb_batch(k, x))
    t_perturb = _time(perturb, key, xs, repeats=1)
    ys = jax.block_until_ready(perturb(key, xs))
    decode = jax.jit(lambda y: ul.mechanisms.core.debias(mech, mech.aggregate(y), y.shape[0]))
    fwht_only = jax.jit(lambda st: ul.mechanisms.core.debias(mech, st, n))
    stats = jax.block_until_ready(jax.jit(mech.aggregate)(ys))
    t_decode = _time(decode, ys, repeats=repeats)
    t_fwht = _time(fwht_only, stats, repeats=repeats)
    p_hat = decode(ys)
    return dict(perturb_s=t_perturb, decode_s=t_decode, fwht_s=t_fwht, sum_p_hat=float(p_hat.sum()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--d", type=int, default=43750)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform} ({jax.device_count()} device(s)); "
          f"n = {args.n:,}, d = {args.d:,}, eps = {args.eps}")
    hr = ul.HR(args.d, args.eps)
    per_block = 25
    blocks = [range(i, min(i + per_block, args.d)) for i in range(0, args.d, per_block)]
    blk = ul.BlockHR(blocks, args.eps)
    for name, mech in ((f"HR (K = {hr.K})", hr), (f"BlockHR ({blk.m} blocks, {blk.num_outputs} outputs)", blk)):
        r = bench(mech, args.n, args.repeats)
        print(f"{name:40s} decode (bincount + FWHT) {r['decode_s'] * 1e3:8.1f} ms | FWHT + scale only "
              f"{r['fwht_s'] * 1e3:7.2f} ms | perturb {r['perturb_s']:.2f} s | sum p_hat {r['sum_p_hat']:.4f}")


if __name__ == "__main__":
    main()
