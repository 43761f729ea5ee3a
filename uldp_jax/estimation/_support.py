"""Compact forms of bit-vector reports (RAPPOR/UE, uRAP) for EM: padded support lists and a column layout.

``SupportReports`` holds the reported ones of every product-part report twice when built with
``layout="columns"``: by row (``support``, for the gather-sum :math:`s_i = \\sum_{x \\in y_i} p_x`) and by column
(``col_rows``, for :math:`b_x = \\sum_{i: y_{ix} = 1} 1/D_i`), so that both passes of an EM step are gathers
followed by sums over contiguous, sorted segments; XLA CPU's scatter-add (the row-only layout's second pass) is
slower than a gather. Indices are ``uint16`` when they fit (half the memory traffic of ``int32``).

The column layout splits the rows into ``num_blocks`` equal blocks of at most 65535 rows; within a block, the
rows having item ``x`` are listed in order, split into segments of ``seg`` entries (padded with the block's
zero slot ``block_rows``), and ``col_item`` names each segment's item (``d`` for padding segments).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing, _validate
from uldp_jax._sizing import report_bucket as bucket  # the rounding rule for report counts and widths
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import CompactBits, host_array
from uldp_jax.mechanisms import pytree_dataclass
from uldp_jax.mechanisms.core import likelihood_of


@pytree_dataclass(data_fields=("support", "weight", "inverted", "stats", "col_rows", "col_item"),
                        meta_fields=("chunk", "block_rows"))
@dataclasses.dataclass(frozen=True)
class SupportReports:
    """Bit-vector reports as padded support lists (compact form of the product-likelihood data).

    Attributes:
      support: ``uint16[rows, L]`` (``int32`` when ``d >= 65535``): per product-part report, the items whose
        bit is 1 (every item for RAPPOR/UE, the sensitive items for uRAP), padded with ``d``. Invertible
        reports keep no row; ``rows`` is a multiple of the chunk size (padding rows have weight 0).
      weight: ``float[rows]``: 1 for a product-part report, 0 for padding rows.
      inverted: ``float[d]``: number of invertible reports per item (uRAP non-sensitive bits; 0 for RAPPOR).
      stats: ``float[d]``: the mechanism's aggregate (per-item support counts of all reports), for the start.
      col_rows: ``None`` (row layout: the second pass is a scatter-add) or ``uint16[num_blocks, S, seg]``: the
        column layout (module docstring); ``rows = num_blocks * block_rows``.
      col_item: ``None`` or ``int32[num_blocks, S]``: the item of each column segment (``d``: padding).
      chunk: users per chunk of the row pass (static).
      block_rows: rows per block of the column layout (static; 0 for the row layout).
    """

    support: Any
    weight: Any
    inverted: Any
    stats: Any
    col_rows: Any = None
    col_item: Any = None
    chunk: int = 1
    block_rows: int = 0


def unary_parts(mech: Any) -> tuple[np.ndarray, bool]:
    """(product-part mask bool[d], has_invertible): the mechanism's ``likelihood().product``."""
    parts = likelihood_of(mech).product
    if parts is None:
        raise ValueError(f"No exact-likelihood EM for reports of mech={type(mech).__name__} "
                         f"(report_kind={mech.report_kind!r}).")
    mask, inv = parts[:2]  # a third entry, the bits' log-odds, is EM's rate (_likelihood.product_log_odds)
    return np.asarray(mask, bool), bool(inv)


