"""Backend-agnostic engine benchmark (issues 17, 26): per-user and counts paths, HR decoding, EM, against raw RNG.

Records the device, the backend and the versions; every row reports compile (first call minus the best warm
call) separately from the best of ``--repeat`` warm calls, the number of kernels the engine compiled for it
(``compiles``: traces of its per-user / counts kernels, ``uldp_jax.engine._kernels.TRACE_COUNTS``) and the
peak device memory (``peak_bytes``: ``device.memory_stats()["peak_bytes_in_use"]`` after the row, where the
backend reports it; ``null`` on CPU, which reports no memory statistics). Per-user rows give ``words_per_s`` /
``raw_fraction`` against ``jax.random.bits`` (threefry) measured in the same run; the random words a user costs
are the sampler's plus the 2 of the alias draw of its value (iid model): GRR and uRR 2 + 2, OUE and RAPPOR
d + 2, uRAP |X_S| + 1 + 2, OLH 3 + 2, SS ``min(k, d - k) + 2`` (Floyd's algorithm with a spare word) + 2, i.e.
172 at d = 625 (k = 168), not 4.

Counts rows: every mechanism with an exact count sampler (GRR, uRR, OUE, RAPPOR, uRAP, uUE, HR, SS, uSS; iid
model, ``path="counts"``) at each ``--d`` (default 625 and 12800), 10^9 users x ``--counts-reps`` repetitions
(100 by default; SS and uSS, whose item scans take seconds per repetition, ``--ss-reps``).

EM rows (``path="em"``): RAPPOR and uRAP at 001 Fig 7's setting (d = 12800, s = 2432, n = 240000, eps = 6;
``--reduced``: d, s and n / 10, labelled with their sizes), timed two ways: ``ul.perturb`` then
``ul.estimate(mech, ys, "em", tol=1e-7, pass_dtype=jnp.float32)`` with x64 enabled locally, as ``bench_em.py``
and README do it, and end to end through ``ul.simulate(..., methods=("em",), reps=1)`` (rows ``em-simulate``,
iid model with the same p). ``--skip-em`` leaves them out, ``--em-only`` runs only them.

``--reduced`` (default unless ``--full``) shrinks the per-user n and reps, and labels the JSON
``"reduced": true``; ``--chunk-bytes`` sweeps the per-user chunk budget (results are identical for every size;
only the time changes). Nothing here is CPU-specific: on a GPU run it with ``--full``.

Run: ``python experiments/benchmarks/bench_device.py [--full] [--d 625 12800] [--out FILE.json]``.
Committed: ``bench_device_cpu_reduced.json`` = ``--repeat 1 --ss-reps 1`` on the 2-core CPU, reduced and loaded
(shared with other sessions; its ``note`` and ``loadavg`` fields give the load and caveats). No accelerator has
been lent to this project yet: no GPU JSON.
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
from uldp_jax.engine import _engine as engine
from uldp_jax.engine import _kernels

D = 625
S = tuple(range(63))  # |X_S| = d / 10 (per-user rows)


def peak_bytes(dev) -> int | None:
    """Peak device memory in use so far, or ``None`` where the backend reports no memory statistics (CPU)."""
    try:
        stats = dev.memory_stats() or {}
    except Exception:  # noqa: BLE001 - optional on some backends
        return None
    return stats.get("peak_bytes_in_use")


def compiles() -> int:
    return sum(_kernels.TRACE_COUNTS.values())


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
        for name, mech in {"RAPPOR": ul.RAPPOR(d, eps), "uRAP": ul.URAP(d, tuple(range(s)), eps)}.items():
            c0 = compiles()
            run = lambda m=mech: ul.simulate(jax.random.key(4), m, p=p, n=n, reps=1, methods=("em",)).estimates["em"]
            compile_s, warm = _timed(run, repeat)
            tv = 0.5 * float(np.abs(np.asarray(run(), np.float64)[0] - p).sum())
            rows.append(dict(path="em-simulate", mech=name, d=d, s=s, n=n, eps=eps, reduced=reduced,
                             compile_s=compile_s, warm_s=warm, compiles=compiles() - c0, tv_em=tv))
    return rows


ALIAS_WORDS = 2  # the alias draw of each user's value (iid model)


def words_per_user(name: str, mech) -> int:
    """Random uint32 words one user costs on the per-user path (iid model): the sampler's plus the alias draw."""
    d = mech.d
    sampler = {"GRR": lambda: 2, "uRR": lambda: 2, "OUE": lambda: d, "RAPPOR": lambda: d,
               "uRAP": lambda: len(S) + 1, "OLH": lambda: 3, "SS": lambda: min(mech.k, d - mech.k) + 2}[name]()
    return sampler + ALIAS_WORDS


