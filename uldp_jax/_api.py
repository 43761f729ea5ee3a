"""Top-level functional API: ``perturb`` and ``estimate`` dispatch on the mechanism protocol."""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _memory
from uldp_jax import _sizing
from uldp_jax import _validate
from uldp_jax.estimation import get_method
from uldp_jax.mechanisms import Mechanism
from uldp_jax.mechanisms.core import check_reports as _check_reports
from uldp_jax.mechanisms.core import grid_shape_or_none, num_stats, validate_grid


def _check_mech(mech: Any) -> None:
    """A mechanism (or a grid of them) inside its documented ranges, every grid point checked."""
    if not isinstance(mech, Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    validate_grid(mech)


def perturb(key: jax.Array, mech: Mechanism, xs: Any, *args: Any) -> Any:
    """Randomizes the users' true values ``xs`` with ``mech`` (all users in batched draws).

    Pure and composable with ``jit``/``vmap``; value checks run when ``xs`` is concrete.

    Args:
      key: PRNG key; consumed.
      mech: a mechanism, or a ``jax.vmap``-built grid of one: then every point perturbs ``xs`` with the same
        ``key`` (common random numbers, as ``simulate`` draws a grid; dense reports of ``perturb_batch``) and
        the reports lead with the grid's axes.
      xs: ``int32[n]`` true items in ``[0, mech.d)`` (a scalar for one user).
      *args: extra per-user inputs some mechanisms take (e.g. PUM's personal items).

    Returns:
      ``int32[n]`` reports for item mechanisms; for bit-vector mechanisms ``bool[n, m]``, or
      ``ul.CompactBits`` (the positions of the ones, same law) when ``mech.compact().preferred`` (a compact
      sampler, ``d >= 1024`` and at most ``d / 8`` ones expected; convert with ``ul.to_dense`` /
      ``ul.to_compact``); or the mechanism's documented report pytree (uUE at that size: a ``GLUTFReport``
      whose base part is ``CompactBits``; a PUM over uRAP: ``CompactBits`` over ``Z``).
    """
    _validate.check_key(key)
    _check_mech(mech)
    xs = _validate.check_items("xs", xs, mech.d, ndim=(0, 1))
    xs = jnp.asarray(xs, dtype=jnp.int32)
    _check_bits_lower_bound(mech, xs)
    if grid_shape_or_none(mech):
        return _perturb_grid(key, mech, xs, *args)
    compact = mech.compact()
    if xs.ndim == 1 and compact is not None and compact.preferred:  # at most d / 8 ones expected per report
        return compact.perturb(key, xs, *args)
    check_report_size(mech, mech.perturb_batch, key, xs, *args)
    if args or _is_traced((key, mech, xs)):  # extra per-user inputs (PUM's personal items: checked when concrete,
        return mech.perturb_batch(key, xs, *args)  # inside perturb_batch), or the caller's jit/vmap/grad
    return _perturb_batch_jit(key, mech, xs, *args)


def _is_traced(tree: Any) -> bool:
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(tree))


@jax.jit
def _perturb_batch_jit(key: jax.Array, mech: Mechanism, xs: jax.Array, *args: Any) -> Any:
    """``mech.perturb_batch`` compiled once per mechanism class, static fields and shapes (the parameters are
    traced leaves). Eager calls went op by op, and every call compiled fresh XLA programs for the ops that close
    over its key or parameters (the Lemire redraw's ``while_loop``: about 60 memory mappings per call, never
    freed), so a long-lived process hit ``vm.max_map_count`` (65530) after about 1000 calls and LLVM's next
    compile crashed the process. Compiled once, eager and ``jax.jit(perturb)`` calls also give the same reports."""
    return mech.perturb_batch(key, xs, *args)


def _grid_point(mech: Any, index: tuple[int, ...]) -> Any:
    return jax.tree_util.tree_map(lambda leaf: leaf[index], mech)


