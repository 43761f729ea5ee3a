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
to a single device for the same key (see ``uldp_jax.engine._shard``). Repetitions run in host-side chunks of
``rep_chunk`` (one compiled function, no retracing), after each of which ``progress`` is updated.

Variance models (docs/errata.md#variance-models): ``xs=...`` is the *fixed* model (exactly these users' values); ``p=..., n=...`` is the
*iid* model. On the per-user path each user's value is drawn from ``p`` with an alias table built in float64
(two random words per user; every item's probability is exact up to ``2^-33``, see ``alias_table``); the
counts path draws ``Multinomial(n, p)`` exactly in float64.

float32 resolution: most per-user samplers compare float32 uniforms with float32 probabilities, so a per-user
event of probability below ~6e-8 is never drawn (e.g. a bit flip of OUE/RAPPOR at eps >~ 17); the exact channel,
the audit and the theory still use float64. At such eps the mechanism is numerically non-private in simulation
only; the counts path (float64 binomials) keeps these probabilities. GRR and uRR threshold their flip event on a
uint32 word (``mechanisms/core/_uniform.py``), so their flips are drawn down to probability 2^-32.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _api, _cache
from uldp_jax._sizing import (  # noqa: F401 - the sizing policy is re-exported (_engine.sizing, ...)
    DEFAULT_CHUNK_BYTES,
    DEFAULT_COUNTS_REP_CHUNK,
    SIZING_OVERRIDE,
    Sizing,
    pow2_floor,
    sizing,
)
from uldp_jax.mechanisms import Mechanism
from uldp_jax.engine import _reports
from uldp_jax.engine._kernels import TRACE_COUNTS, per_user_stats, progress_bar, run_stats  # noqa: F401 - re-exported
from uldp_jax.engine._layout import (  # noqa: F401 - the layout is re-exported (_engine.alias_table, ...)
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
from uldp_jax.engine._plan import (  # noqa: F401 - re-exported (_engine.bucket, ...)
    DEFAULT_BLOCK_SIZE,
    SUPPORTED_KEY_IMPLS,
    Plan,
    bucket,
    check_key_impl,
    check_methods,
    choose_chunk_blocks,
    make_plan,
    path_costs,
    rep_length,
    stable_rows,
)


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


def simulate_stats(key: jax.Array, mech: Mechanism, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
                   path: str = "auto", block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None,
                   rep_batch: int | None = None, devices: Sequence[Any] | None = None, shard: str = "auto",
                   rep_chunk: int | None = None, progress: Any = "auto",
                   _needs_reports: bool = False) -> tuple[jax.Array, np.ndarray, int]:
    """Simulates ``reps`` repetitions and returns ``(stats int[(g,) r, m], target float64[d], n)``.

    See ``simulate`` for the arguments.
    """
    _cache.guard_map_limit()  # a long-lived process never reaches vm.max_map_count (see uldp_jax._cache)
    plan = make_plan(key, mech, xs=xs, p=p, n=n, reps=reps, path=path, block_size=block_size,
                     chunk_blocks=chunk_blocks, rep_batch=rep_batch, devices=devices, shard=shard,
                     rep_chunk=rep_chunk, progress=progress, needs_reports=_needs_reports)
    return run_stats(plan, key, progress), plan.target, plan.n


@functools.lru_cache(maxsize=64)
def _jitted_estimate(spec: Any):
    """``jit(lambda mech, stats, n: estimate_with(mech, spec, stats, n))``, cached per resolved method with ``n``
    as data (a sweep over ``n`` compiles once per stats shape): the estimate costs microseconds of device work,
    so eager dispatch would dominate a counts-path call and compile each op per shape."""
    return jax.jit(lambda mech, stats, n: _api.estimate_with(mech, spec, stats, n))


@functools.lru_cache(maxsize=16)
def _jitted_estimate_static(spec: Any, n: int):
    """``_jitted_estimate`` for ``n >= 2**31`` (counts path with x64): ``n`` static, as int32 data would overflow."""
    return jax.jit(lambda mech, stats: _api.estimate_with(mech, spec, stats, n))


def _point_estimate(mech: Any, spec: Any, opts: dict, stats: Any, n: int, path: str) -> np.ndarray:
    """``float[reps, d]`` of one mechanism, on rows padded (host side) with copies of row 0: shapes stable across
    reps and n. Counts path without options: jitted (O(d) work; no eager dispatch per call; n as data)."""
    st = np.asarray(stats)
    padded = np.concatenate([st, np.repeat(st[:1], stable_rows(bucket(len(st)), mech) - len(st), axis=0)])
    if not opts and path == "counts":
        est = (_jitted_estimate(spec)(mech, padded, np.int32(n)) if n < 2**31 else
               _jitted_estimate_static(spec, n)(mech, padded))
    else:  # eager (jitting moves the per-user path's estimates by an ulp: kept as recorded)
        est = _api.estimate_with(mech, spec, padded, n, **opts)
    return np.asarray(est)[: len(st)]


def estimates(plan: Plan, key: jax.Array, stats: jax.Array, done: dict | None = None) -> dict:
    """``{method: float[(g,) reps, d]}`` for every method of ``plan`` (stats methods from ``stats``; report
    methods on the regenerated reports behind them; ``done``: estimates already made, kept as they are).

    A grid on the counts path (no method options) estimates point by point with the single mechanism's jitted
    function, so a grid point's estimates equal a call on that mechanism alone bit for bit (a vmapped grid
    estimate can differ in the last float32 bit); elsewhere a grid is estimated in one eager ``vmap`` (point by
    point when the estimator cannot be traced, e.g. a PUM user's, whose channel is built in NumPy).
    """
    out, n, mech = {}, plan.n, plan.mech
    for m, spec in plan.methods.items():
        opts = plan.options.get(m, {})
        if done and m in done:
            out[m] = done[m]
        elif spec.input == "reports":  # regenerate the reports behind `stats` (same randomness layout)
            out[m] = _reports.report_estimates(key, plan, m)
        elif plan.grid is None:
            out[m] = jnp.asarray(_point_estimate(mech, spec, opts, stats, n, plan.path))
        elif not opts and plan.path == "counts":
            out[m] = jnp.asarray(np.stack([
                _point_estimate(jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], mech), spec, opts, stats[i], n,
                                plan.path) for i in range(plan.grid)]))
        else:
            try:
                out[m] = jax.vmap(lambda mm, st, spec=spec, opts=opts: _api.estimate_with(mm, spec, st, n, **opts))(
                    mech, stats)
            except jax.errors.JAXTypeError:  # an estimator that reads a host (NumPy) channel, e.g. a PUM user's
                out[m] = jnp.stack([_api.estimate_with(jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], mech),
                                                       spec, stats[i], n, **opts) for i in range(plan.grid)])
    return out


