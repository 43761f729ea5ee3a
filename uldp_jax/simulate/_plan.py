"""One plan per ``simulate`` call: validated inputs, resolved methods, one path, sizes and the grid signature.

``make_plan`` checks every argument once, resolves each estimation method once through the estimation registry,
chooses the path once, sizes the chunks and repetition buckets once and builds the per-user path's population
(``data``: the alias table of ``p`` or the padded ``xs``), which the report path reuses. ``_engine`` runs a plan;
nothing downstream re-checks or re-resolves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _api, _validate
from uldp_jax._sizing import DEFAULT_CHUNK_BYTES, pow2_floor, sizing
from uldp_jax.estimation import _registry
from uldp_jax.simulate import _counts_path, _shard
from uldp_jax.simulate._layout import alias_table, check_inputs, grid_size

DEFAULT_BLOCK_SIZE = 1024
MIN_CHUNK_USERS = 2**16  # a chunk is never cut below this many users for a small n (one kernel for every small n)
MIN_REP_LEN = 64  # rep_ids length floor (lowered so that the padded stats stay under 2**16 entries)
PATHS = ("auto", "per_user", "counts")
SUPPORTED_KEY_IMPLS = ("threefry2x32",)


class Plan(NamedTuple):
    """Everything a ``simulate`` call needs, decided once (``make_plan``).

    Attributes:
      mech: the mechanism (or a grid of one kind; ``grid`` is its size, ``None`` for one mechanism).
      grid: the grid signature: the size of the leading axis that every leaf carries, or ``None``.
      xs: ``int[n]`` the users' values (fixed model) or ``None`` (iid model).
      target: ``float64[d]`` the distribution being estimated.
      n: users per repetition.
      iid: True for the iid model (``p``, ``n``).
      reps: repetitions.
      methods: ``{name: Method}``, each resolved once for ``mech`` (empty for ``simulate_stats``).
      options: ``{name: {option: value}}``.
      path: ``"per_user"`` or ``"counts"``.
      block_size: users per randomness block (per-user and report paths).
      num_blocks: ``ceil(n / block_size)``.
      chunk_blocks: blocks per chunk on the per-user path (``None`` on the counts path).
      data: the per-user population (alias table of ``target`` or padded ``xs``; ``None`` on the counts path).
      rep_batch: repetitions vmapped together on the per-user path.
      rep_chunk: repetitions per host-side call.
      rep_len: the bucketed length of ``rep_ids`` per call.
      mesh: the device mesh (``None`` for one device).
      mode: ``"reps"`` or ``"users"``: what is split across devices.
    """

    mech: Any
    grid: int | None
    xs: np.ndarray | None
    target: np.ndarray
    n: int
    iid: bool
    reps: int
    methods: dict
    options: dict
    path: str
    block_size: int
    num_blocks: int
    chunk_blocks: int | None
    data: Any
    rep_batch: int
    rep_chunk: int
    rep_len: int
    mesh: Any
    mode: str

    @property
    def needs_reports(self) -> bool:
        return any(spec.input != "stats" for spec in self.methods.values())


def bucket(x: int) -> int:
    """The smallest size ``>= x`` of the form ``2^k`` or ``3 * 2^k``: at most 1.5x, two sizes per octave."""
    x = max(int(x), 1)
    p = 1 << (x - 1).bit_length()  # next power of two
    return 3 * p // 4 if p >= 4 and 3 * p // 4 >= x else p


def stable_rows(rows: int, mech: Any) -> int:
    """``max(rows, floor)``, ``floor`` = ``MIN_REP_LEN`` or the largest power of two of rows whose stats stay under
    2**16 entries."""
    return max(rows, min(MIN_REP_LEN, pow2_floor(2**16 // max(mech.num_stats, 1))))


def choose_chunk_blocks(mech: Any, block_size: int, num_blocks: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
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


def check_key_impl(key: jax.Array) -> None:
    """Refuses a key whose implementation would make results depend on chunking (``_engine`` docstring, "Keys").

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


