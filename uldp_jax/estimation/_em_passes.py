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
from uldp_jax.estimation import _em_core, _em_newton
from uldp_jax.estimation._support import SupportReports


INV_CAP = 1e30  # largest 1/D a report adds to the gradient (only reached where its items all have p = 0)


def _terms(t, log_t, total, s, w):
    """``(w/D, w t/D, sum of w log D)`` in ``s``'s dtype.

    A report with no reported one (``s = 0``) has ``D = t * total``: its ``t/D = 1/total`` and
    ``log D = log t + log total`` are taken in that form, so that ``t`` underflowing (float32 beyond eps ~ 87)
    changes nothing (it used to drop those reports: estimates summing to 0.5 or inf at eps 85-100).
    """
    den = t * (total - s) + s
    pos = w > 0
    empty = s <= 0
    safe = jnp.where(den > 0, den, 1.0)
    # also where s = 0 < D (the gradient of items at 0), capped so that sums stay finite as t underflows
    inv = jnp.where(pos & (den > 0), jnp.minimum(w / safe, INV_CAP), 0.0)
    inv_t = jnp.where(pos, jnp.where(empty, w / total, w * (t / safe)), 0.0)
    log_den = jnp.where(empty, log_t + jnp.log(total), jnp.log(safe))
    return inv, inv_t, jnp.sum(jnp.where(pos, w * log_den, 0.0))


def _pass_inputs(p, pass_dtype):
    """``(pass dtype, sum(p), p padded with a 0 at index d in the pass dtype)`` for the gathers."""
    dt = p.dtype if pass_dtype is None else jnp.dtype(pass_dtype)
    return dt, jnp.sum(p), jnp.concatenate([p, jnp.zeros((1,), p.dtype)]).astype(dt)


def _row_sums(table, idx):
    """``sum(table[idx], axis=-1)`` chunk by chunk: ``idx[num_chunks, chunk, L]`` -> ``[num_chunks * chunk]``."""
    _, out = jax.lax.scan(lambda c, i: (c, jnp.sum(table[i], axis=-1)), 0, idx)
    return out.reshape(-1)


def _log(t, log_t):
    return jnp.log(t) if log_t is None else log_t


def support_update(t: jax.Array, rep: SupportReports, pass_dtype: Any = None,
                   log_t: Any = None) -> _em_core.Update:
    """The EM map on ``SupportReports`` (two chunked passes over the reported ones; see ``support_grad``)."""
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    return _em_newton.as_update(support_grad(t, rep, pass_dtype, log_t), rep.inverted, n)