def simulate(key: jax.Array, mech: Mechanism, *, xs: Any = None, p: Any = None, n: Any = None, reps: int = 1,
             methods: Sequence[str] = ("emp",), method_options: dict | None = None, path: str = "auto",
             block_size: int = DEFAULT_BLOCK_SIZE, chunk_blocks: int | None = None, rep_batch: int | None = None,
             devices: Sequence[Any] | None = None, shard: str = "auto", rep_chunk: int | None = None,
             progress: Any = "auto") -> SimResult:
    """Runs a Monte Carlo study: perturb every user, aggregate on device, estimate, for ``reps`` repetitions.

    One plan per call: the arguments are checked once, each method is resolved once, the
    path, the sizes and the grid signature are decided once; then the plan runs.

    Args:
      key: PRNG key; repetition ``r`` uses ``fold_in(key, r)``.
      mech: a mechanism, or a batched grid of one kind (every leaf with one leading axis, e.g.
        ``jax.vmap(lambda e: ul.GRR(8, e))(eps_grid)``), run as one call with common random numbers. A single
        mechanism may have vector fields (``ul.PUM(...).user(personal)``): a grid needs the axis on every leaf.
      xs: ``int32[n]`` true values (fixed model), or
      p: ``float[d]`` distribution and ``n`` users (iid model).
      reps: number of repetitions (>= 1).
      methods: estimation methods (``ul.estimation.method_names()``).
      method_options: ``{method: {option: value}}``.
      path: ``"auto"`` (the exact counts path when the mechanism has one and every method reads stats, else
        per-user), ``"per_user"`` or ``"counts"`` (``ValueError`` where no exact counts path exists).
      block_size: users per randomness block on the per-user path (results depend on it; default 1024).
      chunk_blocks: blocks processed at once (memory knob; results do not depend on it).
      rep_batch: per-user path: repetitions vectorised together (the stats and report-based methods such as
        RAPPOR's EM; stats do not depend on it, EM estimates only within float32 rounding). The counts path
        vmaps all repetitions of a chunk.
      devices: devices to shard over (default all visible devices; stats do not depend on it).
      shard: ``"auto"``, ``"reps"`` or ``"users"`` (per-user path only): what is split across devices for the
        stats; report-based methods always split repetitions (one repetition's EM reads all of its reports).
      rep_chunk: repetitions per host-side call (progress granularity; stats do not depend on it), on every
        path.
      progress: ``"auto"`` (default: a bar on stderr once the call has run 3 s, only where stderr is a terminal or
        a notebook; ``ULDP_PROGRESS=0`` or ``1`` in the environment turns it off or on everywhere), ``True``
        (always: tqdm, else stderr lines), ``False`` (never) or ``"stderr"`` (plain lines).

    Returns:
      ``SimResult`` with ``estimates[method]`` of shape ``[reps, d]`` (``[g, reps, d]`` for a grid).

    Raises:
      ValueError: bad sizes, ``path="counts"`` without an exact counts path, ``n`` too large for int32 counts.
    """
    _cache.guard_map_limit()  # a long-lived process never reaches vm.max_map_count (see uldp_jax._cache)
    methods, method_options = check_methods(methods, method_options)
    plan = make_plan(key, mech, xs=xs, p=p, n=n, reps=reps, methods=methods, method_options=method_options,
                     path=path, block_size=block_size, chunk_blocks=chunk_blocks, rep_batch=rep_batch,
                     devices=devices, shard=shard, rep_chunk=rep_chunk, progress=progress)
    stats, done = None, {}
    first = next((m for m, spec in plan.methods.items() if spec.input == "reports"), None)
    if first is not None:  # bit-vector reports are aggregated on the device anyway: their sums are the stats
        with progress_bar(progress, plan) as bar:
            done[first], stats = _reports.report_estimates_and_stats(key, plan, first, bar)
    if stats is None:
        stats = run_stats(plan, key, progress)
    return SimResult(estimates(plan, key, stats, done), stats, plan.target, plan.n)
