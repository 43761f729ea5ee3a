"""Multi-device execution of simulation kernels with ``jax.sharding`` + ``jax.shard_map``.

A *kernel* is a pure function ``local(key, mech, n, data, rep_ids, *, axis) -> stats`` computing the statistics
of the repetitions ``rep_ids`` (each from ``fold_in(key, r)``, so the values never depend on which device or
batch computes them). Two layouts over a 1-D mesh with axis ``"dev"``:

* ``"reps"``: ``rep_ids`` is split across devices (padded to a multiple of the device count; the padding reps
  are computed and dropped).
* ``"users"``: every device runs all repetitions on its own slice of user chunks and the int32 partial sums are
  combined with ``lax.psum`` (exact integer addition, hence bit-identical to one device).

Multi-host: call ``jax.distributed.initialize()`` on every host before anything else; ``jax.devices()`` then
lists the global devices, the same mesh spans all hosts, every process calls ``simulate`` with the same
arguments, and the sharded result is gathered to every process with
``jax.experimental.multihost_utils.process_allgather``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

AXIS = "dev"


def resolve_devices(devices: Sequence[Any] | None) -> list:
    """``devices`` as a list (default: all visible devices, every host included)."""
    if devices is None:
        return list(jax.devices())
    devices = list(devices)
    if not devices or not all(isinstance(dv, jax.Device) for dv in devices):
        raise TypeError(f"Expected devices={devices!r} to be a non-empty sequence of jax.Device.")
    return devices


def make_mesh(devices: Sequence[Any]) -> Mesh | None:
    """A 1-D mesh over ``devices``; ``None`` for a single device (plain ``jit``)."""
    if len(devices) == 1:
        return None
    return Mesh(np.asarray(devices, dtype=object), (AXIS,))


@functools.lru_cache(maxsize=128)
def compile_kernel(local: Callable, static: tuple, mesh: Mesh | None, mode: str, grid: bool) -> Callable:
    """A jitted ``f(key, mech, n, data, rep_ids)`` running ``local(..., **dict(static))`` on ``mesh``.

    Cached on its (hashable) arguments, so repeated calls and repetition chunks never retrace.
    """
    kw = dict(static)

    def body(key, mech, n, data, rep_ids):
        axis = AXIS if (mesh is not None and mode == "users") else None
        run = lambda m: local(key, m, n, data, rep_ids, axis=axis, **kw)
        return jax.vmap(run)(mech) if grid else run(mech)

    if mesh is None:
        return jax.jit(body)
    if mode == "reps":
        out = P(None, AXIS) if grid else P(AXIS)
        in_specs = (P(), P(), P(), P(), P(AXIS))
    elif mode == "users":
        out = P()
        in_specs = (P(), P(), P(), P(), P())
    else:
        raise ValueError(f"Expected shard={mode!r} in ('reps', 'users').")
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out, check_vma=False))


def to_host(x: jax.Array) -> np.ndarray:
    """Gathers a (possibly multi-host) array to a NumPy array on this process."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    from jax.experimental import multihost_utils  # pragma: no cover - multi-host only

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def run_chunks(fn: Callable, args: tuple, reps: int, rep_chunk: int, grid: bool, progress: Any,
               rep_len: int | None = None) -> np.ndarray:
    """Runs ``fn(*args, rep_ids)`` over repetitions in host-side chunks of ``rep_chunk``.

    ``rep_ids`` always has ``rep_len`` entries (default ``rep_chunk``; a bucket >= it), ``-1`` past the chunk's
    repetitions, so one compiled function serves every chunk and every nearby ``reps``; kernels skip (per-user) or
    drop (counts) the ``-1`` entries. ``progress.update`` is called after each chunk. Returns the stats of
    repetitions ``0 .. reps - 1`` (rep axis 1 for a grid, else 0); a kernel with several outputs (a pytree, e.g.
    report kernels' ``(estimates, stats)``) gets each output so.
    """
    rep_len = rep_chunk if rep_len is None else rep_len
    axis = 1 if grid else 0
    parts = []
    for start in range(0, reps, rep_chunk):
        take = min(rep_chunk, reps - start)
        rep_ids = np.where(np.arange(rep_len) < take, start + np.arange(rep_len), -1).astype(np.int32)
        part = jax.tree_util.tree_map(to_host, fn(*args, jnp.asarray(rep_ids)))
        parts.append(jax.tree_util.tree_map(lambda a: a[:, :take] if grid else a[:take], part))
        progress.update(take)
    return jax.tree_util.tree_map(lambda *a: np.concatenate(a, axis=axis), *parts)
