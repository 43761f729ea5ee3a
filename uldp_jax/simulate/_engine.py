"""Monte Carlo engine: users x repetitions x mechanism grids x devices, memory-bounded, on device.

Two exact paths (``path=``):

* ``"per_user"``: every user is perturbed. Randomness layout (what makes results independent of chunking):
  repetition ``r`` uses ``fold_in(key, r)``; inside it, users are cut into fixed blocks of ``block_size`` users
  and block ``b`` uses ``fold_in(fold_in(key, r), b)``. Blocks are grouped into chunks of ``chunk_blocks``
  blocks that are processed with ``vmap`` and accumulated with ``lax.scan``, so peak memory is
  ``O(chunk_blocks * block_size * m)`` and the result for a given ``(key, block_size)`` is identical for every
  ``chunk_blocks``. Only the aggregate statistics (``int32[m]`` per repetition) are kept, never the reports.
* ``"counts"``: the aggregate statistics are sampled exactly in distribution from the true counts in O(d) per
  repetition, independent of n (``ul.fastpath`` lists which mechanisms have such a path and why it is
  exact). Repetition ``r`` hands ``fold_in(key, r)`` to the mechanism's count sampler. ``"auto"`` (default) takes it whenever it exists and every method reads only stats.

The two paths agree in distribution, not sample by sample.

Keys: threefry only (``jax.random.key(seed)``, the JAX default). The layout vmaps blocks and repetitions, and
JAX batches ``rbg``/``unsafe_rbg`` draws on the first key of a vmapped batch, so with those keys the numbers
would change with ``chunk_blocks``, ``rep_batch``, ``rep_chunk`` and the device count; ``simulate`` refuses
them with a ``ValueError`` that says so (``check_key_impl``). Raw ``uint32[2]`` keys are threefry keys.

Devices: repetitions are sharded over ``devices`` (default: all visible devices, across hosts after
``jax.distributed.initialize()``) with ``jax.shard_map``; when there are fewer repetitions than devices the
per-user path shards users instead and adds the int32 partial counts with ``psum``. Results are bit-identical
to a single device for the same key (see ``uldp_jax.simulate._shard``). Repetitions run in host-side chunks of
``rep_chunk`` (one compiled function, no retracing), after each of which ``progress`` is updated.

Variance models (SPEC.md): ``xs=...`` is the *fixed* model (exactly these users' values); ``p=..., n=...`` is the
*iid* model. On the per-user path each user's value is drawn from ``p`` with an alias table built in float64
(two random words per user; every item's probability is exact up to ``2^-33``, see ``alias_table``); the
counts path draws ``Multinomial(n, p)`` exactly in float64.

float32 resolution: most per-user samplers compare float32 uniforms with float32 probabilities, so a per-user
event of probability below ~6e-8 is never drawn (e.g. a bit flip of OUE/RAPPOR at eps >~ 17); the exact channel,
the audit and the theory still use float64. At such eps the mechanism is numerically non-private in simulation
only; the counts path (float64 binomials) keeps these probabilities. GRR and uRR threshold their flip event on a
uint32 word (``mechanisms/_uniform.py``), so their flips are drawn down to probability 2^-32.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _api, _progress, _validate
from uldp_jax._sizing import (  # noqa: F401 - the sizing policy is re-exported (_engine.sizing, ...)
    DEFAULT_CHUNK_BYTES,
    DEFAULT_COUNTS_REP_CHUNK,
    SIZING_OVERRIDE,
    Sizing,
    pow2_floor,
    sizing,
)
from uldp_jax.simulate import _counts_path as fastpath
from uldp_jax.simulate import _reports
from uldp_jax.simulate import _shard
from uldp_jax.simulate._layout import (  # noqa: F401 - the layout is re-exported (_engine.alias_table, ...)
    alias_probs,
    alias_table,
    block_inputs,
    block_reports,
    check_inputs,
    grid_size,
    rep_stats,
    rep_stats_range,
    sample_alias,
)
from uldp_jax.estimation import _registry

DEFAULT_BLOCK_SIZE = 1024
# ~1 MiB of per-chunk intermediates keeps a chunk in the CPU's L2 cache (128 MiB ran GRR 1.5-2x and OUE/OLH/SS 2-5x
# slower at d = 625); results never depend on it.


class SimResult(NamedTuple):
    """Output of ``simulate``.

    Attributes:
      estimates: ``{method: float[r, d]}`` (``float[g, r, d]`` for a batched grid of ``g`` mechanisms).
      stats: ``int32[r, num_stats]`` (or ``[g, r, num_stats]``) aggregate statistics per repetition
        (``int64`` on the counts path for ``n >= 2**31`` when x64 is enabled globally).
      target: ``float64[d]`` the distribution being estimated (``p`` in the iid model; the empirical
        distribution of ``xs`` in the fixed model).
      n: number of users per repetition.
    """

    estimates: dict
    stats: jax.Array
    target: np.ndarray
    n: int


def bucket(x: int) -> int:
    """The smallest size ``>= x`` of the form ``2^k`` or ``3 * 2^k``: at most 1.5x, two sizes per octave."""
    x = max(int(x), 1)
    p = 1 << (x - 1).bit_length()  # next power of two
    return 3 * p // 4 if p >= 4 and 3 * p // 4 >= x else p


MIN_CHUNK_USERS = 2**16  # a chunk is never cut below this many users for a small n (one kernel for every small n)


def _choose_chunk_blocks(mech: Any, block_size: int, num_blocks: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """Blocks per chunk: a power of two within ``chunk_bytes``; for a small ``n``, the next power of two of
    ``num_blocks`` but not below ``MIN_CHUNK_USERS`` users.

    Powers of two keep the kernels few across a sweep over n, and the floor makes every n below it share one
    kernel (the padding blocks of a small n are masked: at most ``MIN_CHUNK_USERS`` users of work per repetition,
    milliseconds, against seconds per compile).
    """
    # item reports are aggregated by a scatter-add (O(1) bytes per user); other kinds hold O(num_stats) per user
    width = 1 if mech.report_kind == "item" else max(int(mech.num_stats), 1)
    per_block = block_size * width * 4 * 3
    floor = max(1, MIN_CHUNK_USERS // block_size)
    wanted = max(1 << (max(num_blocks, 1) - 1).bit_length(), floor)
    return int(min(pow2_floor(max(1, chunk_bytes // per_block)), wanted))


MIN_REP_LEN = 64  # rep_ids length floor (lowered so that the padded stats stay under 2**16 entries)


def stable_rows(rows: int, mech: Any) -> int:
    """``max(rows, floor)``, ``floor`` = ``MIN_REP_LEN`` or the largest power of two of rows whose stats stay under
    2**16 entries."""
    return max(rows, min(MIN_REP_LEN, pow2_floor(2**16 // max(mech.num_stats, 1))))


TRACE_COUNTS = {"per_user": 0, "counts": 0}  # incremented at trace time (tests check that nothing retraces)


def _per_user_kernel(key, mech, n, data, rep_ids, *, axis, iid, block_size, chunk_blocks, rep_batch):
    """Stats of the repetitions ``rep_ids`` (``-1``: padding, skipped); ``n`` is data, chunk counts are traced.

    Shapes depend only on the static sizes and on ``len(rep_ids)`` (a bucket), so a sweep over ``n`` and
    ``reps`` reuses the compiled kernel. Users mode: device ``i`` sums its own range of chunks.
    """
    TRACE_COUNTS["per_user"] += 1
    per_chunk = chunk_blocks * block_size
    num_chunks = n // per_chunk + (n % per_chunk > 0).astype(n.dtype)  # no int32 overflow near 2**31
    if axis is None:
        first, count = jnp.int32(0), num_chunks
    else:
        ndev = jax.lax.psum(1, axis)
        local = (num_chunks + ndev - 1) // ndev
        first = jax.lax.axis_index(axis) * local
        count = jnp.clip(num_chunks - first, 0, local)

    def one_rep(r):
        return rep_stats_range(jax.random.fold_in(key, jnp.maximum(r, 0)), mech, n, data, iid, block_size,
                               chunk_blocks, first, count)

    R = rep_ids.shape[0]
    batch = min(rep_batch, R)
    nb = -(-R // batch)
    ids = jnp.full((nb * batch,), -1, rep_ids.dtype).at[:R].set(rep_ids)
    todo = -(-jnp.sum(rep_ids >= 0) // batch)

    def body(j, out):
        st = jax.vmap(one_rep)(jax.lax.dynamic_slice_in_dim(ids, j * batch, batch))
        return jax.lax.dynamic_update_slice_in_dim(out, st, j * batch, axis=0)

    stats = jax.lax.fori_loop(0, todo, body, jnp.zeros((nb * batch, mech.num_stats), jnp.int32))[:R]
    return stats if axis is None else jax.lax.psum(stats, axis)


def _counts_kernel(key, mech, n, data, rep_ids, *, axis, iid, out_dtype):
    TRACE_COUNTS["counts"] += 1

    def one_rep(r):
        key_r = jax.random.fold_in(key, jnp.maximum(r, 0))  # padding reps (-1) are computed and dropped
        if iid:
            stats = fastpath.sample_counts_iid(key_r, mech, n, data)
        else:
            stats = fastpath.sample_counts(key_r, mech, data)
        return jnp.round(stats).astype(out_dtype)

    return jax.vmap(one_rep)(rep_ids)  # O(d) memory per repetition; rep_chunk bounds the batch


SUPPORTED_KEY_IMPLS = ("threefry2x32",)


def check_key_impl(key: jax.Array) -> None:
    """Refuses a key whose implementation would make results depend on chunking (docstring, "Keys").

    Raises:
      ValueError: for ``rbg`` / ``unsafe_rbg`` (or any non-threefry) keys.
    """
    impl = str(jax.random.key_impl(key))
    if impl not in SUPPORTED_KEY_IMPLS:
        raise ValueError(
            f"simulate needs a threefry key, got a {impl!r} key: under vmap JAX batches {impl} draws on the first "
            "key of the batch, so the numbers would change with chunk_blocks, rep_batch, rep_chunk and the device "
            "count (the engine vmaps blocks and repetitions). Use jax.random.key(seed) with the default "
            "implementation, or jax.random.key(seed, impl='threefry2x32').")


def _resolve_path(path, mech, needs_reports: bool, iid: bool) -> str:
    if path not in ("auto", "per_user", "counts"):
        raise ValueError(f"Expected path={path!r} in ('auto', 'per_user', 'counts').")
    has = fastpath.has_count_path(mech, iid=iid)
    if path == "counts":
        if not has:
            where = (" for the fixed model (xs=...); it has one in the iid model (p=..., n=...)"
                     if fastpath.has_count_path(mech, iid=True) else "")
            raise ValueError(f"path='counts': mech={type(mech).__name__} has no exact count-level fast path{where} "
                             "(see ul.fastpath); use path='per_user' or 'auto'.")
        if needs_reports:
            raise ValueError("path='counts' cannot serve methods on per-report likelihoods (they need every "
                             "report); use path='per_user' or 'auto'.")
        return "counts"
    if path == "auto":
        return "counts" if (has and not needs_reports) else "per_user"
    return path


def simulate_stats(key: jax.Array, mech: Any, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
                   path: str = "auto", block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None,
                   rep_batch: int | None = None, devices: Sequence[Any] | None = None, shard: str = "auto",
                   rep_chunk: int | None = None, progress: Any = False,
                   _needs_reports: bool = False) -> tuple[jax.Array, np.ndarray, int]:
    """Simulates ``reps`` repetitions and returns ``(stats int[(g,) r, m], target float64[d], n)``.

    See ``simulate`` for the arguments.
    """
    _validate.check_key(key)
    check_key_impl(key)
    _api._check_mech(mech)
    reps = _validate.check_int("reps", reps, minimum=1)
    block_size = _validate.check_int("block_size", block_size, minimum=1)
    if shard not in ("auto", "reps", "users"):
        raise ValueError(f"Expected shard={shard!r} in ('auto', 'reps', 'users').")
    xs, target, n, iid = check_inputs(mech, xs, p, n)
    path = _resolve_path(path, mech, _needs_reports, iid)
    devs = _shard.resolve_devices(devices)
    mesh = _shard.make_mesh(devs)
    ndev = len(devs)
    mode = shard if shard != "auto" else ("users" if (path == "per_user" and reps < ndev) else "reps")
    if mode == "users" and path == "counts":
        raise ValueError("shard='users' needs path='per_user' (the counts path costs O(d), independent of n).")
    policy = sizing(devs[0])
    rep_batch = _validate.check_int("rep_batch", policy.rep_batch if rep_batch is None else rep_batch, minimum=1)
    if rep_chunk is None:
        rep_chunk = reps if progress is False or progress is None else max(1, math.ceil(reps / 10))
        rep_chunk = min(rep_chunk, policy.counts_rep_chunk) if path == "counts" else rep_chunk
    rep_chunk = min(_validate.check_int("rep_chunk", rep_chunk, minimum=1), reps)
    # rep_ids length: a few sizes per sweep. Per user, padding reps are skipped (no work); on the counts path they
    # are drawn and dropped, so the floor of 64 holds only while 64 rows of stats stay under 2**16 entries (at
    # d = 625 a padded call costs ~0.05 s more, against ~2-3 s per compile); either way one length for reps <= 64
    rep_len = stable_rows(bucket(rep_chunk), mech)
    if mesh is not None and mode == "reps":
        rep_len = math.ceil(rep_len / ndev) * ndev  # pad: a device count that does not divide reps
    g = grid_size(mech)
    if path == "counts":
        out_dtype = fastpath.count_dtype(n)
        static = (("iid", iid), ("out_dtype", out_dtype))
        fn = _shard.compile_kernel(_counts_kernel, static, mesh, mode, g is not None)
        with fastpath.x64_context():
            data = jnp.asarray(target if iid else target * n, jnp.float64)
            args = (key, mech, jnp.asarray(n, jnp.float64), data)
            with _progress_ctx(progress, reps) as bar:
                # one call per chunk, padded to a bucket: one compile (~2-3 s on CPU) per chunk size; the padding
                # repetitions cost at most 1.5x the warm call (~0.1 s at d = 625), far less than more compiles
                stats = _shard.run_chunks(fn, args, reps, rep_chunk, g is not None, bar, rep_len)
        return jnp.asarray(stats), target, n
    if n >= 2**31:
        raise ValueError(f"Expected n={n} < 2**31 on the per-user path (int32 counts).")
    num_blocks = math.ceil(n / block_size)
    if chunk_blocks is None:
        chunk_blocks = _choose_chunk_blocks(mech, block_size, num_blocks, policy.chunk_bytes)
    else:
        chunk_blocks = min(_validate.check_int("chunk_blocks", chunk_blocks, minimum=1), num_blocks)
    num_chunks = math.ceil(num_blocks / chunk_blocks)
    if iid:
        data = alias_table(target)
    else:  # padded to a power of two of chunks: one shape per octave of n
        padded = np.zeros((1 << (num_chunks - 1).bit_length()) * chunk_blocks * block_size, dtype=np.int32)
        padded[:n] = xs
        data = jnp.asarray(padded)
    static = (("iid", iid), ("block_size", block_size), ("chunk_blocks", chunk_blocks), ("rep_batch", rep_batch))
    fn = _shard.compile_kernel(_per_user_kernel, static, mesh, mode, g is not None)
    args = (key, mech, jnp.asarray(n, jnp.int32), data)
    with _progress_ctx(progress, reps) as bar:
        stats = _shard.run_chunks(fn, args, reps, rep_chunk, g is not None, bar, rep_len)
    return jnp.asarray(stats), target, n


@functools.lru_cache(maxsize=64)
def _jitted_estimate(method: str):
    """``jit(lambda mech, stats, n: estimate_from_stats(mech, stats, n, method))``, cached per method with ``n``
    as data (a sweep over ``n`` compiles once per stats shape): the estimate costs microseconds of device work,
    so eager dispatch would dominate a counts-path call (measured ~6-15 ms) and compile each op per shape."""
    return jax.jit(lambda mech, stats, n: _api.estimate_from_stats(mech, stats, n, method))


@functools.lru_cache(maxsize=16)
def _jitted_estimate_static(method: str, n: int):
    """``_jitted_estimate`` for ``n >= 2**31`` (counts path with x64): ``n`` static, as int32 data would overflow."""
    return jax.jit(lambda mech, stats: _api.estimate_from_stats(mech, stats, n, method))


class _progress_ctx:
    def __init__(self, progress, total):
        self.bar = _progress.make_progress(progress, total)

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc):
        self.bar.close()


def simulate(key: jax.Array, mech: Any, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
             methods: Sequence[str] = ("emp",), method_options: dict | None = None, path: str = "auto",
             block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None, rep_batch: int | None = None,
             devices: Sequence[Any] | None = None, shard: str = "auto", rep_chunk: int | None = None,
             progress: Any = False) -> SimResult:
    """Runs a Monte Carlo study: perturb every user, aggregate on device, estimate, for ``reps`` repetitions.

    Args:
      key: PRNG key; repetition ``r`` uses ``fold_in(key, r)``.
      mech: a mechanism, or a batched grid of one kind (leaves with a leading axis, e.g.
        ``jax.vmap(lambda e: ul.GRR(8, e))(eps_grid)``), run as one call with common random numbers.
      xs: ``int32[n]`` true values (fixed model), or
      p: ``float[d]`` distribution and ``n`` users (iid model).
      reps: number of repetitions (>= 1).
      methods: estimation methods (``ul.estimation.method_names()``).
      method_options: ``{method: {option: value}}``.
      path: ``"auto"`` (the exact counts path when the mechanism has one and every method reads stats, else
        per-user), ``"per_user"`` or ``"counts"`` (``ValueError`` where no exact counts path exists).
      block_size: users per randomness block on the per-user path (results depend on it; default 1024).
      chunk_blocks: blocks processed at once (memory knob; results do not depend on it).
      rep_batch: per-user path: repetitions vectorised together inside ``lax.map`` (results do not depend on
        it). The counts path vmaps all repetitions of a chunk.
      devices: devices to shard over (default all visible devices; results do not depend on it).
      shard: ``"auto"``, ``"reps"`` or ``"users"`` (per-user path only): what is split across devices.
      rep_chunk: repetitions per host-side call (progress granularity; results do not depend on it).
      progress: ``False`` (default), ``True`` (tqdm, else stderr lines) or ``"stderr"``.

    Returns:
      ``SimResult`` with ``estimates[method]`` of shape ``[reps, d]`` (``[g, reps, d]`` for a grid).

    Raises:
      ValueError: bad sizes, ``path="counts"`` without an exact counts path, ``n`` too large for int32 counts.
    """
    if isinstance(methods, str):
        methods = (methods,)
    if not isinstance(methods, (list, tuple)) or not all(isinstance(m, str) for m in methods):
        raise TypeError(f"Expected methods={methods!r} to be a method name or a sequence of names.")
    if not methods:
        raise ValueError("Expected methods to name at least one estimation method.")
    if method_options is not None and not isinstance(method_options, dict):
        raise TypeError(f"Expected method_options={method_options!r} to be a dict {{method: {{option: value}}}}.")
    method_options = dict(method_options or {})
    for m, opts in method_options.items():
        if m not in methods:
            raise ValueError(f"Expected every key of method_options in methods={tuple(methods)}, got {m!r}.")
        if not isinstance(opts, dict):
            raise TypeError(f"Expected method_options[{m!r}]={opts!r} to be a dict of options.")
    resolved = {m: _registry.get_method(m, mech) for m in methods}  # e.g. "em": stats or reports per mech
    needs_reports = any(spec.input != "stats" for spec in resolved.values())
    if needs_reports and path == "counts":
        raise ValueError("path='counts' cannot serve methods on per-report likelihoods (e.g. EM on every "
                         "report): they need the reports; use path='per_user' or 'auto'.")
    stats, target, n = simulate_stats(key, mech, xs=xs, p=p, n=n, reps=reps, path=path, block_size=block_size,
                                      chunk_blocks=chunk_blocks, rep_batch=rep_batch, devices=devices,
                                      shard=shard, rep_chunk=rep_chunk, progress=progress,
                                      _needs_reports=needs_reports)
    estimates = {}
    g = grid_size(mech)
    counts_path = _resolve_path(path, mech, needs_reports, p is not None) == "counts"
    for m in methods:
        opts = method_options.get(m, {})
        if resolved[m].input == "reports":  # regenerate the reports behind `stats` (same randomness layout)
            estimates[m] = _reports.report_estimates(key, mech, m, xs=xs, p=p, n=None if p is None else n,
                                                        reps=reps, block_size=block_size, options=opts)
        elif g is None:  # on rows padded (host side) with copies of row 0: shapes stable across reps and n
            st = np.asarray(stats)
            padded = np.concatenate([st, np.repeat(st[:1], stable_rows(bucket(len(st)), mech) - len(st), axis=0)])
            if not opts and counts_path:  # O(d) work: jitted, no eager dispatch per call, n as data
                est = (_jitted_estimate(m)(mech, padded, np.int32(n)) if n < 2**31 else
                       _jitted_estimate_static(m, n)(mech, padded))
            else:  # eager (jitting moves the per-user path's estimates by an ulp: kept as recorded)
                est = _api.estimate_from_stats(mech, padded, n, m, **opts)
            estimates[m] = jnp.asarray(np.asarray(est)[: len(st)])
        else:
            estimates[m] = jax.vmap(lambda mm, st, m=m, opts=opts: _api.estimate_from_stats(mm, st, n, m, **opts))(
                mech, stats)
    return SimResult(estimates, stats, target, n)