def counts_mechs(d: int) -> dict:
    sens = tuple(range(max(1, d // 10)))
    return {"GRR": ul.GRR(d, 1.0), "uRR": ul.URR(d, sens, 1.0), "OUE": ul.OUE(d, 1.0), "RAPPOR": ul.RAPPOR(d, 1.0),
            "uRAP": ul.URAP(d, sens, 1.0), "uUE": ul.UUE(d, sens, 1.0), "HR": ul.HR(d, 1.0), "SS": ul.SS(d, 1.0),
            "uSS": ul.USS(d, sens, 1.0)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true", help="paper-sized n and reps (default: reduced on CPU)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--chunk-bytes", type=int, nargs="*", default=[], help="extra per-user chunk budgets to sweep")
    ap.add_argument("--out", default=None)
    ap.add_argument("--skip-em", action="store_true", help="leave out the EM rows")
    ap.add_argument("--em-only", action="store_true", help="only the EM rows (and the raw RNG rate)")
    ap.add_argument("--d", type=int, nargs="+", default=[625, 12800], help="domain sizes of the counts rows")
    ap.add_argument("--counts-reps", type=int, default=100)
    ap.add_argument("--ss-reps", type=int, default=None, help="repetitions of the SS/uSS counts rows "
                    "(default: --counts-reps; the item scans take seconds per repetition at d = 12800)")
    ap.add_argument("--counts-mechs", nargs="+", default=None, help="restrict the counts rows")
    args = ap.parse_args()
    dev = jax.devices()[0]
    reduced = not args.full
    n_pu, reps_pu = (200_000, 4) if reduced else (10_000_000, 100)
    n_c = 10**9
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
            c0 = compiles()
            compile_s, warm = _timed(fn, args.repeat)
            rate = n * reps_pu * words_per_user(name, mech) / warm
            rows.append(dict(path="per_user", mech=name, n=n, reps=reps_pu, chunk_bytes=engine.sizing(dev).chunk_bytes,
                             compile_s=compile_s, warm_s=warm, compiles=compiles() - c0,
                             words_per_user=words_per_user(name, mech), words_per_s=rate, raw_fraction=rate / raw,
                             peak_bytes=peak_bytes(dev)))
    engine.SIZING_OVERRIDE.clear()
    for d in ([] if args.em_only else args.d):
        pd = np.random.default_rng(0).dirichlet(np.ones(d))
        for name, mech in counts_mechs(d).items():
            if args.counts_mechs and name not in args.counts_mechs:
                continue
            reps = (args.ss_reps or args.counts_reps) if name in ("SS", "uSS") else args.counts_reps
            fn = lambda m=mech, r=reps, pd=pd: ul.simulate_stats(jax.random.key(2), m, p=pd, n=n_c, reps=r,
                                                                 path="counts")[0]
            c0 = compiles()
            compile_s, warm = _timed(fn, args.repeat)
            rows.append(dict(path="counts", mech=name, d=d, n=n_c, reps=reps, compile_s=compile_s, warm_s=warm,
                             compiles=compiles() - c0, peak_bytes=peak_bytes(dev)), )
            print(json.dumps(rows[-1]), flush=True)
    if not args.em_only:
        K = 1024 if reduced else 65536
        hr = ul.HR(K - 1, 1.0)
        stats = ul.simulate_stats(jax.random.key(3), hr, p=np.full(K - 1, 1.0 / (K - 1)), n=10**6, reps=1,
                                  path="counts")[0][0]
        dec = jax.jit(lambda m, st: ul.mechanisms.core.debias(m, st, 10**6))
        compile_s, warm = _timed(lambda: dec(hr, stats), args.repeat)
        rows.append(dict(path="hr_decode", mech="HR", K=K, compile_s=compile_s, warm_s=warm))
    if not args.skip_em:
        rows += em_rows(reduced, args.repeat)
    out = dict(device=str(dev), platform=dev.platform, device_kind=getattr(dev, "device_kind", None),
               backend=jax.default_backend(), jax=jax.__version__, jaxlib=jax.lib.__version__ if hasattr(
                   jax.lib, "__version__") else None, python=platform.python_version(), reduced=reduced,
               sizing=engine.sizing(dev)._asdict(), raw_threefry_words_per_s=raw,
               peak_bytes_note=("device.memory_stats() reports no peak on this backend" if peak_bytes(dev) is None
                                else "peak_bytes_in_use after each row (cumulative peak)"), rbg="refused by simulate (chunk "
               "invariance); not measured", loadavg=os.getloadavg(), rows=rows)
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
