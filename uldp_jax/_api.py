"""Top-level functional API: ``perturb`` and ``estimate`` dispatch on the mechanism protocol."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax import _validate
from uldp_jax.estimation import _registry
from uldp_jax.mechanisms._base import Mechanism


def _check_mech(mech: Any) -> None:
    if not isinstance(mech, Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")


def perturb(key: jax.Array, mech: Any, xs: Any, *args: Any) -> Any:
    """Randomizes the users' true values ``xs`` with ``mech`` (all users in batched draws).

    Pure and composable with ``jit``/``vmap``; value checks run when ``xs`` is concrete.

    Args:
      key: PRNG key; consumed.
      mech: a mechanism.
      xs: ``int32[n]`` true items in ``[0, mech.d)`` (a scalar for one user).
      *args: extra per-user inputs some mechanisms take (e.g. PUM's personal items).

    Returns:
      The reports: ``int32[n]`` for item mechanisms; for bit-vector mechanisms ``bool[n, m]``, or
      ``ul.CompactBits`` (the positions of the ones, same law) when ``mech.prefers_compact()`` (a compact
      sampler, ``d >= 1024`` and at most ``d / 8`` ones expected; convert with ``ul.to_dense`` /
      ``ul.to_compact``); or the mechanism's documented report pytree.
    """
    _validate.check_key(key)
    _check_mech(mech)
    xs = _validate.check_items("xs", xs, mech.d, ndim=(0, 1))
    xs = jnp.asarray(xs, dtype=jnp.int32)
    if not args and xs.ndim == 1 and mech.prefers_compact():
        return mech.perturb_compact(key, xs)
    return mech.perturb_batch(key, xs, *args)


def aggregate(mech: Any, ys: Any) -> jax.Array:
    """Reduces reports to the mechanism's sufficient statistic (``int32[num_stats]``)."""
    _check_mech(mech)
    return mech.aggregate(ys)


def check_reports(mech: Any, ys: Any) -> None:
    """Checks that ``ys`` look like a batch of reports of ``mech`` (dtype, shape, range when concrete)."""
    mech.check_reports(ys)


def num_reports(mech: Any, ys: Any) -> int:
    leaves = jax.tree_util.tree_leaves(ys)
    if not leaves or jnp.ndim(leaves[0]) < 1:
        raise ValueError("Expected ys to hold a batch of reports with a leading user axis.")
    n = leaves[0].shape[0]
    if n < 1:
        raise ValueError(f"Expected ys to hold at least one report, got n={n}.")
    return n


def estimate(mech: Any, ys: Any, method: str = "emp", **options: Any) -> jax.Array:
    """Estimates the input distribution from reports ``ys`` of ``mech``.

    Args:
      mech: the mechanism that produced ``ys``.
      ys: reports as returned by ``perturb`` (leading axis = users).
      method: a registered method name (``ul.estimation.method_names()``): "emp", "emp+thr", "em", ...
      **options: method options (e.g. ``alpha`` for "emp+thr").

    Returns:
      ``float[d]`` estimate.
    """
    _check_mech(mech)
    m = _registry.get_method(method, mech)
    if m.input == "reports":
        return m.fn(mech, ys, **options)
    check_reports(mech, ys)
    n = num_reports(mech, ys)
    return m.fn(mech, mech.aggregate(ys), n, **options)


def estimate_from_stats(mech: Any, stats: Any, n: Any, method: str = "emp", **options: Any) -> jax.Array:
    """Like ``estimate`` but from aggregate statistics (``stats``: ``int[..., num_stats]``; vmaps over reps)."""
    _check_mech(mech)
    m = _registry.get_method(method, mech)
    if m.input != "stats":
        raise ValueError(f"Method {method!r} needs the reports, not aggregate statistics.")
    stats = jnp.asarray(stats)
    if stats.shape[-1] != mech.num_stats:
        raise ValueError(f"Expected stats with last axis {mech.num_stats}, got shape {stats.shape}.")
    fn = lambda st: m.fn(mech, st, n, **options)
    for _ in range(stats.ndim - 1):
        fn = jax.vmap(fn)
    return fn(stats)