def check_methods(methods: Any, method_options: Any) -> tuple[tuple[str, ...], dict]:
    """``(names, {name: options})`` after checking their types (the names are resolved by ``make_plan``)."""
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
    return tuple(methods), method_options


def resolve_path(path: Any, mech: Any, needs_reports: bool, iid: bool) -> str:
    """``"per_user"`` or ``"counts"`` for ``path`` in ``PATHS`` (``"auto"``: counts when exact and stats suffice)."""
    if path not in PATHS:
        raise ValueError(f"Expected path={path!r} in {PATHS}.")
    has = _counts_path.has_count_path(mech, iid=iid)
    if path == "counts":
        if needs_reports:
            raise ValueError("path='counts' cannot serve methods on per-report likelihoods (e.g. EM on every "
                             "report): they need the reports; use path='per_user' or 'auto'.")
        if not has:
            where = (" for the fixed model (xs=...); it has one in the iid model (p=..., n=...)"
                     if _counts_path.has_count_path(mech, iid=True) else "")
            raise ValueError(f"path='counts': mech={type(mech).__name__} has no exact count-level fast path{where} "
                             "(see ul.fastpath); use path='per_user' or 'auto'.")
        return "counts"
    if path == "auto":
        return "counts" if (has and not needs_reports) else "per_user"
    return path


def per_user_data(xs: Any, target: np.ndarray, iid: bool, n: int, length: int) -> Any:
    """The per-user population: ``alias_table(target)`` (iid) or ``xs`` zero-padded to ``length`` users."""
    if iid:
        return alias_table(target)
    padded = np.zeros(length, dtype=np.int32)
    padded[:n] = xs
    return jnp.asarray(padded)


def make_plan(key: jax.Array, mech: Any, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
              methods: Sequence[str] = (), method_options: dict | None = None, path: str = "auto",
              block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None, rep_batch: int | None = None,
              devices: Sequence[Any] | None = None, shard: str = "auto", rep_chunk: int | None = None,
              progress: Any = False, needs_reports: bool = False) -> Plan:
    """Checks ``simulate``'s arguments once and decides the path, the sizes and the population layout.

    ``methods`` may be empty (``simulate_stats``); ``needs_reports`` then says whether the caller needs the
    per-user path's reports (a method of its own on per-report likelihoods). See ``simulate`` for the rest.
    """
    resolved = {m: _registry.get_method(m, mech) for m in methods}  # e.g. "em": stats or reports per mech
    needs_reports = needs_reports or any(spec.input != "stats" for spec in resolved.values())
    if needs_reports and path == "counts":
        resolve_path(path, mech, True, True)  # raises: the counts path serves no report-based method
    _validate.check_key(key)
    check_key_impl(key)
    _api._check_mech(mech)
    reps = _validate.check_int("reps", reps, minimum=1)
    block_size = _validate.check_int("block_size", block_size, minimum=1)
    if shard not in ("auto", "reps", "users"):
        raise ValueError(f"Expected shard={shard!r} in ('auto', 'reps', 'users').")
    xs, target, n, iid = check_inputs(mech, xs, p, n)
    path = resolve_path(path, mech, needs_reports, iid)
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
    grid = grid_size(mech)
    num_blocks = math.ceil(n / block_size)
    data = None
    if path == "per_user":
        if n >= 2**31:
            raise ValueError(f"Expected n={n} < 2**31 on the per-user path (int32 counts).")
        if chunk_blocks is None:
            chunk_blocks = choose_chunk_blocks(mech, block_size, num_blocks, policy.chunk_bytes)
        else:
            chunk_blocks = min(_validate.check_int("chunk_blocks", chunk_blocks, minimum=1), num_blocks)
        num_chunks = math.ceil(num_blocks / chunk_blocks)
        # fixed model: padded to a power of two of chunks, one shape per octave of n
        data = per_user_data(xs, target, iid, n, (1 << (num_chunks - 1).bit_length()) * chunk_blocks * block_size)
    else:
        chunk_blocks = None
    return Plan(mech, grid, xs, target, n, iid, reps, resolved, dict(method_options or {}), path, block_size,
                num_blocks, chunk_blocks, data, rep_batch, rep_chunk, rep_len, mesh, mode)
