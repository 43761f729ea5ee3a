"""The engine's repetition kernels (per-user and counts) and the runner of a plan's statistics.

A kernel computes the statistics of the repetitions ``rep_ids`` (``-1``: padding), repetition ``r`` from
``fold_in(key, r)``; its shapes depend only on static sizes and on ``len(rep_ids)`` (a bucket), so a sweep over
``n`` and ``reps`` reuses the compiled kernel. ``per_user_stats`` is the per-user kernel for callers that hold
their own population (collaborative sampling): the same layout, hence the same statistics for the same key.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _progress
from uldp_jax.mechanisms.core import num_stats
from uldp_jax.engine import _counts_path, _shard
from uldp_jax.engine._layout import rep_stats_range

TRACE_COUNTS = {"per_user": 0, "counts": 0}  # incremented at trace time (tests check that nothing retraces)


def per_user_kernel(key, mech, n, data, rep_ids, *, axis, iid, block_size, chunk_blocks, rep_batch):
    """Stats of the repetitions ``rep_ids`` (``-1``: padding, skipped); ``n`` is data, chunk counts are traced.

    Shapes depend only on the static sizes and on ``len(rep_ids)`` (a bucket), so a sweep over ``n`` and
    ``reps`` reuses the compiled kernel. One device: the ``n // (chunk_blocks * block_size)`` full chunks, then
    the remaining blocks one at a time, so only ``ceil(n / block_size)`` blocks are drawn (a small ``n`` draws
    its own blocks, not a chunk). Users mode: device ``i`` sums its own range of chunks (the last one padded).
    """
    TRACE_COUNTS["per_user"] += 1
    per_chunk = chunk_blocks * block_size
    full = n // per_chunk
    num_chunks = full + (n % per_chunk > 0).astype(n.dtype)  # no int32 overflow near 2**31
    if axis is not None:
        ndev = jax.lax.psum(1, axis)
        local = (num_chunks + ndev - 1) // ndev
        first = jax.lax.axis_index(axis) * local
        count = jnp.clip(num_chunks - first, 0, local)

    def one_rep(r):
        key_r = jax.random.fold_in(key, jnp.maximum(r, 0))
        if axis is not None:
            return rep_stats_range(key_r, mech, n, data, iid, block_size, chunk_blocks, first, count)
        rest = n - full * per_chunk
        rest_blocks = rest // block_size + (rest % block_size > 0).astype(n.dtype)
        bulk = rep_stats_range(key_r, mech, n, data, iid, block_size, chunk_blocks, jnp.int32(0), full)
        return bulk + rep_stats_range(key_r, mech, n, data, iid, block_size, 1, full * chunk_blocks, rest_blocks)

    R = rep_ids.shape[0]
    batch = min(rep_batch, R)
    nb = -(-R // batch)
    ids = jnp.full((nb * batch,), -1, rep_ids.dtype).at[:R].set(rep_ids)
    todo = -(-jnp.sum(rep_ids >= 0) // batch)

    def body(j, out):
        st = jax.vmap(one_rep)(jax.lax.dynamic_slice_in_dim(ids, j * batch, batch))
        return jax.lax.dynamic_update_slice_in_dim(out, st, j * batch, axis=0)

    stats = jax.lax.fori_loop(0, todo, body, jnp.zeros((nb * batch, num_stats(mech)), jnp.int32))[:R]
    return stats if axis is None else jax.lax.psum(stats, axis)


def counts_kernel(key, mech, n, data, rep_ids, *, axis, iid, out_dtype):
    """Stats of the repetitions ``rep_ids`` on the exact counts path (padding ids are drawn and dropped)."""
    TRACE_COUNTS["counts"] += 1

    def one_rep(r):
        key_r = jax.random.fold_in(key, jnp.maximum(r, 0))  # padding reps (-1) are computed and dropped
        if iid:
            stats = _counts_path.sample_counts_iid(key_r, mech, n, data)
        else:
            stats = _counts_path.sample_counts(key_r, mech, data)
        return jnp.round(stats).astype(out_dtype)

    return jax.vmap(one_rep)(rep_ids)  # O(d) memory per repetition; rep_chunk bounds the batch


class progress_bar:
    def __init__(self, progress, plan):
        # the bar's first line says the run's size: grid points x repetitions x users, and the path
        size = _progress.run_size(plan.reps, plan.n, plan.grid, plan.path)
        self.bar = _progress.make_progress(progress, plan.reps, size=size)

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc):
        self.bar.close()


def run_stats(plan: Any, key: jax.Array, progress: Any = False) -> jax.Array:
    """``int[(g,) reps, num_stats]``: the statistics of every repetition of ``plan`` (``_plan.Plan``)."""
    grid = plan.grid is not None
    if plan.path == "counts":
        out_dtype = _counts_path.count_dtype(plan.n)
        static = (("iid", plan.iid), ("out_dtype", out_dtype))
        fn = _shard.compile_kernel(counts_kernel, static, plan.mesh, plan.mode, grid)
        with _counts_path.x64_context():
            # fixed model: the exact integer counts (target * n is off by an ulp for some items, e.g. 55 / 400 * 400,
            # and a count of 54.999... kept only 54 users, moving one user per repetition at large eps)
            data = jnp.asarray(plan.target if plan.iid else np.rint(plan.target * plan.n), jnp.float64)
            args = (key, plan.mech, jnp.asarray(plan.n, jnp.float64), data)
            with progress_bar(progress, plan) as bar:
                # one call per chunk, padded to a bucket: one compile per chunk size; the padding repetitions cost at
                # most 1.5x the warm call, far less than more compiles (experiments/benchmarks/README.md (k))
                stats = _shard.run_chunks(fn, args, plan.reps, plan.rep_chunk, grid, bar, plan.rep_len)
        return jnp.asarray(stats)
    static = (("iid", plan.iid), ("block_size", plan.block_size), ("chunk_blocks", plan.chunk_blocks),
              ("rep_batch", plan.rep_batch))
    fn = _shard.compile_kernel(per_user_kernel, static, plan.mesh, plan.mode, grid)
    args = (key, plan.mech, jnp.asarray(plan.n, jnp.int32), plan.data)
    with progress_bar(progress, plan) as bar:
        stats = _shard.run_chunks(fn, args, plan.reps, plan.rep_chunk, grid, bar, plan.rep_len)
    return jnp.asarray(stats)


def per_user_stats(key: jax.Array, mech: Any, rep_ids: Any, n: int, data: Any, *, iid: bool, block_size: int,
                   chunk_blocks: int, paired: bool = False) -> jax.Array:
    """``int32[len(rep_ids), num_stats]`` of the per-user kernel on one device, for a caller's own population.

    ``paired=True``: ``mech`` carries a leading axis of ``len(rep_ids)`` and repetition ``rep_ids[i]`` runs
    mechanism ``i`` (collaborative sampling tunes one mechanism per repetition); else every repetition runs
    ``mech``. The statistics equal ``simulate``'s per-user path for the same key, population and ``block_size``.
    """
    static = (("iid", iid), ("block_size", block_size), ("chunk_blocks", chunk_blocks), ("rep_batch", 1))
    rep_ids = jnp.asarray(np.asarray(rep_ids, np.int32))
    n = jnp.asarray(n, jnp.int32)
    if not paired:
        return _shard.compile_kernel(per_user_kernel, static, None, "reps", False)(key, mech, n, data, rep_ids)
    return _paired_kernel(static)(key, mech, n, data, rep_ids)


_PAIRED = {}


def _paired_kernel(static: tuple):
    """A jitted ``f(key, mechs, n, data, rep_ids)``: repetition ``rep_ids[i]`` with mechanism ``i`` (``lax.map``)."""
    if static not in _PAIRED:
        kw = dict(static)

        def body(key, mechs, n, data, rep_ids):
            one = lambda a: per_user_kernel(key, a[1], n, data, a[0][None], axis=None, **kw)[0]
            return jax.lax.map(one, (rep_ids, mechs))

        _PAIRED[static] = jax.jit(body)
    return _PAIRED[static]