def _perturb_grid(key: jax.Array, mech: Mechanism, xs: jax.Array, *args: Any) -> Any:
    """Reports of every grid point (leading axes = the grid's), all points from the same ``key``: common random
    numbers, as ``simulate`` draws a grid. Dense reports (a grid's points differ in their compact rates)."""
    if args:
        raise TypeError("perturb of a mechanism grid takes no per-user inputs (*args); perturb each point instead.")
    shape = grid_shape_or_none(mech)
    out = jax.eval_shape(lambda k, m, x: _over_grid(lambda mm: mm.perturb_batch(k, x), len(shape))(m), key, mech, xs)
    nbytes = sum(math.prod(leaf.shape) * np.dtype(leaf.dtype).itemsize for leaf in jax.tree_util.tree_leaves(out))
    if nbytes > _sizing.sizing().perturb_report_bytes:
        raise _size_error(_grid_point(mech, (0,) * len(shape)), (int(xs.shape[0]) if xs.ndim else 1) *
                          math.prod(shape), nbytes)
    return _perturb_grid_jit(key, mech, xs, len(shape))


def _over_grid(fn: Any, naxes: int) -> Any:
    for _ in range(naxes):
        fn = jax.vmap(fn)
    return fn


@functools.partial(jax.jit, static_argnums=3)
def _perturb_grid_jit(key: jax.Array, mech: Mechanism, xs: jax.Array, naxes: int) -> Any:
    """``perturb_batch`` of every grid point with one key, compiled once per class, grid rank and shapes."""
    return _over_grid(lambda m: m.perturb_batch(key, xs), naxes)(mech)


def _size_error(mech: Any, n: int, nbytes: float) -> ValueError:
    return ValueError(
        f"perturb of {n} users with {type(mech).__name__}(d={mech.d}) would return {nbytes / 2**30:.3g} GiB of "
        f"reports (more than {_sizing.sizing().perturb_report_bytes / 2**30:.3g} GiB), before sampling intermediates. Perturb fewer "
        "users per call, or use ul.simulate / ul.simulate_stats, which reduce reports to statistics block by "
        "block (the counts path draws no per-user reports).")


def _check_bits_lower_bound(mech: Any, xs: jax.Array) -> None:
    """Bit-vector reports cost at least ``min(n d, 12 d)`` bytes (dense bits, or the compact sampler's per-item
    parameters): refused before even the compact parameters are built."""
    if mech.report_kind != "bits":
        return
    n = int(xs.shape[0]) if xs.ndim else 1
    d = int(num_stats(mech))
    if min(n * d, 12 * d + 4 * n) > _sizing.sizing().perturb_report_bytes:
        raise _size_error(mech, n, min(n * d, 12 * d + 4 * n))


def check_report_size(mech: Any, fn: Any, key: jax.Array, xs: jax.Array, *args: Any) -> None:
    """Refuses, before anything is allocated, reports larger than ``sizing().perturb_report_bytes`` (sized by tracing ``fn``
    with ``jax.eval_shape``); the message gives the size and the alternatives."""
    n = int(xs.shape[0]) if xs.ndim else 1
    if n * max(int(num_stats(mech)), 1) <= 2**22:  # small: no tracing needed
        return
    out = jax.eval_shape(lambda k, x: fn(k, x, *args), key, xs)
    nbytes = sum(int(np.prod(leaf.shape)) * np.dtype(leaf.dtype).itemsize for leaf in jax.tree_util.tree_leaves(out))
    if nbytes > _sizing.sizing().perturb_report_bytes:
        raise _size_error(mech, n, nbytes)


def aggregate(mech: Mechanism, ys: Any) -> jax.Array:
    """Reduces reports to the mechanism's sufficient statistic (``int32[num_stats]``)."""
    _check_mech(mech)
    ys = _as_reports(mech, ys)
    if not grid_shape_or_none(mech):  # the statistic's size, refused before anything of that size exists
        _memory.check_call_memory("ul.aggregate", mech, ys)
    check_reports(mech, ys)  # an out-of-range report is refused, never dropped from the histogram
    return mech.aggregate(ys)


