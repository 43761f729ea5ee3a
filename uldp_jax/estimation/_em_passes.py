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

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax import _sizing
from uldp_jax.estimation import _compensated, _em_core, _em_newton
from uldp_jax.estimation._support import SupportReports


INV_CAP = 1e30  # largest 1/D a report adds to the gradient (only reached where its items all have p = 0)
SELECT_ALL = 0.6  # fraction of the column segments selected (``cols``) above which the column pass sums them all

# A layout's generic pass: ``run(tables, terms, rows=None, keep_rows=False, cols=None) -> (col float[d], a, l)``.
# ``tables``: ``[p, v, ...]`` (float[d] each); per report ``ss[k] = sum of tables[k] over its ones``; ``terms(ss, w)
# -> (f [rows], a_rows [rows], l)``; ``col_x = sum of f_i over the reports with y_ix = 1``, ``a = sum a_rows``,
# ``l = sum of the l``. ``rows``: a per-report array in the layout's row order (padding rows included), handed to
# ``terms(ss, w, r)`` chunk by chunk; ``keep_rows``: also return ``ss[0]`` of every row in that order (4th output),
# so that a later pass at the same point takes it as ``rows`` instead of gathering the table again. ``cols``: an
# optional ``bool[d]`` of the items whose ``col_x`` the caller reads (Newton's free items); a layout may skip the
# others (the column layout does: its second pass then costs the entries of those items only) and return 0 there,
# or compute them anyway.
Pass = Callable[..., tuple]


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


def _pass_inputs(tabs, pass_dtype, rows=None):
    """``(dtype of p, pass dtype, the tables padded with a 0 at index d in the pass dtype)`` for the gathers
    (no tables: a pass on given ``rows``, in their dtype)."""
    dtype = tabs[0].dtype if tabs else rows.dtype
    dt = dtype if pass_dtype is None else jnp.dtype(pass_dtype)
    return dtype, dt, [jnp.concatenate([x, jnp.zeros((1,), x.dtype)]).astype(dt) for x in tabs]


def _row_sums(table, idx):
    """``sum(table[idx], axis=-1)`` chunk by chunk: ``idx[num_chunks, chunk, L]`` -> ``[num_chunks * chunk]``."""
    _, out = jax.lax.scan(lambda c, i: (c, jnp.sum(table[i], axis=-1)), 0, idx)
    return out.reshape(-1)


def _terms_of(terms, ss, w, r):
    return terms(ss, w) if r is None else terms(ss, w, r)


def _result(b, a, l_prod, rows, keep_rows):
    return (b, a, l_prod, rows.reshape(-1)) if keep_rows else (b, a, l_prod)


def _log(t, log_t):
    return jnp.log(t) if log_t is None else log_t


def support_update(t: jax.Array, rep: SupportReports, pass_dtype: Any = None,
                   log_t: Any = None) -> _em_core.Update:
    """The EM map on ``SupportReports`` (two chunked passes over the reported ones; see ``support_grad``)."""
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    return _em_newton.as_update(support_grad(t, rep, pass_dtype, log_t), rep.inverted, n)


def grad_of(t: jax.Array, log_t: Any, run: Pass) -> _em_newton.Grad:
    """The gradient pass (``_em_newton``: ``g = a + (1 - t) b``, ``b_x = sum_{i: y_ix = 1} w_i / D_i``, and
    ``sum w log D``) from a layout's generic pass ``run``."""

    def grad(p):
        total = jnp.sum(p)
        b, a, l_prod = run((p,), lambda ss, w: _terms(t, log_t, total, ss[0], w))
        return a + (1.0 - t) * b, l_prod

    return grad


def support_grad(t: jax.Array, rep: SupportReports, pass_dtype: Any = None,
                 log_t: Any = None) -> _em_newton.Grad:
    """The gradient pass on ``SupportReports`` (``_em_newton``: ``g = a + (1 - t) b``; two chunked passes).

    ``pass_dtype`` (e.g. ``jnp.float32`` under x64) runs the two passes (the gathers and their sums) in that
    precision; per-report terms and accumulations stay in ``p``'s dtype (faster on CPU; ``p'`` is
    accurate to about 1e-6 relative, so use ``tol >= 1e-8``). ``log_t``: ``-eps`` (default ``log(t)``; give it
    where ``t = e^{-eps}`` may underflow).
    """
    return grad_of(t, _log(t, log_t), support_pass(rep, pass_dtype))