def support_grad(t: jax.Array, rep: SupportReports, pass_dtype: Any = None,
                 log_t: Any = None) -> _em_newton.Grad:
    """The gradient pass on ``SupportReports`` (``_em_newton``: ``g = a + (1 - t) b``; two chunked passes).

    ``pass_dtype`` (e.g. ``jnp.float32`` under x64) runs the two passes (the gathers and their sums) in that
    precision; per-report terms and accumulations stay in ``p``'s dtype (about 1.5x faster on CPU; ``p'`` is
    accurate to about 1e-6 relative, so use ``tol >= 1e-8``). ``log_t``: ``-eps`` (default ``log(t)``; give it
    where ``t = e^{-eps}`` may underflow).
    """
    log_t = _log(t, log_t)
    if rep.col_rows is not None:
        return _columns_grad(t, rep, pass_dtype, log_t)
    d = rep.inverted.shape[0]
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    wts = rep.weight.reshape(num_chunks, rep.chunk)

    def update(p):
        dt, total, p_pad = _pass_inputs(p, pass_dtype)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            idx, w = a
            s = jnp.sum(p_pad[idx], axis=1).astype(p.dtype)
            inv, inv_t, ll = _terms(t, log_t, total, s, w.astype(p.dtype))
            inv_dt = inv.astype(dt)
            b = jnp.zeros(d + 1, dt).at[idx].add(jnp.broadcast_to(inv_dt[:, None], idx.shape))
            return (b_acc + b.astype(p.dtype), a_acc + jnp.sum(inv_t), l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(chunk_pass, (jnp.zeros(d + 1, p.dtype), zero, zero), (sup, wts))
        return a + (1.0 - t) * b[:d], l_prod

    return update


def _columns_grad(t: jax.Array, rep: SupportReports, pass_dtype: Any, log_t: Any) -> _em_newton.Grad:
    """The gradient pass on the column layout: per block of rows, a row gather-sum then a column gather-sum."""
    d = rep.inverted.shape[0]
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
            inv, inv_t, ll = _terms(t, log_t, total, s, w.astype(p.dtype))
            inv_pad = jnp.concatenate([inv, jnp.zeros((1,), p.dtype)]).astype(dt)
            seg_sums = _row_sums(inv_pad, col).astype(p.dtype)
            b = jax.ops.segment_sum(seg_sums, item, d + 1, indices_are_sorted=True)
            return (b_acc + b, a_acc + jnp.sum(inv_t), l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(block_pass, (jnp.zeros(d + 1, p.dtype), zero, zero),
                                         (sup, wts, cols, rep.col_item))
        return a + (1.0 - t) * b[:d], l_prod

    return update


def dense_update(t: jax.Array, bits: jax.Array, weight: jax.Array, inverted: jax.Array,
                 chunk: int, log_t: Any = None) -> _em_core.Update:
    """The EM map on dense product-part reports ``bits: bool[n, d]`` (chunked mat-vecs; ``log_t`` as in
    ``support_update``)."""
    n = jnp.sum(weight) + jnp.sum(inverted)
    return _em_newton.as_update(dense_grad(t, bits, weight, inverted, chunk, log_t), inverted, n)


def dense_grad(t: jax.Array, bits: jax.Array, weight: jax.Array, inverted: jax.Array,
               chunk: int, log_t: Any = None) -> _em_newton.Grad:
    """The gradient pass on dense product-part reports (``_em_newton``; chunked mat-vecs)."""
    del inverted
    log_t = _log(t, log_t)
    n_rows, d = bits.shape
    num_chunks = -(-n_rows // chunk)
    pad = num_chunks * chunk - n_rows
    bits = jnp.pad(bits, ((0, pad), (0, 0))).reshape(num_chunks, chunk, d)
    weight = jnp.pad(weight, (0, pad)).reshape(num_chunks, chunk)

    def update(p):
        total = jnp.sum(p)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            yb, w = a
            yf = yb.astype(p.dtype)
            inv, inv_t, ll = _terms(t, log_t, total, yf @ p, w)
            return (b_acc + inv @ yf, a_acc + jnp.sum(inv_t), l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(chunk_pass, (jnp.zeros(d, p.dtype), zero, zero),
                                         (bits, weight.astype(p.dtype)))
        return a + (1.0 - t) * b, l_prod

    return update


def _gain_finish(p_a, dp, inverted, n, g_prod):
    """Adds the invertible reports' term and the normalisation (see ``_em.log_ratio_gain``) to a product gain."""
    inv = inverted.astype(p_a.dtype)
    ok = (inv > 0) & (p_a > 0)
    g_inv = jnp.sum(jnp.where(ok, inv * jnp.log1p(dp / jnp.where(ok, p_a, 1.0)), 0.0))
    return (g_prod + g_inv) / n - jnp.log1p(jnp.sum(dp) / jnp.sum(p_a))


def _log_ratio(t, total, d_total, s, ds, w):
    """``sum w log(D_b / D_a)`` from ``D_a = t (total - s) + s`` and its change (precise: from the change)."""
    den = t * (total - s) + s
    dden = t * (d_total - ds) + ds
    empty = s <= 0  # D = t * total (t may underflow): the ratio is that of the totals
    ok = (w > 0) & ((den > 0) | empty)
    x = jnp.where(empty, d_total / total, dden / jnp.where(den > 0, den, 1.0))
    x = jnp.where(ok, x, 0.0)
    return jnp.sum(jnp.where(ok, w * jnp.log1p(jnp.maximum(x, -1.0)), 0.0))


def support_gain(t: jax.Array, rep: SupportReports) -> _em_core.Gain:
    """The precise log-likelihood change (``_em_core``) on ``SupportReports``: one row gather pass."""
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    wts = rep.weight.reshape(num_chunks, rep.chunk)

    def gain(p_a, p_b):
        dp = p_b - p_a
        pa_pad = jnp.concatenate([p_a, jnp.zeros((1,), p_a.dtype)])
        dp_pad = jnp.concatenate([dp, jnp.zeros((1,), p_a.dtype)])
        total, d_total = jnp.sum(p_a), jnp.sum(dp)

        def chunk_pass(acc, a):
            idx, w = a
            s, ds = jnp.sum(pa_pad[idx], axis=1), jnp.sum(dp_pad[idx], axis=1)
            return acc + _log_ratio(t, total, d_total, s, ds, w.astype(p_a.dtype)), None

        g, _ = jax.lax.scan(chunk_pass, jnp.zeros((), p_a.dtype), (sup, wts))
        return _gain_finish(p_a, dp, rep.inverted, n, g)

    return gain


def dense_gain(t: jax.Array, bits: jax.Array, weight: jax.Array, inverted: jax.Array,
               chunk: int) -> _em_core.Gain:
    """The precise log-likelihood change on dense product-part reports (one chunked mat-vec pass)."""
    n_rows, d = bits.shape
    num_chunks = -(-n_rows // chunk)
    pad = num_chunks * chunk - n_rows
    bits = jnp.pad(bits, ((0, pad), (0, 0))).reshape(num_chunks, chunk, d)
    weight = jnp.pad(weight, (0, pad)).reshape(num_chunks, chunk)
    n = jnp.sum(weight) + jnp.sum(inverted)

    def gain(p_a, p_b):
        dp = p_b - p_a
        total, d_total = jnp.sum(p_a), jnp.sum(dp)

        def chunk_pass(acc, a):
            yb, w = a
            yf = yb.astype(p_a.dtype)
            return acc + _log_ratio(t, total, d_total, yf @ p_a, yf @ dp, w.astype(p_a.dtype)), None

        g, _ = jax.lax.scan(chunk_pass, jnp.zeros((), p_a.dtype), (bits, weight))
        return _gain_finish(p_a, dp, inverted, n, g)

    return gain



GRAM_BLOCK = 2048  # rows per block of the Hessian's Gram (bounds its temporaries)


def blocked_gram(row_bits: Any, weight: jax.Array, t: jax.Array, p: jax.Array, items: jax.Array,
                 d: int) -> jax.Array:
    """``bits_gram`` of the Hessian's subsample (``_em_newton.subsample`` of the rows' ``weight``), summed over
    blocks of ``GRAM_BLOCK`` rows; ``row_bits(rows) -> bits [len(rows), s]`` reads rows of the reports."""
    idx, w = _em_newton.subsample(weight.astype(p.dtype))
    m = idx.shape[0]
    blk = min(m, GRAM_BLOCK)
    k = -(-m // blk)
    pad = k * blk - m
    idx = jnp.concatenate([idx, jnp.zeros(pad, idx.dtype)]).reshape(k, blk)
    w = jnp.concatenate([w, jnp.zeros(pad, w.dtype)]).reshape(k, blk)

    def one(acc, a):
        rows, wj = a
        return acc + bits_gram(t, row_bits(rows).astype(p.dtype), wj, p, items, d), None

    out, _ = jax.lax.scan(one, jnp.zeros((d, d), p.dtype), (idx, w))
    return out


def support_gram(t: jax.Array, rep: SupportReports) -> _em_newton.Gram:
    """The Hessian's Gram part on a fixed subsample of the support rows (``_em_newton``)."""
    d = rep.inverted.shape[0]

    def row_bits(rows):
        sup = rep.support[rows].astype(jnp.int32)
        return jnp.any(sup[:, :, None] == jnp.arange(d, dtype=jnp.int32), axis=1)

    return lambda p: blocked_gram(row_bits, rep.weight, t, p, jnp.arange(d), d)


def dense_gram(t: jax.Array, bits: jax.Array, weight: jax.Array) -> _em_newton.Gram:
    """The Hessian's Gram part on a fixed subsample of dense product-part reports (``_em_newton``)."""
    d = bits.shape[1]
    return lambda p: blocked_gram(lambda rows: bits[rows], weight, t, p, jnp.arange(d), d)


def bits_gram(t: jax.Array, bits: jax.Array, w: jax.Array, p: jax.Array, items: jax.Array, d: int) -> jax.Array:
    r""":math:`\sum_i c_i L_i L_i^\top` for rows :math:`L_i = t 1 + (1 - t) y_i` (``y_i``: ``bits[i]`` on ``items``),
    :math:`c_i = w_i / D_i^2`: :math:`c_0 11^\top + 1u^\top + u1^\top + (1-t)^2 Y^\top C Y` (a report with no
    one has :math:`D = t \sum p`: its term is taken as :math:`w / (\sum p)^2 \, 11^\top`, so ``t`` may underflow)."""
    total = jnp.sum(p)
    s = bits @ p[items]
    empty = jnp.sum(bits, axis=1) <= 0
    den = t * (total - s) + s
    c = jnp.where(~empty & (w > 0) & (den > 0), jnp.minimum(w / jnp.where(den > 0, den, 1.0) ** 2, INV_CAP), 0.0)
    c0 = t * t * jnp.sum(c) + jnp.sum(jnp.where(empty, w, 0.0)) / (total * total)
    u = jnp.zeros(d, p.dtype).at[items].set(t * (1.0 - t) * (bits.T @ c))
    ycy = (1.0 - t) ** 2 * ((bits * c[:, None]).T @ bits)
    g = jnp.zeros((d, d), p.dtype).at[items[:, None], items[None, :]].set(ycy)
    return g + c0 + u[:, None] + u[None, :]
