"""The product domain ``d_1 x ... x d_k`` and per-attribute report columns, shared by SPL, SMP and RS+FD.

Encoding (the one convention of the package): a user's tuple ``(x_1, ..., x_k)`` is the flat index
``x = sum_j x_j * stride_j`` with ``stride_k = 1`` (row-major, ``numpy.ravel_multi_index`` order), so a protocol is a
``ul.Mechanism`` over ``d = prod d_j`` inputs and ``ul.audit``/``ul.simulate`` run it unchanged. A per-attribute
report is mapped to its oracle's channel column: an item report is its own column; a bit-vector report (UE family,
uRAP) is the integer whose bit ``b`` is report bit ``b`` (the order of the library's bit channels, ``bits_table``).
Reasons: the channel's columns must be enumerable for the exact audit, and one integer per user keeps the engine's
histogram path.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms import Mechanism

KINDS = ("item", "bits")  # oracle report kinds with enumerable columns (hashed reports, e.g. OLH, are not yet here)


def check_domains(domains: Any, minimum_k: int = 1) -> tuple[int, ...]:
    """``domains`` as a tuple of ints >= 2 with at least ``minimum_k`` attributes (ValueError/TypeError otherwise)."""
    if isinstance(domains, (int, np.integer)) or not isinstance(domains, Sequence):
        raise TypeError(f"Expected domains={domains!r} to be a tuple of attribute domain sizes.")
    out = tuple(_validate.check_int(f"domains[{j}]", d, minimum=2) for j, d in enumerate(domains))
    if len(out) < minimum_k:
        raise ValueError(f"Expected domains={out!r} to have at least {minimum_k} attributes.")
    return out


def check_oracles(oracles: Any, minimum_k: int = 1) -> tuple[Mechanism, ...]:
    """Each entry a library mechanism with item or bit-vector reports (their channel columns are enumerable)."""
    if not isinstance(oracles, tuple) or len(oracles) < minimum_k:
        raise ValueError(f"Expected oracles={oracles!r} to be a tuple of at least {minimum_k} mechanisms.")
    for j, o in enumerate(oracles):
        if not isinstance(o, Mechanism):
            raise TypeError(f"Expected oracles[{j}]={o!r} to be a ul.Mechanism.")
        if o.report_kind not in KINDS:
            raise ValueError(f"Expected oracles[{j}] to report items or bits, got report_kind={o.report_kind!r}.")
    return oracles


def columns_per_attribute(oracles: Sequence[Mechanism]) -> tuple[int, ...]:
    """``m_j``: the number of channel columns of attribute ``j``'s oracle."""
    return tuple(int(o.num_outputs) for o in oracles)


def strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides of a product of ``sizes`` (the last attribute varies fastest)."""
    out, s = [], 1
    for m in reversed(sizes):
        out.append(s)
        s *= m
    return tuple(reversed(out))


def encode(xs: Any, domains: Sequence[int]) -> np.ndarray:
    """``int32[n]`` flat indices of tuples ``xs: int[n, k]``, each ``xs[:, j]`` in ``[0, d_j)`` (checked).

    Raises:
      ValueError: ``xs`` not of shape ``[n, k]``, or a value outside its attribute's domain (named).
    """
    arr = np.asarray(xs)
    if arr.ndim != 2 or arr.shape[1] != len(domains):
        raise ValueError(f"Expected xs of shape [n, {len(domains)}] (one column per attribute), got {arr.shape}.")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"Expected xs to hold integers, got dtype {arr.dtype}.")
    for j, d in enumerate(domains):
        bad = (arr[:, j] < 0) | (arr[:, j] >= d)
        if bad.any():
            raise ValueError(f"Expected xs[:, {j}] in [0, {d}) (attribute {j}'s domain), got "
                             f"{arr[np.argmax(bad), j]!r} at row {int(np.argmax(bad))}.")
    return (arr.astype(np.int64) @ np.asarray(strides(domains), np.int64)).astype(np.int32)


def decode(flat: Any, sizes: Sequence[int]) -> list[Any]:
    """The per-attribute parts (``jnp`` int32 arrays) of flat indices into a product of ``sizes``."""
    flat = jnp.asarray(flat)
    return [(flat // s) % m for s, m in zip(strides(sizes), sizes)]


def to_column(oracle: Mechanism, ys: Any) -> Any:
    """``int32[n]``: the channel column of each of ``oracle``'s reports (item: itself; bits: their integer)."""
    if oracle.report_kind == "item":
        return jnp.asarray(ys, jnp.int32)
    bits = jnp.asarray(ys).astype(jnp.int32)
    return jnp.sum(bits << jnp.arange(bits.shape[-1], dtype=jnp.int32), axis=-1).astype(jnp.int32)


def from_column(oracle: Mechanism, cols: Any) -> Any:
    """Inverse of ``to_column``: the oracle's own reports (items, or ``bool[n, d_j]`` bit vectors)."""
    cols = jnp.asarray(cols, jnp.int32)
    if oracle.report_kind == "item":
        return cols
    return ((cols[..., None] >> jnp.arange(oracle.d, dtype=jnp.int32)) & 1).astype(bool)


def channel64(oracle: Mechanism) -> tuple[np.ndarray, np.ndarray]:
    """The oracle's exact channel ``(Q float64[d_j, m_j], protected bool[m_j])``."""
    Q, protected = oracle.channel_matrix()
    return np.asarray(Q, np.float64), np.asarray(protected, bool)


def product_size(sizes: Sequence[int]) -> int:
    return int(math.prod(sizes))


def all_sensitive_inputs(domains: Sequence[int], sensitive: Sequence[Sequence[int] | None]) -> tuple[int, ...]:
    """Flat inputs whose every attribute holds a sensitive value (``None``: attribute has no sensitive set, i.e. all
    of its values count as sensitive, being hidden by an LDP oracle). These inputs never reach an invertible output."""
    masks = []
    for d, s in zip(domains, sensitive):
        m = np.ones(d, bool) if s is None else np.isin(np.arange(d), np.asarray(s, int))
        masks.append(m)
    grid = np.ones((), bool)
    for m in masks:
        grid = np.logical_and.outer(grid, m)
    return tuple(int(i) for i in np.flatnonzero(grid.reshape(-1)))


def oracle_sensitive(oracle: Mechanism) -> tuple[int, ...] | None:
    """The oracle's sensitive set ``X_S`` read off its spec (``None`` for an LDP oracle: every output protected)."""
    spec = oracle.privacy_spec()
    if spec.invertible_inputs is None:
        return None
    return tuple(int(i) for i in np.flatnonzero(~np.asarray(spec.invertible_inputs, bool)))