def support_pass(rep: SupportReports, pass_dtype: Any = None) -> Pass:
    """The generic pass (``Pass``) on ``SupportReports``: row gather-sums of each table, then per-report terms
    summed by column (a scatter-add on the row layout; gathers and sorted segment sums on the column layout)."""
    if rep.col_rows is not None:
        return _columns_pass(rep, pass_dtype)
    d = rep.inverted.shape[0]
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    wts = rep.weight.reshape(num_chunks, rep.chunk)

    def run(tabs, terms, rows=None, keep_rows=False, cols=None):
        del cols  # the scatter-add writes every item's sum
        dtype, dt, pads = _pass_inputs(tabs, pass_dtype, rows)
        rws = None if rows is None else rows.reshape(num_chunks, rep.chunk)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            idx, w, r = a
            ss = [jnp.sum(tp[idx], axis=1).astype(dtype) for tp in pads]
            f, a_rows, ll = _terms_of(terms, ss, w.astype(dtype), r)
            b = _compensated.scatter_add(d + 1, idx, f.astype(dt), dtype)
            return (_compensated.two_sum(b_acc, b), _compensated.two_sum(a_acc, _compensated.exact_sum(a_rows)),
                    l_acc + ll), ((ss[0] if r is None else r) if keep_rows else None)

        init = (_compensated.zeros(d + 1, dtype), _compensated.zeros((), dtype), jnp.zeros((), dtype))
        (b, a, l_prod), kept = jax.lax.scan(chunk_pass, init, (sup, wts, rws))
        return _result(_compensated.total(b)[:d], _compensated.total(a), l_prod, kept, keep_rows)

    return run


