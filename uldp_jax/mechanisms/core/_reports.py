"""Helpers on reports and statistics every family uses: histograms, bit sums, channel-size checks, report
checks (``check_reports``: the mechanism's ``reports().check`` or the forms by ``report_kind``),
``affine_variance`` and ``unbatch``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact, _grid_check, _report_space

# Largest number of channel entries (d * m) that ``channel`` will enumerate.
MAX_CHANNEL_ENTRIES = 2**24


def bincount(ys: jax.Array, length: int, weights: jax.Array | None = None) -> jax.Array:
    """int32 histogram of item reports (weights: 0/1 mask for padded users)."""
    if weights is None:
        return jnp.bincount(ys, length=length).astype(jnp.int32)
    return jnp.zeros(length, jnp.int32).at[ys].add(weights.astype(jnp.int32))


def bit_sums(bits: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    """int32 per-bit support counts of bit-vector reports ``bool[n, m]``."""
    if weights is not None:
        bits = bits & weights.astype(bool)[:, None]
    return jnp.sum(bits, axis=0, dtype=jnp.int32)


def size_text(k: int) -> str:
    """``k`` for a message: exact, as ``2^j`` for a large power of two (``2^100``, not a capped 2^64)."""
    k = int(k)
    if k > 2**40 and k & (k - 1) == 0:
        return f"2^{k.bit_length() - 1}"
    return str(k)


def check_channel_size(name: str, d: int, m: int) -> None:
    if int(d) * int(m) > MAX_CHANNEL_ENTRIES:
        raise ValueError(
            f"{name}: the exact channel has {size_text(d)} x {size_text(m)} entries, more than "
            f"{MAX_CHANNEL_ENTRIES} (2^24); use a smaller domain for exact channels and audits, or sampling-based "
            "checks (ul.simulate, ul.testing) at this size."
        )


def bits_table(m: int) -> np.ndarray:
    """bool[2**m, m]: row ``y`` holds the bits of the integer ``y`` (bit j = (y >> j) & 1)."""
    ys = np.arange(2**m, dtype=np.int64)
    return ((ys[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)


def affine_variance(affine: tuple[Any, Any], p: jax.Array, n: Any) -> jax.Array:
    """iid per-item variance ``f (1 - f) / (n a^2)``, ``f = a p + b``, of the affine estimator ``(stats/n - b)/a``."""
    a, b = affine
    f = a * p + b
    return f * (1.0 - f) / (jnp.asarray(n, a.dtype) * a**2)


def describe_reports(tree: Any) -> str:
    """``HashReport(seed: uint32[n], value: int32[n])``-style description of a report pytree (``n`` = users)."""
    def leaf(v: Any) -> str:
        if not hasattr(v, "dtype") or not hasattr(v, "shape"):
            return type(v).__name__
        return f"{np.dtype(v.dtype).name}[{', '.join(['n'] + [str(k) for k in tuple(v.shape)[1:]])}]"

    if hasattr(tree, "_fields"):
        return f"{type(tree).__name__}(" + ", ".join(f"{f}: {leaf(getattr(tree, f))}" for f in tree._fields) + ")"
    return leaf(tree)


def _check_item_reports(mech: Any, ys: Any) -> None:
    if isinstance(ys, (list, tuple)) and not hasattr(ys, "_fields"):
        ys = np.asarray(ys)
    if hasattr(ys, "_fields") or not hasattr(ys, "dtype") or np.dtype(ys.dtype).kind not in "iu":
        raise TypeError(f"Expected ys to be item reports of {type(mech).__name__}: int32[n] in "
                        f"[0, {mech.num_outputs}), got {describe_reports(ys)}.")
    _validate.check_items("ys", ys, mech.num_outputs, ndim=1)


def _check_bit_reports(mech: Any, ys: Any) -> None:
    if isinstance(ys, _compact.CompactBits):
        _compact.check(mech, ys)
        return
    if hasattr(ys, "_fields") or not hasattr(ys, "dtype") or jnp.dtype(ys.dtype) != jnp.bool_:
        raise TypeError(f"Expected ys to be bit-vector reports of {type(mech).__name__}: "
                        f"bool[n, {_report_space.num_stats(mech)}], got {describe_reports(ys)}.")
    if ys.ndim != 2 or ys.shape[1] != _report_space.num_stats(mech):
        raise ValueError(f"Expected ys with shape [n, {_report_space.num_stats(mech)}], got {tuple(ys.shape)}.")


REPORT_CHECKS = {"item": _check_item_reports, "bits": _check_bit_reports}


def check_reports(mech: Any, ys: Any) -> None:
    """Raises ``TypeError``/``ValueError`` (naming ``ys``) unless ``ys`` is a batch of ``mech``'s reports:
    ``mech.reports().check`` when the mechanism gives one, else ``default_check``."""
    check = _report_space.own(mech).check
    if check is not None:
        check(ys)
        return
    default_check(mech, ys)


def sample_stats(mech: Any, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    """``aggregate(perturb_batch(key, xs), weights)`` in law and in bits: ``mech.reports().sample`` when the
    mechanism gives one (it skips the reports), else ``default_sample_stats``."""
    sample = _report_space.own(mech).sample
    if sample is not None:
        return sample(key, xs, weights)
    return default_sample_stats(mech, key, xs, weights)


def default_sample_stats(mech: Any, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    """A ``compact()`` record with ``stats`` set draws the per-bit sums of its ``perturb(key, xs)`` (same key, same
    values; O(number of ones)); otherwise ``aggregate(perturb_batch(key, xs), weights)``."""
    compact = mech.compact()
    if compact is not None and compact.stats:
        items_s, own_prob, q = compact.params
        return _compact.sample_counts(key, xs, items_s, own_prob, q, _report_space.num_stats(mech), weights)[0]
    return mech.aggregate(mech.perturb_batch(key, xs), weights)


def default_check(mech: Any, ys: Any) -> None:
    """The item / bit-vector report forms by ``report_kind``; otherwise the structure, dtypes and trailing shapes
    of ``perturb_batch``'s reports."""
    from_kind = REPORT_CHECKS.get(mech.report_kind)
    if from_kind is not None:
        from_kind(mech, ys)
        return
    want = jax.eval_shape(mech.perturb_batch, jax.random.key(0), jax.ShapeDtypeStruct((1,), jnp.int32))
    want_def = jax.tree_util.tree_structure(want)
    got_def = jax.tree_util.tree_structure(ys)
    if got_def != want_def:
        raise TypeError(f"Expected ys to be reports of {type(mech).__name__}: {describe_reports(want)}, "
                        f"got {describe_reports(ys)}.")
    for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(ys)):
        if (not hasattr(g, "dtype") or jnp.dtype(g.dtype) != w.dtype or jnp.ndim(g) != w.ndim
                or tuple(jnp.shape(g))[1:] != tuple(w.shape)[1:]):
            raise TypeError(f"Expected ys to be reports of {type(mech).__name__}: {describe_reports(want)} "
                            f"(leading axis = users), got {describe_reports(ys)}.")


def unbatch(mech: Any) -> list[Any]:
    """The elements of a grid of mechanisms (``grid_shape(mech)`` leading on every leaf), in C order.

    A single mechanism gives ``[mech]``.
    """
    shape = _grid_check.grid_shape(mech)
    if not shape:
        return [mech]
    leaves = jax.tree_util.tree_leaves(mech)
    for leaf in leaves:
        if tuple(jnp.shape(leaf))[: len(shape)] != shape:
            raise ValueError(f"Expected every leaf of the grid {type(mech).__name__} to lead with batch shape "
                             f"{shape}, got a leaf of shape {jnp.shape(leaf)}.")
    return [jax.tree.map(lambda v, i=i: v[i], mech) for i in np.ndindex(*shape)]
