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

from uldp_jax import _api, _progress, _validate
from uldp_jax._sizing import DEFAULT_CHUNK_BYTES, pow2_floor, sizing
from uldp_jax._sizing import rep_bucket as bucket  # the rounding rule for repetition counts
from uldp_jax.estimation import get_method
from uldp_jax.mechanisms.core import num_stats
from uldp_jax.engine import _counts_path, _shard
from uldp_jax.engine._layout import alias_table, check_inputs, grid_size

DEFAULT_BLOCK_SIZE = 1024
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


def stable_rows(rows: int, mech: Any) -> int:
    """``max(rows, floor)``, ``floor`` = ``sizing().rep_len_floor`` or the largest power of two of rows whose stats stay under
    2**16 entries."""
    return max(rows, min(sizing().rep_len_floor, pow2_floor(2**16 // max(num_stats(mech), 1))))


def rep_length(rep_chunk: int, mech: Any, path: str) -> int:
    """The length of ``rep_ids`` per call: ``bucket(rep_chunk)`` (``2^k`` or ``3 * 2^k``, from 1).

    The counts path draws its padding repetitions (and drops them), so it pads to the bucket only: a ``reps=1``
    call draws one repetition. The per-user path skips padding repetitions (no draws), so it keeps the floor of
    ``stable_rows`` and one kernel serves every ``reps <= 64``.
    """
    return bucket(rep_chunk) if path == "counts" else stable_rows(bucket(rep_chunk), mech)


def choose_chunk_blocks(mech: Any, block_size: int, num_blocks: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """Blocks per chunk: the largest power of two within ``chunk_bytes`` (independent of ``n``).

    The per-user kernel draws the full chunks and then the remaining blocks one at a time, so every ``n`` shares
    one kernel and a small ``n`` draws only its own ``ceil(n / block_size)`` blocks (``num_blocks`` is kept in
    the signature for callers; it no longer changes the answer).
    """
    # item reports are aggregated by a scatter-add (O(1) bytes per user); other kinds hold O(num_stats) per user
    width = 1 if mech.report_kind == "item" else max(int(num_stats(mech)), 1)
    per_block = block_size * width * 4 * 3
    return int(pow2_floor(max(1, chunk_bytes // per_block)))


def per_user_words(mech: Any, iid: bool) -> float:
    """Random words per user on the per-user path (estimate): one per statistic for bit-like reports, about two
    for an item report, two more for the alias draw of the iid model."""
    own = 2.0 if mech.report_kind == "item" else float(max(int(num_stats(mech)), 1))
    return own + (2.0 if iid else 0.0)


def path_costs(mech: Any, n: int, iid: bool) -> dict:
    """``{path: (random words, bytes of temporaries)}`` per repetition of each exact path available for ``mech``.

    Per user: ``n`` users' words (``per_user_words``), chunked (bounded memory). Counts: ``mech.counts().draws(iid)``
    exact draws at ``sizing().binomial_words`` each, independent of ``n``, holding ``counts_bytes`` bytes.
    """
    out = {"per_user": (n * per_user_words(mech, iid), 0.0)}
    if _counts_path.has_count_path(mech, iid=iid):
        draws = float(_counts_path.counts_of(mech).draws(iid))
        out["counts"] = (sizing().binomial_words * draws, counts_bytes(mech, iid))
    return out


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


def resolve_path(path: Any, mech: Any, needs_reports: bool, iid: bool, n: int = 0) -> str:
    """``"per_user"`` or ``"counts"`` for ``path`` in ``PATHS``.

    ``"auto"``: the cheapest exact path that serves the methods (``path_costs``): counts when the mechanism has an
    exact count sampler, every method reads stats, its draws cost no more than ``n`` users' and one repetition's
    temporaries fit in ``sizing().counts_memory_bytes``; else per user. E.g. HighLowHR with fixed users at large ``d`` (``d K``
    multinomial cells) and any call with few users run per user.
    """
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
        if not has or needs_reports:
            return "per_user"
        costs = path_costs(mech, n, iid)
        cheaper = costs["counts"][0] <= costs["per_user"][0]
        return "counts" if cheaper and costs["counts"][1] <= sizing().counts_memory_bytes else "per_user"
    return path


def counts_bytes(mech: Any, iid: bool) -> float:
    """Temporaries of one counts-path repetition: ``mech.counts().memory(iid)``, else ``sizing().counts_bytes_per_draw`` per
    draw of ``mech.counts().draws(iid)``."""
    rec = _counts_path.counts_of(mech)
    own = rec.memory(iid)
    return float(own) if own is not None else sizing().counts_bytes_per_draw * float(rec.draws(iid))


def counts_rep_chunk(mech: Any, iid: bool, rep_chunk: int) -> int:
    """``rep_chunk`` cut so that one call's counts-path temporaries stay within ``sizing().counts_memory_bytes``."""
    per_rep = counts_bytes(mech, iid)
    return int(max(1, min(rep_chunk, sizing().counts_memory_bytes // max(per_rep, 1.0))))


def per_user_data(xs: Any, target: np.ndarray, iid: bool, n: int, length: int) -> Any:
    """The per-user population: ``alias_table(target)`` (iid) or ``xs`` zero-padded to ``length`` users."""
    if iid:
        return alias_table(target)
    padded = np.zeros(length, dtype=np.int32)
    padded[:n] = xs
    return jnp.asarray(padded)


def fresh_leaves(mech: Any) -> Any:
    """``mech`` with every NumPy leaf copied (same values): a defence against JAX's constant cache.

    JAX caches the device copy of a NumPy constant that a jitted function closed over, keyed by the array
    object. When that happened under ``jax.enable_x64`` (a user's x64 jit closing over a mechanism), the cached
    copy is float64, and passing the same NumPy leaf to a jitted kernel after the context failed with
    ``RuntimeProgramInputMismatch`` (f32 expected, f64 given). Fresh copies are transferred as usual: float32
    outside an x64 context, float64 inside the counts path's local one, exactly as before.
    """
    return jax.tree_util.tree_map(lambda leaf: np.array(leaf) if isinstance(leaf, np.ndarray) else leaf, mech)


def make_plan(key: jax.Array, mech: Any, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
              methods: Sequence[str] = (), method_options: dict | None = None, path: str = "auto",
              block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None, rep_batch: int | None = None,
              devices: Sequence[Any] | None = None, shard: str = "auto", rep_chunk: int | None = None,
              progress: Any = False, needs_reports: bool = False) -> Plan:
    """Checks ``simulate``'s arguments once and decides the path, the sizes and the population layout.

    ``methods`` may be empty (``simulate_stats``); ``needs_reports`` then says whether the caller needs the
    per-user path's reports (a method of its own on per-report likelihoods). See ``simulate`` for the rest.
    """
    resolved = {m: get_method(m, mech) for m in methods}  # e.g. "em": stats or reports per mech
    needs_reports = needs_reports or any(spec.input != "stats" for spec in resolved.values())
    if needs_reports and path == "counts":
        resolve_path(path, mech, True, True)  # raises: the counts path serves no report-based method
    _validate.check_key(key)
    check_key_impl(key)
    _api._check_mech(mech)
    mech = fresh_leaves(mech)
    reps = _validate.check_int("reps", reps, minimum=1)
    block_size = _validate.check_int("block_size", block_size, minimum=1)
    if shard not in ("auto", "reps", "users"):
        raise ValueError(f"Expected shard={shard!r} in ('auto', 'reps', 'users').")
    xs, target, n, iid = check_inputs(mech, xs, p, n)
    path = resolve_path(path, mech, needs_reports, iid, n)
    devs = _shard.resolve_devices(devices)
    mesh = _shard.make_mesh(devs)
    ndev = len(devs)
    mode = shard if shard != "auto" else ("users" if (path == "per_user" and reps < ndev) else "reps")
    if mode == "users" and path == "counts":
        raise ValueError("shard='users' needs path='per_user' (the counts path costs O(d), independent of n).")
    policy = sizing(devs[0])
    rep_batch = _validate.check_int("rep_batch", policy.rep_batch if rep_batch is None else rep_batch, minimum=1)
    if rep_chunk is None:
        rep_chunk = max(1, math.ceil(reps / 10)) if _progress.wanted(progress) else reps  # ~10 bar updates
        if path == "counts":
            rep_chunk = counts_rep_chunk(mech, iid, min(rep_chunk, policy.counts_rep_chunk))
    rep_chunk = min(_validate.check_int("rep_chunk", rep_chunk, minimum=1), reps)
    rep_len = rep_length(rep_chunk, mech, path)  # a few sizes per sweep: 2^k or 3 * 2^k
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
