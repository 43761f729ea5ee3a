"""Monte Carlo engine: users x repetitions x mechanism grids, memory-bounded, on device.

Randomness layout (what makes results independent of chunking): repetition ``r`` uses
``fold_in(key, r)``; inside it, users are cut into fixed blocks of ``block_size`` users and block ``b`` uses
``fold_in(fold_in(key, r), b)``. Blocks are grouped into chunks of ``chunk_blocks`` blocks that are processed
with ``vmap`` and accumulated with ``lax.scan``, so peak memory is ``O(chunk_blocks * block_size * m)`` and the
result for a given ``(key, block_size)`` is identical for every ``chunk_blocks``. Repetitions run under
``lax.map``; only the aggregate statistics (``int32[m]`` per repetition) are kept, never per-user reports.

Variance models (SPEC.md): ``xs=...`` is the *fixed* model (exactly these users' values); ``p=..., n=...`` is the
*iid* model (each user's value drawn from ``p`` by inverse CDF, in float32: item masses below ~6e-8 are
under-sampled by at most 2^-24 each).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _api
from uldp_jax import _validate
from uldp_jax.estimation import _registry

DEFAULT_BLOCK_SIZE = 1024
DEFAULT_CHUNK_BYTES = 128 * 2**20


class SimResult(NamedTuple):
    """Output of ``simulate``.

    Attributes:
      estimates: ``{method: float[r, d]}`` (``float[g, r, d]`` for a batched grid of ``g`` mechanisms).
      stats: ``int32[r, num_stats]`` (or ``[g, r, num_stats]``) aggregate statistics per repetition.
      target: ``float64[d]`` the distribution being estimated (``p`` in the iid model; the empirical
        distribution of ``xs`` in the fixed model).
      n: number of users per repetition.
    """

    estimates: dict
    stats: jax.Array
    target: np.ndarray
    n: int


def grid_size(mech: Any) -> int | None:
    """``None`` for a single mechanism; ``g`` when its leaves carry a leading grid axis of size ``g``."""
    shapes = {np.shape(leaf) for leaf in jax.tree_util.tree_leaves(mech)}
    ndims = {len(s) for s in shapes}
    if ndims <= {0}:
        return None
    sizes = {s[0] for s in shapes if len(s) >= 1}
    if len(sizes) != 1 or max(ndims) != 1:
        raise ValueError(f"Expected a single mechanism or a 1-D grid of mechanisms, got leaf shapes {shapes}.")
    return sizes.pop()


def _choose_chunk_blocks(mech: Any, block_size: int, num_blocks: int) -> int:
    per_block = block_size * max(int(getattr(mech, "num_stats", 1)), 1) * 4 * 3
    return int(max(1, min(num_blocks, DEFAULT_CHUNK_BYTES // per_block)))


def block_inputs(key_r: jax.Array, b: jax.Array, n: jax.Array, data: jax.Array, iid: bool, block_size: int):
    """The randomness layout of one block of users: ``(key for the mechanism, xs int32[B], mask bool[B])``.

    Block ``b`` of repetition key ``key_r`` covers users ``[b * B, (b + 1) * B)``; users ``>= n`` are masked.
    In the iid model ``data`` is the float32 CDF of ``p``; in the fixed model it is the padded ``xs``.
    Report-based estimators regenerate exactly the reports behind ``stats`` with
    ``mech.perturb_batch(*block_inputs(...)[:2])`` (``sample_stats`` uses the same draws as ``perturb_batch``).
    """
    kx, ky = jax.random.split(jax.random.fold_in(key_r, b))
    idx = b * block_size + jnp.arange(block_size)
    w = idx < n
    if iid:
        u = jax.random.uniform(kx, (block_size,))
        xs = jnp.clip(jnp.searchsorted(data, u, side="right"), 0, data.shape[0] - 1).astype(jnp.int32)
    else:
        xs = jax.lax.dynamic_slice_in_dim(data, b * block_size, block_size)
    return ky, xs, w


def _stats_one_rep(key_r, mech, n, data, iid: bool, block_size: int, chunk_blocks: int, num_chunks: int):
    """Aggregate statistics of one repetition (all users), chunked over blocks of users."""

    def block_stats(b):
        ky, xs, w = block_inputs(key_r, b, n, data, iid, block_size)
        return mech.sample_stats(ky, xs, w)

    def chunk(total, c):
        bs = c * chunk_blocks + jnp.arange(chunk_blocks)
        return total + jnp.sum(jax.vmap(block_stats)(bs), axis=0, dtype=jnp.int32), None

    total, _ = jax.lax.scan(chunk, jnp.zeros(mech.num_stats, jnp.int32), jnp.arange(num_chunks))
    return total


def _simulate_stats(key, mech, n, data, reps: int, iid: bool, block_size: int, chunk_blocks: int,
                    num_chunks: int, rep_batch: int):
    def one_rep(r):
        return _stats_one_rep(jax.random.fold_in(key, r), mech, n, data, iid, block_size, chunk_blocks,
                              num_chunks)

    return jax.lax.map(one_rep, jnp.arange(reps), batch_size=rep_batch)


_simulate_stats_jit = jax.jit(
    _simulate_stats, static_argnames=("reps", "iid", "block_size", "chunk_blocks", "num_chunks", "rep_batch"))


def _grid_stats(key, mech, n, data, **static):
    return jax.vmap(lambda m: _simulate_stats(key, m, n, data, **static))(mech)


_grid_stats_jit = jax.jit(
    _grid_stats, static_argnames=("reps", "iid", "block_size", "chunk_blocks", "num_chunks", "rep_batch"))


def simulate_stats(key: jax.Array, mech: Any, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
                   block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None,
                   rep_batch: int = 1) -> tuple[jax.Array, np.ndarray, int]:
    """Simulates ``reps`` repetitions and returns ``(stats int32[(g,) r, m], target float64[d], n)``.

    See ``simulate`` for the arguments.
    """
    _validate.check_key(key)
    _api._check_mech(mech)
    reps = _validate.check_int("reps", reps, minimum=1)
    block_size = _validate.check_int("block_size", block_size, minimum=1)
    rep_batch = _validate.check_int("rep_batch", rep_batch, minimum=1)
    d = mech.d
    if (xs is None) == (p is None):
        raise ValueError("Pass either xs=... (fixed model) or p=... with n=... (iid model), not both.")
    if xs is not None:
        if n is not None:
            raise ValueError("Pass n only with p=... (iid model); with xs=..., n = len(xs).")
        xs = _validate.check_items("xs", xs, d, ndim=1)
        n = int(xs.shape[0])
        if n < 1:
            raise ValueError("Expected xs to hold at least one user.")
        target = np.bincount(np.asarray(xs), minlength=d).astype(np.float64) / n
        iid = False
    else:
        p64 = _validate.check_distribution("p", p, d)
        n = _validate.check_int("n", n, minimum=1)
        target = p64
        iid = True
    if n >= 2**31:
        raise ValueError(f"Expected n={n} < 2**31 on the per-user path (int32 counts).")
    num_blocks = math.ceil(n / block_size)
    if chunk_blocks is None:
        chunk_blocks = _choose_chunk_blocks(mech, block_size, num_blocks)
    chunk_blocks = _validate.check_int("chunk_blocks", chunk_blocks, minimum=1)
    chunk_blocks = min(chunk_blocks, num_blocks)
    num_chunks = math.ceil(num_blocks / chunk_blocks)
    if iid:
        cdf = np.cumsum(target)
        cdf = cdf / cdf[-1]
        data = jnp.asarray(cdf, dtype=jnp.float32)
    else:
        padded = np.zeros(num_chunks * chunk_blocks * block_size, dtype=np.int32)
        padded[:n] = np.asarray(xs)
        data = jnp.asarray(padded)
    static = dict(reps=reps, iid=iid, block_size=block_size, chunk_blocks=chunk_blocks, num_chunks=num_chunks,
                  rep_batch=min(rep_batch, reps))
    g = grid_size(mech)
    fn = _simulate_stats_jit if g is None else _grid_stats_jit
    stats = fn(key, mech, jnp.asarray(n, jnp.int32), data, **static)
    return stats, target, n


def simulate(key: jax.Array, mech: Any, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
             methods: Sequence[str] = ("emp",), method_options: dict | None = None,
             block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None,
             rep_batch: int = 1) -> SimResult:
    """Runs a Monte Carlo study: perturb every user, aggregate on device, estimate, for ``reps`` repetitions.

    Args:
      key: PRNG key; repetition ``r`` uses ``fold_in(key, r)``.
      mech: a mechanism, or a batched grid of one kind (leaves with a leading axis, e.g.
        ``jax.vmap(lambda e: ul.GRR(8, e))(eps_grid)``), run as one call with common random numbers.
      xs: ``int32[n]`` true values (fixed model), or
      p: ``float[d]`` distribution and ``n`` users (iid model).
      reps: number of repetitions (>= 1).
      methods: estimation methods over stats (``ul.estimation.method_names()``).
      method_options: ``{method: {option: value}}``.
      block_size: users per randomness block (results depend on it; default 1024).
      chunk_blocks: blocks processed at once (memory knob; results do not depend on it).
      rep_batch: repetitions vectorised together inside ``lax.map``.

    Returns:
      ``SimResult`` with ``estimates[method]`` of shape ``[reps, d]`` (``[g, reps, d]`` for a grid).
    """
    if isinstance(methods, str):
        methods = (methods,)
    method_options = dict(method_options or {})
    resolved = {m: _registry.get_method(m) for m in methods}
    for m, spec in resolved.items():
        if spec.input != "stats":
            raise ValueError(f"Method {m!r} needs per-report data; use ul.estimate on perturbed reports.")
    stats, target, n = simulate_stats(key, mech, xs=xs, p=p, n=n, reps=reps, block_size=block_size,
                                      chunk_blocks=chunk_blocks, rep_batch=rep_batch)
    estimates = {}
    g = grid_size(mech)
    for m in methods:
        opts = method_options.get(m, {})
        if g is None:
            estimates[m] = _api.estimate_from_stats(mech, stats, n, m, **opts)
        else:
            estimates[m] = jax.vmap(lambda mm, st: _api.estimate_from_stats(mm, st, n, m, **opts))(mech, stats)
    return SimResult(estimates, stats, target, n)
