r"""One EM step on bit-vector reports: the two passes over the reported ones (see ``_em_reports``).

With :math:`t = e^{-\varepsilon}`, :math:`s_i = \sum_{x \in y_i} p_x` and :math:`D_i = t(1 - s_i) + s_i`:

.. math:: p'_x = \frac{p_x}{n}\Big(t \sum_i \frac{1}{D_i} + (1-t)\, b_x\Big) + \frac{N_x}{n},
          \qquad b_x = \sum_{i: y_{ix}=1} \frac{1}{D_i},

(:math:`N_x`: invertible uRAP reports of item ``x``). Pass 1 gathers ``p`` by row (``s``), pass 2 sums ``1/D``
by column (``b``): a scatter-add on the row layout, a gather plus sorted segment sums on the column layout.
The per-report terms (``D``, ``1/D``, ``log D``) are always computed in ``p``'s dtype, so the log-likelihood
that drives the stopping rule keeps ``p``'s resolution even when the passes run in ``pass_dtype``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax import _sizing
from uldp_jax.estimation import _em_core
from uldp_jax.estimation._support import SupportReports


def _terms(t, total, s, w):
    """``(1/D masked by w, sum of w log D)`` in ``s``'s dtype."""
    den = t * (total - s) + s
    pos = w > 0
    inv = jnp.where(pos, w / jnp.where(den > 0, den, 1.0), 0.0)
    return inv, jnp.sum(jnp.where(pos, w * jnp.log(jnp.where(pos, den, 1.0)), 0.0))


def _finish(p, t, a, b, inverted, n, l_prod):
    inv_counts = inverted.astype(p.dtype)
    l_inv = jnp.sum(jnp.where(inv_counts > 0, inv_counts * jnp.log(p), 0.0))
    p_new = (p * (t * a + (1.0 - t) * b) + inv_counts) / n
    return p_new, (l_prod + l_inv) / n


def _pass_inputs(p, pass_dtype):
    """``(pass dtype, sum(p), p padded with a 0 at index d in the pass dtype)`` for the gathers."""
    dt = p.dtype if pass_dtype is None else jnp.dtype(pass_dtype)
    return dt, jnp.sum(p), jnp.concatenate([p, jnp.zeros((1,), p.dtype)]).astype(dt)


def _row_sums(table, idx):
    """``sum(table[idx], axis=-1)`` chunk by chunk: ``idx[num_chunks, chunk, L]`` -> ``[num_chunks * chunk]``."""
    _, out = jax.lax.scan(lambda c, i: (c, jnp.sum(table[i], axis=-1)), 0, idx)
    return out.reshape(-1)


def support_update(t: jax.Array, rep: SupportReports, pass_dtype: Any = None) -> _em_core.Update:
    """The EM map on ``SupportReports`` (two chunked passes over the reported ones).

    ``pass_dtype`` (e.g. ``jnp.float32`` under x64) runs the two passes (the gathers and their sums) in that
    precision; per-report terms and accumulations stay in ``p``'s dtype (about 1.5x faster on CPU; ``p'`` is
    accurate to about 1e-6 relative, so use ``tol >= 1e-8``).
    """
    if rep.col_rows is not None:
        return _columns_update(t, rep, pass_dtype)
    d = rep.inverted.shape[0]
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    wts = rep.weight.reshape(num_chunks, rep.chunk)

    def update(p):
        dt, total, p_pad = _pass_inputs(p, pass_dtype)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            idx, w = a
            s = jnp.sum(p_pad[idx], axis=1).astype(p.dtype)
            inv, ll = _terms(t, total, s, w.astype(p.dtype))
            inv_dt = inv.astype(dt)
            b = jnp.zeros(d + 1, dt).at[idx].add(jnp.broadcast_to(inv_dt[:, None], idx.shape))
            return (b_acc + b.astype(p.dtype), a_acc + jnp.sum(inv), l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(chunk_pass, (jnp.zeros(d + 1, p.dtype), zero, zero), (sup, wts))
        return _finish(p, t, a, b[:d], rep.inverted, n, l_prod)

    return update


def _columns_update(t: jax.Array, rep: SupportReports, pass_dtype: Any) -> _em_core.Update:
    """The EM map on the column layout: per block of rows, a row gather-sum then a column gather-sum."""
    d = rep.inverted.shape[0]
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    num_blocks, num_seg, seg = rep.col_rows.shape
    rows = rep.block_rows
    sup = rep.support.reshape(num_blocks, rows // rep.chunk, rep.chunk, -1)
    wts = rep.weight.reshape(num_blocks, rows)
    col_chunk = min(num_seg, max(1, _sizing.sizing().em_col_entries // seg))  # a map split: bits never change
    while num_seg % col_chunk:
        col_chunk -= 1
    cols = rep.col_rows.reshape(num_blocks, num_seg // col_chunk, col_chunk, seg)

    def update(p):
        dt, total, p_pad = _pass_inputs(p, pass_dtype)

        def block_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            idx, w, col, item = a
            s = _row_sums(p_pad, idx).astype(p.dtype)
            inv, ll = _terms(t, total, s, w.astype(p.dtype))
            inv_pad = jnp.concatenate([inv, jnp.zeros((1,), p.dtype)]).astype(dt)
            seg_sums = _row_sums(inv_pad, col).astype(p.dtype)
            b = jax.ops.segment_sum(seg_sums, item, d + 1, indices_are_sorted=True)
            return (b_acc + b, a_acc + jnp.sum(inv), l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(block_pass, (jnp.zeros(d + 1, p.dtype), zero, zero),
                                         (sup, wts, cols, rep.col_item))
        return _finish(p, t, a, b[:d], rep.inverted, n, l_prod)

    return update


def dense_update(t: jax.Array, bits: jax.Array, weight: jax.Array, inverted: jax.Array,
                 chunk: int) -> _em_core.Update:
    """The EM map on dense product-part reports ``bits: bool[n, d]`` (chunked mat-vecs)."""
    n_rows, d = bits.shape
    num_chunks = -(-n_rows // chunk)
    pad = num_chunks * chunk - n_rows
    bits = jnp.pad(bits, ((0, pad), (0, 0))).reshape(num_chunks, chunk, d)
    weight = jnp.pad(weight, (0, pad)).reshape(num_chunks, chunk)
    n = jnp.sum(weight) + jnp.sum(inverted)

    def update(p):
        total = jnp.sum(p)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            yb, w = a
            yf = yb.astype(p.dtype)
            inv, ll = _terms(t, total, yf @ p, w)
            return (b_acc + inv @ yf, a_acc + jnp.sum(inv), l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(chunk_pass, (jnp.zeros(d, p.dtype), zero, zero),
                                         (bits, weight.astype(p.dtype)))
        return _finish(p, t, a, b, inverted, n, l_prod)

    return update