def _columns_pass(rep: SupportReports, pass_dtype: Any) -> Pass:
    """The generic pass on the column layout: row gather-sums of every block, then column gather-sums.

    Both gathers are single flat scans over small chunks of the whole layout (the row chunks of all blocks, then
    the column chunks of all blocks, whose local row indices are offset into one table of every block's ``f``).
    Scanning blocks in an outer loop made XLA copy each block's slice of the reports (a whole block per
    iteration) and took longer (experiments/benchmarks/README.md (k)). Sums across blocks keep their
    order: per block, then compensated in block order."""
    d = rep.inverted.shape[0]
    num_blocks, num_seg, seg = rep.col_rows.shape
    block_rows = rep.block_rows
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    col_chunk = min(num_seg, max(1, _sizing.sizing().em_col_entries // seg))  # a map split: bits never change
    while num_seg % col_chunk:
        col_chunk -= 1
    per_block = num_seg // col_chunk
    chunks = rep.col_rows.reshape(num_blocks * per_block, col_chunk, seg)
    offsets = jnp.repeat(jnp.arange(num_blocks, dtype=jnp.int32) * (block_rows + 1), per_block)
    real_segments = jnp.sum(rep.col_item < d, dtype=jnp.int32)  # segments of an item (the others pad the blocks)

    def all_columns(table):
        """Every segment's sum, ``[num_blocks, num_seg]`` (one flat scan over the column chunks)."""

        def col_sums(c, a):
            idx, off = a
            return c, jnp.sum(table[idx.astype(jnp.int32) + off], axis=-1)

        _, seg_sums = jax.lax.scan(col_sums, 0, (chunks, offsets))
        return seg_sums.reshape(num_blocks, num_seg)

    def some_columns(table, cols):
        """The sums of the segments of the items in ``cols`` (0 for the others), ``[num_blocks, num_seg]``: the
        selected segments are listed in order and gathered ``col_chunk`` at a time, as many chunks as they fill
        (a loop of data-dependent length), so the pass costs the selected entries only. Each segment's sum is the
        same reduction as ``all_columns``'s, so the selected items' sums are unchanged. Where more than
        ``SELECT_ALL`` of the segments are selected, every segment is summed (``all_columns``, masked): listing
        them costs more than the skipped ones save (experiments/benchmarks/README.md (k))."""
        picked = jnp.append(cols, False)[rep.col_item.reshape(-1)]
        count = jnp.sum(picked, dtype=jnp.int32)
        return jax.lax.cond(count > SELECT_ALL * real_segments,
                            lambda: jnp.where(picked.reshape(num_blocks, num_seg), all_columns(table), 0.0),
                            lambda: _listed_columns(table, picked, count))

    def _listed_columns(table, picked, count):
        """``some_columns`` on the listed segments (``picked``: ``bool[num_blocks * num_seg]``, ``count`` of them)."""
        flat_rows = rep.col_rows.reshape(num_blocks * num_seg, seg)
        where = jnp.nonzero(picked, size=num_blocks * num_seg, fill_value=0)[0].astype(jnp.int32)
        where = jnp.pad(where, (0, col_chunk))  # a last partial chunk reads in bounds
        lane = jnp.arange(col_chunk, dtype=jnp.int32)

        def body(k, out):
            sel = jax.lax.dynamic_slice(where, (k * col_chunk,), (col_chunk,))
            off = (sel // num_seg) * (block_rows + 1)
            sums = jnp.sum(table[flat_rows[sel].astype(jnp.int32) + off[:, None]], axis=-1)
            sums = jnp.where(k * col_chunk + lane < count, sums, 0.0)
            return out.at[sel].add(sums)  # distinct segments (the masked tail adds 0)

        out = jax.lax.fori_loop(0, (count + col_chunk - 1) // col_chunk, body,
                                jnp.zeros(num_blocks * num_seg, table.dtype))
        return out.reshape(num_blocks, num_seg)

    def run(tabs, terms, rows=None, keep_rows=False, cols=None):
        dtype, dt, pads = _pass_inputs(tabs, pass_dtype, rows)
        ss = [_row_sums(tp, sup).astype(dtype).reshape(num_blocks, block_rows) for tp in pads]
        w = rep.weight.reshape(num_blocks, block_rows).astype(dtype)
        if rows is None:
            f, a_rows, ll = jax.vmap(lambda s, w: terms(s, w))(ss, w)
        else:
            f, a_rows, ll = jax.vmap(lambda s, w, r: terms(s, w, r))(ss, w, rows.reshape(num_blocks, block_rows))
        table = jnp.pad(f, ((0, 0), (0, 1))).astype(dt).reshape(-1)  # each block's rows, then its zero slot
        seg_sums = (all_columns(table) if cols is None else some_columns(table, cols)).astype(dtype)
        b = jax.vmap(lambda x, i: jax.ops.segment_sum(x, i, d + 1, indices_are_sorted=True))(seg_sums, rep.col_item)
        a = jax.vmap(_compensated.exact_sum)(a_rows)

        def add(carry, blk):
            b_acc, a_acc, l_acc = carry
            b_k, a_k, l_k = blk
            return (_compensated.two_sum(b_acc, b_k), _compensated.two_sum(a_acc, a_k), l_acc + l_k), None

        init = (_compensated.zeros(d + 1, dtype), _compensated.zeros((), dtype), jnp.zeros((), dtype))
        (b, a, l_prod), _ = jax.lax.scan(add, init, (b, a, ll))
        return _result(_compensated.total(b)[:d], _compensated.total(a), l_prod, ss[0] if rows is None else rows,
                       keep_rows)

    return run


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
    return grad_of(t, _log(t, log_t), dense_pass(bits, weight, chunk))


def dense_pass(bits: jax.Array, weight: jax.Array, chunk: int) -> Pass:
    """The generic pass (``Pass``) on dense product-part reports: chunked mat-vecs."""
    n_rows, d = bits.shape
    num_chunks = -(-n_rows // chunk)
    pad = num_chunks * chunk - n_rows
    bits = jnp.pad(bits, ((0, pad), (0, 0))).reshape(num_chunks, chunk, d)
    weight = jnp.pad(weight, (0, pad)).reshape(num_chunks, chunk)

    def run(tabs, terms, rows=None, keep_rows=False, cols=None):
        del cols  # one mat-vec gives every item's sum
        dtype = tabs[0].dtype
        rws = None if rows is None else rows.reshape(num_chunks, chunk)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            yb, w, r = a
            yf = yb.astype(dtype)
            ss = [yf @ x for x in tabs]
            f, a_rows, ll = _terms_of(terms, ss, w, r)
            hi, mid, lo = _compensated.split(f)
            return (_compensated.two_sum(b_acc, hi @ yf + (mid @ yf + lo @ yf)),
                    _compensated.two_sum(a_acc, _compensated.exact_sum(a_rows)), l_acc + ll), \
                (ss[0] if keep_rows else None)

        init = (_compensated.zeros(d, dtype), _compensated.zeros((), dtype), jnp.zeros((), dtype))
        (b, a, l_prod), kept = jax.lax.scan(chunk_pass, init, (bits, weight.astype(dtype), rws))
        return _result(_compensated.total(b), _compensated.total(a), l_prod, kept, keep_rows)

    return run


def _gain_finish(p_a, dp, inverted, n, g_prod):
    """Adds the invertible reports' term and the normalisation (see ``_em.log_ratio_gain``) to a product gain."""
    inv = inverted.astype(p_a.dtype)
    ok = (inv > 0) & (p_a > 0)
    g_inv = jnp.sum(jnp.where(ok, inv * jnp.log1p(dp / jnp.where(ok, p_a, 1.0)), 0.0))
    return (g_prod + g_inv) / n - jnp.log1p(jnp.sum(dp) / jnp.sum(p_a))


def _log_ratio(t, total, d_total, s, ds, w):
    """``sum w log(D_b / D_a)`` from ``D_a = t (total - s) + s`` and its change (precise: from the change).

    A report whose ones all lie on items at 0 (``s = 0``) has ``D_a = t total``, so
    ``D_b / D_a - 1 = (d_total - ds) / total + ds / (t total)``: the second term (the step revives its items) is
    taken with ``t total`` floored at the smallest normal float (``t`` may underflow), so it stays finite. It used
    to be dropped: such reports, which are what pushes an item at 0 back up, added no gain, so every Newton step
    that revived an item looked like a loss (uRAP at eps = 10 on the Foursquare proxy from some starts: 40 failed
    steps, then SQUAREM stopped 2.5e-4 nats per report short of the MLE)."""
    den = t * (total - s) + s
    dden = t * (d_total - ds) + ds
    empty = s <= 0
    ok = (w > 0) & ((den > 0) | empty)
    revive = jnp.where(ds > 0, ds / jnp.maximum(t * total, jnp.finfo(den.dtype).tiny), 0.0)
    x = jnp.where(empty, (d_total - ds) / total + revive, dden / jnp.where(den > 0, den, 1.0))
    x = jnp.where(ok, x, 0.0)
    return _compensated.exact_sum(jnp.where(ok, w * jnp.log1p(jnp.maximum(x, -1.0)), 0.0))


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


def support_rows(t: jax.Array, rep: SupportReports, pass_dtype: Any = None,
                 log_t: Any = None) -> _em_newton.RowPasses:
    """``RowPasses`` on ``SupportReports``: the gradient at given rows is a column pass only; the gain gathers
    only the step (in ``p``'s dtype) and returns the rows at ``p_b``."""
    log_t = _log(t, log_t)
    run = support_pass(rep, pass_dtype)
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    wts = rep.weight.reshape(num_chunks, rep.chunk)
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)

    def grad(p, rows=None):
        total = jnp.sum(p)
        if rows is None:
            b, a, l_prod, rows = run((p,), lambda ss, w: _terms(t, log_t, total, ss[0], w), keep_rows=True)
        else:
            b, a, l_prod = run((), lambda ss, w, r: _terms(t, log_t, total, r.astype(p.dtype), w), rows=rows)
        return a + (1.0 - t) * b, l_prod, rows

    def gain(p_a, p_b, rows_a):
        dp = p_b - p_a
        dp_pad = jnp.concatenate([dp, jnp.zeros((1,), p_a.dtype)])
        total, d_total = jnp.sum(p_a), jnp.sum(dp)

        def chunk_pass(acc, a):
            idx, w, s = a
            ds = jnp.sum(dp_pad[idx], axis=1)
            s = s.astype(p_a.dtype)
            return acc + _log_ratio(t, total, d_total, s, ds, w.astype(p_a.dtype)), s + ds

        g, rows_b = jax.lax.scan(chunk_pass, jnp.zeros((), p_a.dtype),
                                 (sup, wts, rows_a.reshape(num_chunks, rep.chunk)))
        return _gain_finish(p_a, dp, rep.inverted, n, g), rows_b.reshape(-1).astype(rows_a.dtype)

    return _em_newton.RowPasses(grad, gain)


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