def pack_compact(mech: Any, ys: CompactBits, dtype: Any,
                 count_stats: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Concrete ``CompactBits`` -> (support rows of the product-part reports, inverted counts int64[d],
    stats int64[d]) on the host, without the dense bits. ``count_stats=False``: stats ``None`` where the support
    rows are every report's ones (RAPPOR/UE), so that ``assemble`` takes them from its own counts of the rows."""
    _compact.check(mech, ys)
    d = mech.d
    ones = np.asarray(ys.ones)
    prod_mask, has_inv = unary_parts(mech)
    inverted, keep = split_inverted(ones, d, prod_mask, has_inv)
    rows = np.flatnonzero(keep) if not keep.all() else None  # RAPPOR/UE: every row stays (no copy)
    stats = None if rows is None and not has_inv and not count_stats else _row_bincount(ones, d + 1)[:d]
    num = ones.shape[0] if rows is None else rows.shape[0]

    def kept(r):
        return ones[r:r + _sizing.sizing().host_rows] if rows is None else ones[rows[r:r + _sizing.sizing().host_rows]]

    width = max(max((int(np.max(np.sum(kept(r) < d, axis=1), initial=0)) for r in range(0, num, _sizing.sizing().host_rows)),
                    default=0), 1)
    if ones.shape[1] <= width and rows is None:
        return ones.astype(dtype, copy=False), inverted, stats
    # rows may carry padding in any column: move it to the end before cutting, ``host_rows`` rows at a time (a
    # full-size stable argsort takes an int64 temporary of 8 bytes per entry)
    out = np.empty((num, min(width, ones.shape[1])), dtype)
    for r in range(0, num, _sizing.sizing().host_rows):
        blk = kept(r)
        order = np.argsort(blk >= d, axis=1, kind="stable")[:, :out.shape[1]]
        out[r:r + _sizing.sizing().host_rows] = np.take_along_axis(blk, order, axis=1)
    return out, inverted, stats


def _row_bincount(a: np.ndarray, length: int) -> np.ndarray:
    """``bincount(a.ravel(), minlength=length)`` (int64) over blocks of rows: no full-size int64 temporary."""
    out = np.zeros(length, np.int64)
    for r in range(0, a.shape[0], _sizing.sizing().host_rows):
        out += np.bincount(a[r:r + _sizing.sizing().host_rows].ravel(), minlength=length)[:length]
    return out


def row_chunk(n: int, width: int) -> int:
    """Rows per chunk of the row pass: about ``sizing().row_chunk_entries / 4`` gathered entries, rounded down to a
    multiple of 8 (an odd chunk made every pass slower; experiments/benchmarks/README.md (k))."""
    rows = max(1, _sizing.sizing().row_chunk_entries // 4 // max(width, 1))
    rows = rows // 8 * 8 if rows >= 8 else rows
    return max(1, min(n, rows))


def compact_rows(mech: Any, ys: CompactBits, chunk: int | None = None) -> SupportReports:
    """Row-layout ``SupportReports`` from ``CompactBits`` in JAX (jittable; invertible rows get weight 0)."""
    d = mech.d
    prod_mask, has_inv = unary_parts(mech)
    ones = ys.ones.astype(jnp.int32)
    n, width = ones.shape
    weight = jnp.ones(n, jnp.float32)
    inverted = jnp.zeros(d, jnp.int32)
    if has_inv:
        outside = ~jnp.asarray(np.append(prod_mask, True))[ones]
        keep = ~jnp.any(outside, axis=1)
        inverted = jnp.zeros(d + 1, jnp.int32).at[jnp.where(outside, ones, d)].add(1)[:d]
        ones = jnp.where(keep[:, None], ones, d)
        weight = keep.astype(jnp.float32)
    if chunk is None:
        chunk = row_chunk(n, width)
    pad = -n % chunk
    support = jnp.pad(ones, ((0, pad), (0, 0)), constant_values=d).astype(index_dtype(d))
    weight = jnp.pad(weight, (0, pad))
    return SupportReports(support, weight, inverted, _compact.aggregate(ys), None, None, int(chunk), 0)


def others_in_product(mech: Any) -> bool:
    """Whether every "other" item of ``mech``'s compact process (``compact().params[0]``) is in the product part:
    then a compact report leaves the product part only by its own bit (uRAP: its sensitive bits are the product
    part), and ``own_bit_rows`` finds the invertible reports per user instead of per entry."""
    compact = mech.compact()
    if compact is None or compact.params is None:
        return False
    prod_mask, _ = unary_parts(mech)
    if prod_mask.shape[0] != mech.d:
        return False
    items = compact.params[0]
    if not _validate.is_concrete(items):
        return False
    return bool(np.all(prod_mask[np.asarray(items, np.int64)]))


def own_bit_rows(mech: Any, ones: jax.Array, xs: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``compact_rows``' weights and inverted counts of compact reports ``ones[B, W]`` of users ``xs`` (``mask``:
    weighted users; their rows all padding elsewhere), where ``others_in_product(mech)``: a report is invertible
    exactly when it holds its own item and that item is outside the product part, so one comparison per entry and
    one scatter per user replace ``compact_rows``' gather and scatter over every entry (experiments/benchmarks/README.md (k)). Returns ``(weight float32[B], inverted int32[d])``; the rows are left as they are
    (the caller pads the invertible ones: ``_support_device.compact_columns(clean=True)``)."""
    d = mech.d
    prod_mask, has_inv = unary_parts(mech)
    mask = mask.astype(bool)
    if not has_inv:
        return mask.astype(jnp.float32), jnp.zeros(d, jnp.int32)
    x = jnp.clip(xs.astype(jnp.int32), 0, d - 1)
    out = mask & ~jnp.asarray(prod_mask)[x] & jnp.any(ones == x[:, None].astype(ones.dtype), axis=1)
    inverted = jnp.zeros(d + 1, jnp.int32).at[jnp.where(out, x, d)].add(1)[:d]
    return (mask & ~out).astype(jnp.float32), inverted


def check_bits(mech: Any, ys: Any) -> None:
    if not hasattr(ys, "dtype") or jnp.dtype(ys.dtype) != jnp.bool_:
        raise TypeError(f"Expected ys to be bool[n, {mech.d}] bit-vector reports of {type(mech).__name__}, "
                        f"got {getattr(ys, 'dtype', type(ys).__name__)}.")
    if ys.ndim != 2 or ys.shape[1] != mech.d or ys.shape[0] < 1:
        raise ValueError(f"Expected ys with shape [n, {mech.d}] (n >= 1), got {tuple(ys.shape)}.")


def split_invertible(mech: Any, ys: jax.Array, check: bool):
    """``(product-part bits bool[n, d], weight bool[n], inverted counts int[d])``."""
    prod_mask, has_inv = unary_parts(mech)
    if not has_inv:
        return ys, jnp.ones(ys.shape[0], bool), jnp.zeros(mech.d, jnp.int32)
    nonsens = jnp.asarray(~prod_mask)
    ns_bits = ys & nonsens
    k = jnp.sum(ns_bits, axis=1)
    if check and _validate.is_concrete(ys) and bool(np.any(np.asarray(k) > 1)):
        raise ValueError("Expected uRAP reports with at most one non-sensitive bit set (reports with two or "
                         "more have probability 0); got a report with more: wrong mechanism?")
    inverted = jnp.sum(ns_bits, axis=0, dtype=jnp.int32)
    return ys & jnp.asarray(prod_mask), k == 0, inverted


def index_dtype(d: int) -> Any:
    return np.uint16 if d < 65535 else np.int32


def pack_block(mech: Any, ys: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block of concrete ``bool[m, d]`` reports -> (support rows of its product-part reports, inverted
    counts int64[d], stats int64[d]) on the host."""
    check_bits(mech, ys)
    bits, w, inv = split_invertible(mech, jnp.asarray(ys), check=True)
    bits = np.asarray(bits)[np.asarray(w)]  # invertible reports only count in `inverted`: drop their rows
    rows, cols = np.nonzero(bits)
    counts = np.bincount(rows, minlength=bits.shape[0])
    sup = np.full((bits.shape[0], max(int(counts.max(initial=0)), 1)), mech.d, dtype=dtype)
    starts = np.cumsum(counts) - counts
    sup[rows, np.arange(rows.shape[0]) - starts[rows]] = cols
    stats = np.asarray(mech.aggregate(jnp.asarray(ys)), np.int64)
    return sup, np.asarray(inv, np.int64), stats


def pack_bits(mech: Any, bits: jax.Array, mask: jax.Array, width: int) -> tuple:
    """JAX (jittable) packing of one block ``bits: bool[B, d]`` with user mask ``mask: bool[B]``.

    Returns ``(support [B, width], weight float32[B], inverted int32[d], stats int32[d], widest int32[])``:
    masked users and invertible reports get weight 0 and an all-padding row; ``widest`` is the largest
    number of product-part ones of a row (rows wider than ``width`` are cut: callers size ``width`` with a
    first call and check it).
    """
    bits = bits & mask[:, None]
    prod, keep, inverted = split_invertible(mech, bits, check=False)
    prod = prod & keep[:, None]
    dtype = index_dtype(mech.d)
    support = jax.vmap(lambda row: jnp.nonzero(row, size=width, fill_value=mech.d)[0])(prod).astype(dtype)
    stats = mech.aggregate(bits, mask)
    widest = jnp.max(jnp.sum(prod, axis=1, dtype=jnp.int32), initial=0)
    return support, (keep & mask).astype(jnp.float32), inverted, stats, widest


def column_segments(sup: np.ndarray, d: int, seg: int, out: np.ndarray | None = None,
                    counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column layout of one block ``sup[B, L]`` (items, padded with ``d``): ``(uint16[S, seg], int32[S])``.

    Entries are the rows (in order) holding each item, split into segments of ``seg`` padded with ``B``.
    A counting placement over ``sizing().host_rows`` rows at a time (a sort of each slice's ``item << 16 | row`` keys, then
    each entry goes to its item's next free slot): temporaries O(slice), not O(block). The keys' sort gives the
    order of a stable argsort by item (rows ascending within an item) faster than ``argsort`` of the
    items (NumPy sorts 32-bit keys with SIMD; 16-bit ``argsort`` is a radix sort of indices). ``out``: an
    optional ``uint16[S', seg]`` buffer (``S' >= S``, filled with ``B``) to write into; the result is then a view
    of it. ``counts``: the block's per-item entry counts ``int64[d]``, where the caller has them (else counted
    here).
    """
    rows_in_block, width = sup.shape
    if counts is None:
        counts = _row_bincount(sup, d + 1)[:d]
    nseg = -(-counts // seg)
    base = (np.cumsum(nseg) - nseg) * seg  # first slot of each item
    if out is None:
        out = np.full((int(nseg.sum()), seg), rows_in_block, np.uint16)
    out = out.reshape(-1)[: int(nseg.sum()) * seg]
    key_type = np.uint32 if d < 2**16 else np.uint64  # item << 16 | row (rows < 2**16: _sizing.sizing().block_rows)
    slot_type = np.int32 if out.size < 2**31 else np.int64  # (int32 slots: a third of the time of int64 ones)
    row_of = np.repeat(np.arange(min(_sizing.sizing().host_rows, rows_in_block), dtype=key_type), width)
    for r in range(0, rows_in_block, _sizing.sizing().host_rows):
        blk = sup[r:r + _sizing.sizing().host_rows]
        keys = (blk.ravel().astype(key_type) << key_type(16)) | (row_of[: blk.size] + key_type(r))
        keys.sort()  # by item, rows in order; padding (= d) sorts last
        starts = np.searchsorted(keys, np.arange(d + 1, dtype=key_type) << key_type(16))  # each item's first key
        sub = np.diff(starts)
        nnz = int(starts[d])
        # the j-th sorted entry (item x) goes to slot base[x] + (j - first sorted position of x): sequential
        slots = np.arange(nnz, dtype=slot_type) + np.repeat((base - (np.cumsum(sub) - sub)).astype(slot_type), sub)
        out[slots] = keys[:nnz].astype(np.uint16)  # the row: the key's low 16 bits
        base += sub
    return out.reshape(-1, seg), np.repeat(np.arange(d, dtype=np.int32), nseg)


def _dividing_chunk(n: int, width: int) -> int | None:
    """A row chunk near ``row_chunk(n, width)`` (a multiple of 8 within -50% .. +50%) that splits ``n`` rows into the
    column layout's equal blocks with no padding row, or ``None``: ``assemble`` then takes the reports' own buffer as
    the support lists instead of copying them."""
    num_blocks = _ceil(n, _sizing.sizing().block_rows)
    if n % num_blocks:
        return None
    per, target = n // num_blocks, row_chunk(n, width)
    for c in sorted(range(8, 3 * target // 2 + 1, 8), key=lambda c: (abs(c - target), c)):
        if 2 * c >= target and per % c == 0:
            return c
    return None


def _ceil(a: int, b: int) -> int:
    return max(-(-a // b), 1)


def assemble(mech: Any, packed: list, inverted: np.ndarray, stats: np.ndarray | None, chunk: int | None,
             layout: str, dtype: Any) -> SupportReports:
    """``SupportReports`` from packed blocks of support rows (``pack_block``), in the requested layout.
    ``stats=None``: the rows hold every report's ones, and the stats are their per-item counts."""
    if not packed:
        raise ValueError("Expected ys to hold at least one block of reports.")
    if layout not in ("auto", "rows", "columns"):
        raise ValueError(f"Expected layout in ('auto', 'rows', 'columns'), got {layout!r}.")
    d = mech.d
    width = max(s.shape[1] for s in packed)
    n = sum(s.shape[0] for s in packed)
    if layout == "auto":
        layout = "columns" if n * width >= _sizing.sizing().auto_columns_entries else "rows"
    bucketed = chunk is None and layout == "rows"
    if bucketed:  # one compiled solver per bucket of (width, rows): a power-of-two chunk, bucketed counts
        width = bucket(width) if width > 8 else 1 << (width - 1).bit_length()  # 1, 2, 4, 8, 10, 12, ...
        chunk = _sizing.chunk_for(_sizing.pow2_floor(max(1, _sizing.sizing().row_chunk_entries // 4 // width)), n)
    elif chunk is None:
        chunk = (layout == "columns" and _dividing_chunk(n, width)) or row_chunk(n, width)
    chunk = _validate.check_int("chunk", chunk, minimum=1)
    num_blocks, block_rows = 1, 0
    if layout == "columns":
        if chunk > _sizing.sizing().block_rows:
            raise ValueError(f"Expected chunk <= {_sizing.sizing().block_rows} with layout='columns', got {chunk}.")
        num_blocks = _ceil(n, _sizing.sizing().block_rows)
        block_rows = _ceil(_ceil(n, num_blocks), chunk) * chunk
        while block_rows > _sizing.sizing().block_rows:  # rounding up to the chunk overflowed uint16: more blocks
            num_blocks += 1
            block_rows = _ceil(_ceil(n, num_blocks), chunk) * chunk
        n_pad = num_blocks * block_rows
    else:
        n_pad = (chunk * bucket(_ceil(n, chunk))) if bucketed else _ceil(n, chunk) * chunk
    if n_pad == n and len(packed) == 1 and packed[0].shape[1] == width and packed[0].dtype == dtype \
            and packed[0].flags.c_contiguous:
        support = packed.pop()  # the reports' own buffer (ul.perturb's compact ones, aligned): no copy at all
    else:
        support = host_array((n_pad, width), dtype)  # every entry written once (np.full + copy wrote twice)
        row = 0
        packed.reverse()
        while packed:  # release each packed block once copied
            s = packed.pop()
            support[row:row + s.shape[0], : s.shape[1]] = s
            support[row:row + s.shape[0], s.shape[1]:] = d
            row += s.shape[0]
        del s
        support[row:] = d
    w = np.zeros(n_pad, np.float32)
    w[:n] = 1.0
    support_dev = jax.device_put(support)
    del support  # the host keeps one copy at a time: the packing below reads the device buffer's host view
    col_rows = col_item = None
    if stats is None and layout != "columns":
        stats = _row_bincount(np.asarray(support_dev), d + 1)[:d]
    if layout == "columns":
        sup = np.asarray(support_dev)
        blocks = [sup[b * block_rows:(b + 1) * block_rows] for b in range(num_blocks)]

        def fill(b):
            _, it = column_segments(blocks[b], d, _sizing.sizing().column_segment, out=col_rows[b], counts=counts[b])
            col_item[b, : it.shape[0]] = it

        # blocks are independent and NumPy's counts, sorts and copies release the GIL: one thread per core
        with concurrent.futures.ThreadPoolExecutor(min(num_blocks, os.cpu_count() or 1)) as pool:
            counts = list(pool.map(lambda blk: _row_bincount(blk, d + 1)[:d], blocks))
            if stats is None:
                stats = np.sum(counts, axis=0)
            num_seg = _ceil(max(int((-(-c // _sizing.sizing().column_segment)).sum()) for c in counts), _sizing.sizing().column_chunk) * _sizing.sizing().column_chunk
            col_rows = host_array((num_blocks, num_seg, _sizing.sizing().column_segment), np.uint16, block_rows)
            col_item = host_array((num_blocks, num_seg), np.int32, d)
            list(pool.map(fill, range(num_blocks)))
        col_rows, col_item = jax.device_put(col_rows), jax.device_put(col_item)
    return SupportReports(support_dev, jnp.asarray(w), jnp.asarray(inverted), jnp.asarray(stats),
                          col_rows, col_item, int(chunk), int(block_rows))


def to_support(mech: Any, ys: Any, chunk: int | None = None, dtype: Any = None,
               layout: str = "auto") -> SupportReports:
    """Converts concrete ``bool[n, d]`` reports into ``SupportReports`` on the host (NumPy), block by block.

    Args:
      mech: RAPPOR/UE or URAP.
      ys: concrete ``bool[n, d]`` reports or ``CompactBits``, or an iterable of such blocks (e.g. a generator, so that the dense
        reports of a large study never exist at once; memory is that of the packed support lists).
      chunk: users per chunk of the row pass (default: about ``sizing().row_chunk_entries / 4`` gathered entries).
      dtype: index dtype (default ``uint16`` when ``d < 65535``, else ``int32``).
      layout: ``"rows"`` (support lists only), ``"columns"`` (also the column layout: faster EM steps, twice
        the memory) or ``"auto"`` (columns from ``sizing().auto_columns_entries`` padded entries on).
    """
    single = isinstance(ys, CompactBits)
    blocks = [ys] if hasattr(ys, "shape") else ys  # CompactBits has a shape too
    dtype = index_dtype(mech.d) if dtype is None else dtype
    packed, inverted, stats = [], np.zeros(mech.d, np.int64), np.zeros(mech.d, np.int64)
    for b in blocks:
        if isinstance(b, CompactBits):  # one block of every report's ones: counted with the layout
            sup, inv, st = pack_compact(mech, b, dtype, count_stats=not single)
        else:
            sup, inv, st = pack_block(mech, b, dtype)
        packed.append(sup)
        inverted += inv
        stats = None if st is None else stats + st
    return assemble(mech, packed, inverted, stats, chunk, layout, dtype)


def split_inverted(ones: np.ndarray, d: int, prod_mask: np.ndarray, has_inv: bool) -> tuple[np.ndarray, np.ndarray]:
    """Compact ``ones[m, W]`` (padding ``d``) -> (counts int64[d] of the reports whose one non-sensitive bit
    identifies their input, bool[m]: the reports that stay in the product part)."""
    inverted = np.zeros(d, np.int64)
    keep = np.ones(ones.shape[0], bool)
    if has_inv:
        outside = ~np.append(prod_mask, True)[ones]
        k = outside.sum(axis=1)
        if np.any(k > 1):
            raise ValueError("Expected uRAP reports with at most one non-sensitive bit set (reports with two or "
                             "more have probability 0); got a report with more: wrong mechanism?")
        inverted = np.bincount(ones[outside], minlength=d).astype(np.int64)
        keep = k == 0
    return inverted, keep
