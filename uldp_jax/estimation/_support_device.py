"""The column layout of ``SupportReports`` built in JAX (jittable, on the device), as ``_support.assemble`` builds
it on the host: for reports that never leave the device (``simulate``'s report path).

``compact_columns`` first moves the rows that hold product-part reports (weight > 0) to the front, stably, and
keeps a static number of rows (an upper bound the caller read from the reports' aggregates), so that the padding
rows of invertible reports (uRAP's non-sensitive users) and masked users cost nothing in the EM passes (where that
bound keeps every row, as for RAPPOR, the rows stay where they are: no reorder, no copy). It then
places each block's entries by a scan over its rows (a row's items are distinct, so a row's entries go to their
items' next free slots at once): no sort, whose XLA CPU form costs about 0.3 us per entry.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax import _sizing
from uldp_jax.estimation._support import SupportReports, _ceil
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import CompactBits


SCAN_UNROLL = 8  # rows placed per iteration of the scan (amortises the loop overhead per row)


def layout_sizes(kept_rows: int, width: int) -> tuple[int, int, int]:
    """``(chunk, num_blocks, block_rows)`` for ``kept_rows`` rows of ``width`` entries (``assemble``'s rule on a
    power-of-two chunk: chunk divides block_rows, block_rows <= sizing().block_rows; few rows: one chunk of their
    own size, ``_sizing.chunk_for``)."""
    full = min(_sizing.pow2_floor(max(1, _sizing.sizing().row_chunk_entries // 4 // max(width, 1))), 2**15)
    chunk = _sizing.chunk_for(full, kept_rows)
    num_blocks = _ceil(kept_rows, _sizing.sizing().block_rows)
    block_rows = _ceil(_ceil(kept_rows, num_blocks), chunk) * chunk
    while block_rows > _sizing.sizing().block_rows:
        num_blocks += 1
        block_rows = _ceil(_ceil(kept_rows, num_blocks), chunk) * chunk
    return chunk, num_blocks, block_rows


def num_segments(ones: int, items: int, block_rows: int, width: int, seg: int | None = None) -> int:
    """A static bound on one block's column segments, a multiple of ``sizing().column_chunk``: at most ``ones``
    entries (and ``block_rows * width``) over at most ``items`` items take ``ceil(entries / seg) + items`` segments."""
    seg = _sizing.sizing().column_segment if seg is None else seg
    step = _sizing.sizing().column_chunk
    entries = max(min(ones, block_rows * width), 1)
    return _ceil(_ceil(entries, seg) + min(items, entries), step) * step


def block_columns(sup: jax.Array, d: int, num_seg: int, seg: int | None = None) -> tuple[jax.Array, jax.Array]:
    """``_block_columns`` without the segment count."""
    return _block_columns(sup, d, num_seg, seg)[:2]


def _block_columns(sup: jax.Array, d: int, num_seg: int, seg: int | None = None):
    """``_support.column_segments`` of one block ``sup[B, L]`` (items padded with ``d``; each row's items
    distinct) into ``(uint16[num_seg, seg], int32[num_seg], int32[] segments needed)``, padded with ``B`` and
    ``d``. ``num_seg`` must bound the segments (``num_segments``); entries past it are dropped.

    The per-item counts come in row chunks (``_compact.aggregate``) and each row's entries are written into the
    segments inside the scan that places them, so no ``B x L`` int32 temporary (slots, row ids, indices) is held (experiments/benchmarks/README.md (k))."""
    seg = _sizing.sizing().column_segment if seg is None else seg
    rows, width = sup.shape
    counts = _compact.aggregate(CompactBits(sup, d))
    nseg = (counts + seg - 1) // seg
    seg_end = jnp.cumsum(nseg)
    base = jnp.append((seg_end - nseg) * seg, num_seg * seg)  # first slot of each item; padding: out of range

    def row(carry, r):
        nxt, col = carry
        i = sup[r].astype(jnp.int32)
        ok = i < d
        slot = jnp.where(ok, nxt[i], num_seg * seg)
        return (nxt.at[i].add(ok.astype(jnp.int32)), col.at[slot].set(r.astype(col.dtype), mode="drop")), None

    col = jnp.full(num_seg * seg, rows, jnp.uint16)
    (_, col), _ = jax.lax.scan(row, (base, col), jnp.arange(rows), unroll=SCAN_UNROLL)
    item = jnp.searchsorted(seg_end, jnp.arange(num_seg, dtype=jnp.int32), side="right").astype(jnp.int32)
    return col.reshape(num_seg, seg), item, seg_end[-1]


def compact_columns(support: jax.Array, weight: jax.Array, inverted: jax.Array, stats: jax.Array, d: int,
                    kept_rows: int, ones: int, items: int, clean: bool = False) -> Any:
    """Column-layout ``SupportReports`` from row-layout support lists ``support[n, L]`` with ``weight[n]`` (rows of
    weight 0 hold only padding), in JAX. ``kept_rows`` (static) bounds the rows of weight > 0, ``ones`` (static)
    their entries and ``items`` the distinct items; rows past ``kept_rows`` after the stable move are dropped.
    ``clean``: rows of weight 0 may hold entries (``_support.own_bit_rows``' invertible reports); the move leaves
    them out, and where no move is needed they are padded here. The caller counts ``kept_rows`` and ``ones`` on the
    same reports, so nothing is dropped but padding."""
    n, width = support.shape
    chunk, num_blocks, block_rows = layout_sizes(max(kept_rows, 1), width)
    n_pad = num_blocks * block_rows
    if n_pad > n:
        support = jnp.pad(support, ((0, n_pad - n), (0, 0)), constant_values=d)
        weight = jnp.pad(weight, (0, n_pad - n))
    if n > n_pad:  # rows of weight 0 hold only padding: where every row fits they stay (no reorder, no copy)
        # the first n_pad rows of weight > 0, in order, then padding rows (a stable argsort of the weights gave the
        # same rows after `clean`, but XLA CPU's sort is slow)
        order = jnp.nonzero(weight > 0, size=n_pad, fill_value=n)[0]
        support = jnp.take(support, order, axis=0, mode="fill", fill_value=d)
        weight = jnp.take(weight, order, mode="fill", fill_value=0)
    elif clean:  # (moved rows are all of weight > 0, or filled with padding)
        support = jnp.where(weight[:, None] > 0, support, jnp.asarray(d, support.dtype))
    num_seg = num_segments(ones, items, block_rows, width)
    blocks = support.reshape(num_blocks, block_rows, width)
    col_rows, col_item, _ = jax.lax.map(lambda b: _block_columns(b, d, num_seg), blocks)
    rep = SupportReports(support, weight, inverted, stats, col_rows, col_item, int(chunk), int(block_rows))
    return rep