def _as_reports(mech: Any, ys: Any) -> Any:
    """A list or tuple of item or bit-vector reports becomes an array; every other report space keeps its pytree
    as given (``HashReport``, a user's plain ``(j, bits)`` tuple), exactly as ``perturb`` returned it."""
    if mech.report_kind in ("item", "bits") and isinstance(ys, (list, tuple)) and not hasattr(ys, "_fields"):
        return np.asarray(ys)
    return ys


def check_reports(mech: Any, ys: Any) -> None:
    """Checks that ``ys`` look like a batch of reports of ``mech`` (dtype, shape, range when concrete)."""
    _check_reports(mech, ys)


def num_reports(mech: Any, ys: Any) -> int:
    leaves = jax.tree_util.tree_leaves(ys)
    if not leaves or jnp.ndim(leaves[0]) < 1:
        raise ValueError("Expected ys to hold a batch of reports with a leading user axis.")
    n = leaves[0].shape[0]
    if n < 1:
        raise ValueError(f"Expected ys to hold at least one report, got n={n}.")
    return n


def estimate(mech: Mechanism, ys: Any, method: str = "emp", **options: Any) -> jax.Array:
    """Estimates the input distribution from reports ``ys`` of ``mech``.

    Args:
      mech: the mechanism that produced ``ys`` (or a grid: ``ys`` then leads with the grid's axes, as ``perturb``
        of the grid returns them, and each point is estimated exactly as ``estimate`` on that point).
      ys: reports as returned by ``perturb`` (leading axis = users).
      method: a registered method name (``ul.estimation.method_names()``): "emp", "emp+thr", "em", ...
      **options: method options (e.g. ``alpha`` for "emp+thr").

    Returns:
      ``float[d]`` estimate (``float[*grid, d]`` for a grid).
    """
    _check_mech(mech)
    m = get_method(method, mech)
    ys = _as_reports(mech, ys)
    shape = grid_shape_or_none(mech)
    if shape:  # a grid: reports with the grid's leading axes (as ``perturb`` of the grid returns them)
        return _estimate_grid(mech, shape, ys, method, options)
    stage = "em" if method == "em" else "estimate"  # EM's passes sized here too: before the reports are checked
    _memory.check_call_memory(f"ul.estimate(..., method={method!r})", mech, ys, stage=stage)
    check_reports(mech, ys)
    if m.input == "reports":
        return m.fn(mech, ys, **options)
    n = num_reports(mech, ys)
    return m.fn(mech, mech.aggregate(ys), n, **options)


def _estimate_grid(mech: Any, shape: tuple[int, ...], ys: Any, method: str, options: dict) -> jax.Array:
    """``float[*grid, d]``: each point's estimate from its own reports, exactly as ``estimate`` on that point."""
    for leaf in jax.tree_util.tree_leaves(ys):
        if tuple(np.shape(leaf)[: len(shape)]) != shape:
            raise ValueError(f"Expected the reports of a mechanism grid of shape {shape} to lead with that shape "
                             f"(as ul.perturb of the grid returns them), got a leaf of shape {np.shape(leaf)}.")
    return jnp.stack([estimate(_grid_point(mech, idx), jax.tree_util.tree_map(lambda leaf, i=idx: leaf[i], ys),
                               method, **options) for idx in np.ndindex(*shape)]).reshape(*shape, -1)


