r"""Bit-packed bit-vector reports (RAPPOR/UE, uRAP) for EM: one bit per report bit.

``PackedReports`` holds each product-part report's bits over the product-part items ``items`` (every item for
RAPPOR/UE, the sensitive items for uRAP) as ``uint8[rows, B]`` bytes, ``B = ceil(len(items) / 8)``: bit ``k``
of byte ``j`` is the report's bit of item ``items[8 j + k]``. This is the exact report (no law is changed) at
``d / 8`` bytes per report, the smallest form when many bits are 1 (small eps: RAPPOR at eps = 0.1 sets about
half of them), where support lists (``SupportReports``: 2 bytes per one) are larger.

EM reads the bytes through a byte table (``_em_packed``): the sums over a report's ones are ``B`` gathers
instead of ``d`` multiply-adds. Rows are padded to a bucketed multiple of the chunk (``bucket``), so reports of
one mechanism with report counts in one bucket share one compiled solver.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing
from uldp_jax.estimation import _support
from uldp_jax.estimation._support import bucket
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import CompactBits, host_array
from uldp_jax.mechanisms import pytree_dataclass


@pytree_dataclass(data_fields=("bytes", "weight", "inverted", "stats", "items"), meta_fields=("chunk",))
@dataclasses.dataclass(frozen=True)
class PackedReports:
    """Bit-vector reports bit-packed over the product-part items (module docstring).

    Attributes:
      bytes: ``uint8[rows, B]``: the product-part bits of each product-part report, 8 per byte (padding rows
        and invertible uRAP reports: all 0). ``rows`` is a multiple of ``chunk``.
      weight: ``float32[rows]``: 1 for a product-part report, 0 for padding rows and invertible reports.
      inverted: ``int32[d]``: number of invertible reports per item (uRAP non-sensitive bits; 0 for RAPPOR).
      stats: ``int32[d]``: the mechanism's aggregate (per-item counts of ones of all reports), for the start.
      items: ``int32[s]``: the product-part items, in bit order.
      chunk: rows per chunk of the EM passes (static).
    """

    bytes: Any
    weight: Any
    inverted: Any
    stats: Any
    items: Any
    chunk: int = 1


def num_bytes(num_items: int) -> int:
    return max(-(-int(num_items) // 8), 1)


def chunk_rows(num_bytes_per_row: int, n: int | None = None) -> int:
    """Rows per chunk: a power of two near ``sizing().packed_chunk_bytes / B`` (fixed per size: reused shapes), or,
    for ``n`` reports that fit in fewer rows, one chunk of their own size (``_sizing.chunk_for``)."""
    full = _sizing.pow2_floor(max(_sizing.sizing().packed_chunk_bytes // max(num_bytes_per_row, 1), 8))
    return _sizing.chunk_for(full, n)


def padded_rows(n: int, chunk: int) -> int:
    """``chunk * bucket(chunks)``: the bucketed row count of ``n`` reports (at most 25% padding)."""
    return chunk * bucket(-(-max(int(n), 1) // chunk))


def pack_bytes(bits: jax.Array) -> jax.Array:
    """``bool[..., s]`` -> ``uint8[..., ceil(s / 8)]`` (bit ``k`` of byte ``j`` = bit ``8 j + k``; jittable)."""
    s = bits.shape[-1]
    b = num_bytes(s)
    bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, 8 * b - s)])
    bits = bits.reshape(bits.shape[:-1] + (b, 8)).astype(jnp.uint8)
    return jnp.sum(bits << jnp.arange(8, dtype=jnp.uint8), axis=-1, dtype=jnp.uint8)


def unpack_bytes(packed: jax.Array, num_items: int) -> jax.Array:
    """Inverse of ``pack_bytes``: ``uint8[..., B]`` -> ``bool[..., num_items]``."""
    bits = (packed[..., None] >> jnp.arange(8, dtype=jnp.uint8)) & 1
    return bits.reshape(packed.shape[:-1] + (-1,))[..., :num_items].astype(bool)


def pack_dense(mech: Any, ys: jax.Array, mask: jax.Array | None = None) -> tuple:
    """Dense ``bool[m, d]`` reports (``mask``: 0/1 per user) -> ``(bytes, weight, inverted, stats)`` (jittable)."""
    prod_mask, _ = _support.unary_parts(mech)
    items = np.flatnonzero(prod_mask)
    if mask is not None:
        ys = ys & mask[:, None]
    prod, keep, inverted = _support.split_invertible(mech, ys, check=False)
    keep = keep if mask is None else keep & mask
    bits = prod[:, items] & keep[:, None]
    stats = mech.aggregate(ys) if mask is None else mech.aggregate(ys, mask)
    return pack_bytes(bits), keep.astype(jnp.float32), inverted.astype(jnp.int32), stats.astype(jnp.int32)


def pack_ones(mech: Any, ones: jax.Array, mask: jax.Array | None = None) -> tuple:
    """Compact ``ones[m, W]`` (padding ``d``; ``mask``: 0/1 per user) -> ``(bytes, weight, inverted, stats)`` on
    the device (jittable; the reports are the sampler's own, so no impossible uRAP report is checked for)."""
    d = mech.d
    prod_mask, has_inv = _support.unary_parts(mech)
    items = np.flatnonzero(prod_mask)
    b = num_bytes(items.shape[0])
    m = ones.shape[0]
    ones = ones.astype(jnp.int32)
    if mask is not None:
        ones = jnp.where(mask[:, None], ones, d)
    stats = _compact.aggregate(CompactBits(ones, d))
    keep = jnp.ones(m, bool) if mask is None else mask.astype(bool)
    inverted = jnp.zeros(d, jnp.int32)
    if has_inv:
        outside = ~jnp.asarray(np.append(prod_mask, True))[ones]
        keep = keep & ~jnp.any(outside, axis=1)
        inverted = jnp.zeros(d + 1, jnp.int32).at[jnp.where(outside, ones, d)].add(1)[:d]
    pos_of = np.full(d + 1, -1, np.int32)
    pos_of[items] = np.arange(items.shape[0], dtype=np.int32)
    pos = jnp.asarray(pos_of)[ones]
    valid = (pos >= 0) & keep[:, None]
    flat = jnp.arange(m, dtype=jnp.int32)[:, None] * b + pos // 8
    value = jnp.left_shift(jnp.int32(1), pos % 8)
    by = jnp.zeros(m * b, jnp.int32).at[jnp.where(valid, flat, m * b)].add(jnp.where(valid, value, 0), mode="drop")
    return by.astype(jnp.uint8).reshape(m, b), keep.astype(jnp.float32), inverted, stats.astype(jnp.int32)


def _compact_block(mech: Any, ones: np.ndarray, pos_of: np.ndarray, b: int) -> tuple:
    """One block of concrete compact ``ones[m, W]`` -> (bytes uint8[m, b], keep bool[m], inverted int64[d])."""
    d = mech.d
    prod_mask, has_inv = _support.unary_parts(mech)
    m = ones.shape[0]
    inverted, keep = _support.split_inverted(ones, d, prod_mask, has_inv)
    pos = pos_of[ones]  # bit position among the product-part items; padding and non-sensitive: -1
    rows, cols = np.nonzero((pos >= 0) & keep[:, None])
    bit = pos[rows, cols]
    flat = np.bincount(rows * b + bit // 8, weights=(1 << (bit % 8)), minlength=m * b)
    return flat.astype(np.uint8).reshape(m, b), keep, inverted


def to_packed(mech: Any, ys: Any, rows: int | None = None) -> PackedReports:
    """``PackedReports`` from concrete reports: ``bool[n, d]`` or ``CompactBits``, or an iterable of such blocks.

    Args:
      mech: RAPPOR/UE or URAP.
      ys: concrete reports (or an iterable of blocks, so that dense reports of a large study never exist at once).
      rows: padded row count (default ``padded_rows(n, chunk)``; at least ``n``, a multiple of the chunk).
    """
    prod_mask, _ = _support.unary_parts(mech)
    d = mech.d
    items = np.flatnonzero(prod_mask)
    b = num_bytes(items.shape[0])
    pos_of = np.full(d + 1, -1, np.int64)
    pos_of[items] = np.arange(items.shape[0])
    blocks = [ys] if hasattr(ys, "shape") else ys
    parts, weights = [], []
    inverted, stats = np.zeros(d, np.int64), np.zeros(d, np.int64)
    for blk in blocks:
        if isinstance(blk, CompactBits):
            _compact.check(mech, blk)
            ones = np.asarray(blk.ones)
            stats += _support._row_bincount(ones, d + 1)[:d]
            for r in range(0, ones.shape[0], _sizing.sizing().host_rows):
                by, keep, inv = _compact_block(mech, ones[r:r + _sizing.sizing().host_rows], pos_of, b)
                parts.append(by)
                weights.append(keep)
                inverted += inv
        else:
            _support.check_bits(mech, blk)
            by, w, inv, st = jax.device_get(_pack_dense_jit(mech, jnp.asarray(blk)))
            _support.split_invertible(mech, jnp.asarray(blk), check=True)  # reject impossible uRAP reports
            parts.append(by)
            weights.append(w > 0)
            inverted += inv
            stats += st
    n = sum(p.shape[0] for p in parts)
    if n < 1:
        raise ValueError("Expected ys to hold at least one report.")
    chunk = chunk_rows(b, n)
    rows = padded_rows(n, chunk) if rows is None else int(rows)
    if rows < n or rows % chunk:
        raise ValueError(f"Expected rows >= {n} and a multiple of {chunk}, got rows={rows}.")
    out = host_array((rows, b), np.uint8, 0)  # device_put aliases it on the CPU
    w = np.zeros(rows, np.float32)
    r = 0
    for p, k in zip(parts, weights):
        out[r:r + p.shape[0]] = p
        w[r:r + p.shape[0]] = k
        r += p.shape[0]
    return PackedReports(jax.device_put(out), jnp.asarray(w), jnp.asarray(inverted, jnp.int32),
                         jnp.asarray(stats, jnp.int32), jnp.asarray(items, jnp.int32), chunk)


_pack_dense_jit = jax.jit(pack_dense)


def pad_packed(rep: PackedReports, rows: int) -> PackedReports:
    """``rep`` with its rows padded (zero bytes, weight 0) to ``rows`` (a multiple of its chunk)."""
    extra = rows - rep.bytes.shape[0]
    if extra <= 0:
        return rep
    return dataclasses.replace(rep, bytes=jnp.pad(rep.bytes, ((0, extra), (0, 0))),
                               weight=jnp.pad(rep.weight, (0, extra)))


def check_packed(mech: Any, rep: PackedReports) -> None:
    """Shapes and dtypes of ``rep`` for ``mech`` (ValueError/TypeError naming the field)."""
    prod_mask, _ = _support.unary_parts(mech)
    s = int(prod_mask.sum())
    if rep.bytes.ndim != 2 or jnp.dtype(rep.bytes.dtype) != jnp.uint8 or rep.bytes.shape[1] != num_bytes(s):
        raise TypeError(f"Expected reports.bytes uint8[rows, {num_bytes(s)}] for {type(mech).__name__}, got "
                        f"{rep.bytes.dtype}{tuple(rep.bytes.shape)}.")
    rows = rep.bytes.shape[0]
    if rep.weight.shape != (rows,) or rep.inverted.shape != (mech.d,) or rep.stats.shape != (mech.d,) \
            or rep.items.shape != (s,):
        raise ValueError(f"Expected reports.weight [{rows}], inverted and stats [{mech.d}] and items [{s}], got "
                         f"{rep.weight.shape}, {rep.inverted.shape}, {rep.stats.shape} and {rep.items.shape}.")
    if rep.chunk < 1 or rows % rep.chunk:
        raise ValueError(f"Expected reports.bytes rows ({rows}) to be a multiple of chunk={rep.chunk}.")