def check_n(n: Any) -> Any:
    """``n`` (number of users) must be an integer >= 1; tracers pass through unchecked."""
    if not _validate.is_concrete(n):
        return n
    if isinstance(n, bool) or isinstance(n, str):
        raise TypeError(f"Expected n={n!r} to be an int >= 1.")
    if isinstance(n, numbers.Integral):
        v = int(n)
    else:
        arr = np.asarray(n)
        if arr.ndim != 0 or arr.dtype.kind not in "iuf":
            raise TypeError(f"Expected n={n!r} to be an int >= 1 (a scalar).")
        if not (np.isfinite(arr) and float(arr) == np.floor(float(arr))):
            raise ValueError(f"Expected n={n!r} to be a whole number of users.")
        v = int(arr)
    if v < 1:
        raise ValueError(f"Expected n={n!r} >= 1 (the number of users behind stats).")
    return n


def check_stats(mech: Any, stats: Any, n: Any) -> None:
    """Checks concrete ``stats`` against the report kind: whole non-negative counts, none above ``n``; for
    item reports (a histogram of one report per user) the counts sum to ``n``."""
    if not (_validate.is_concrete(stats) and _validate.is_concrete(n)):
        return
    arr = np.asarray(stats)
    if arr.dtype.kind not in "iuf" or arr.dtype == np.bool_:
        raise TypeError(f"Expected stats to hold counts (integers), got dtype {arr.dtype}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError("Expected stats to be finite counts.")
    if mech.report_kind == "real":  # sums of real-valued reports (SHE): any finite value, not counts
        return
    if arr.dtype.kind == "f" and np.any(arr != np.round(arr)):
        raise ValueError("Expected stats to hold whole counts, got non-integer values "
                         "(aggregate reports with ul.aggregate(mech, ys)).")
    if np.any(arr < 0):
        raise ValueError(f"Expected stats to be non-negative counts, got {arr.min()}.")
    n = int(np.asarray(n))
    if np.any(arr > n):
        raise ValueError(f"Expected every count in stats <= n={n} (one report per user), got {arr.max()}.")
    if mech.report_kind == "item" and num_stats(mech) == mech.num_outputs:  # a histogram
        sums = arr.sum(axis=-1)
        if np.any(sums != n):
            bad = sums.ravel()[np.argmax(sums.ravel() != n)]
            raise ValueError(f"Expected stats, a histogram of one item report per user, to sum to n={n}, "
                             f"got {bad}.")


def estimate_from_stats(mech: Mechanism, stats: Any, n: Any, method: str = "emp", **options: Any) -> jax.Array:
    """Like ``estimate`` but from aggregate statistics (``stats``: ``int[..., num_stats]``; vmaps over reps).

    Concrete inputs are checked: ``n`` an integer >= 1; ``stats`` whole, non-negative counts of at most
    ``n`` each, summing to ``n`` for item reports (a histogram). Traced inputs are not checked.
    """
    _check_mech(mech)
    m = get_method(method, mech)
    if m.input != "stats":
        raise ValueError(f"Method {method!r} needs the reports, not aggregate statistics.")
    return estimate_with(mech, m, stats, n, **options)


def estimate_with(mech: Any, spec: Any, stats: Any, n: Any, **options: Any) -> jax.Array:
    """``estimate_from_stats`` with the method already resolved for ``mech`` (``spec``: a registry ``Method``).

    The engine resolves each method once per call and estimates through this function.
    """
    if spec.input != "stats":
        raise ValueError("Expected a method on aggregate statistics (input='stats'), got one that needs the "
                         "reports.")
    check_n(n)
    if not hasattr(stats, "shape") and not isinstance(stats, (list, tuple)):
        raise TypeError(f"Expected stats to be an int array [..., {num_stats(mech)}], "
                        f"got {type(stats).__name__}.")
    if jnp.ndim(stats) < 1 or jnp.shape(stats)[-1] != num_stats(mech):
        raise ValueError(f"Expected stats with last axis {num_stats(mech)}, "
                         f"got shape {jnp.shape(stats)}.")
    check_stats(mech, stats, n)
    stats = jnp.asarray(stats)
    fn = lambda st: spec.fn(mech, st, n, **options)
    for _ in range(stats.ndim - 1):
        fn = jax.vmap(fn)
    return fn(stats)
