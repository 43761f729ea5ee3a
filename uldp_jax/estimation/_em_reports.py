r"""EM on the exact product likelihood of bit-vector reports (RAPPOR/UE, uRAP).

Unary encodings: a report ``y`` has :math:`P(y|x) = C(y)\,\kappa\,w^{y_x}` with
:math:`w = \text{keep}(1-q)/(q(1-\text{keep})) = e^\varepsilon` for every keep-probability, so with
:math:`t = e^{-\varepsilon}` and :math:`s_i = \sum_{x \in \mathrm{supp}(y_i)} p_x`,

.. math:: P(y_i|p) \propto D_i = t\,(1 - s_i) + s_i, \qquad
          p'_x = \frac{p_x}{n}\Big(t \sum_i \frac{1}{D_i} + (1-t) \sum_{i: y_{ix}=1} \frac{1}{D_i}\Big).

One EM step is two passes over the reported ones (O(number of ones); ``_em_passes``): a gather-sum for ``s``
and a column sum for the second sum (a scatter-add on the row layout of ``SupportReports``, gathers and sorted
segment sums on its column layout). Bit-packed reports (``PackedReports``, one bit per report bit: the form of
dense reports and of dense-ish compact ones) take one pass of byte-table gathers and scatter-adds
(``_em_packed``); ``chunk=`` keeps the older chunked mat-vecs on dense ``bool[n, d]`` reports.

uRAP: the sensitive bits follow the same form (the non-sensitive items have weight :math:`w^0` in :math:`D_i`,
since :math:`(1-\theta)/(1-d_1) = d_2`); a report with non-sensitive bit ``j`` set comes only from ``x = j``
(likelihood :math:`\propto p_j`), so those reports enter as invertible counts: :math:`p'_j \mathrel{+}= N_j/n`.
Reports with two or more non-sensitive bits have probability 0 and are rejected.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _memory
from uldp_jax import _sizing
from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import CompactBits, product_log_odds
from uldp_jax.estimation import _em_core, _em_newton, _em_reduced, _packed, _support, _threshold
from uldp_jax.estimation._em_hessian import hessian_of
from uldp_jax.estimation._em_packed import packed_gain, packed_grad, packed_pass, packed_update
from uldp_jax.estimation._em_passes import (dense_gain, dense_grad, dense_pass, dense_update, support_gain,
                                            support_grad, support_pass, support_rows, support_update)
from uldp_jax.estimation._packed import PackedReports, to_packed
from uldp_jax.estimation._support import SupportReports, to_support
from uldp_jax.estimation._support import check_bits as _check_bits
from uldp_jax.estimation._support import split_invertible as _split_invertible
from uldp_jax.estimation._support import unary_parts as _unary_parts

__all__ = ["PackedReports", "SupportReports", "dense_update", "em_reports", "support_update", "to_packed",
           "to_support"]


def _check_support(mech: Any, rep: SupportReports) -> None:
    d = mech.d
    sup = rep.support
    if sup.ndim != 2 or jnp.dtype(sup.dtype).kind not in "iu":
        raise TypeError(f"Expected reports.support to be an integer [n, L] array, got {sup.dtype}{sup.shape}.")
    if rep.weight.shape != (sup.shape[0],) or rep.inverted.shape != (d,) or rep.stats.shape != (d,):
        raise ValueError(f"Expected reports.weight [{sup.shape[0]}], reports.inverted [{d}] and reports.stats "
                         f"[{d}] for {type(mech).__name__}(d={d}), got {rep.weight.shape}, {rep.inverted.shape} "
                         f"and {rep.stats.shape}.")
    if sup.shape[0] % rep.chunk:
        raise ValueError(f"Expected reports.support rows ({sup.shape[0]}) to be a multiple of chunk={rep.chunk}.")
    if rep.col_rows is not None:
        _check_columns(rep, d)
    prod_mask, _ = _unary_parts(mech)
    if _validate.is_concrete(sup) and sup.size:
        s = np.asarray(sup)
        if s.min() < 0 or s.max() > d:
            raise ValueError(f"Expected reports.support entries in [0, {d}] (d = padding), got "
                             f"{s.min()}..{s.max()}.")
        ok = np.append(prod_mask, True)
        if not ok[s].all():
            raise ValueError("Expected reports.support to hold only product-part (sensitive) items.")


def _check_columns(rep: SupportReports, d: int) -> None:
    cols, item, rows = rep.col_rows, rep.col_item, rep.block_rows
    if cols.ndim != 3 or item is None or item.shape != cols.shape[:2]:
        raise ValueError(f"Expected reports.col_rows [blocks, S, seg] and reports.col_item [blocks, S], got "
                         f"{cols.shape} and {None if item is None else item.shape}.")
    if rows < 1 or rows % rep.chunk or cols.shape[0] * rows != rep.support.shape[0]:
        raise ValueError(f"Expected block_rows ({rows}) a multiple of chunk={rep.chunk} with blocks x block_rows "
                         f"= support rows ({rep.support.shape[0]}).")
    if _validate.is_concrete(cols) and cols.size:
        c, it = np.asarray(cols), np.asarray(item)
        if c.max() > rows or it.min() < 0 or it.max() > d:
            raise ValueError(f"Expected reports.col_rows in [0, {rows}] and reports.col_item in [0, {d}].")


def em_reports(mech: Any, ys: Any, *, tol: Any = None, max_iters: int = 10_000, accelerate: bool = True,
               init: Any = None, alpha: Any = 0.05, throw: bool = False,
               chunk: int | None = None, pass_dtype: Any = None, layout: str = "auto",
               solver: str = "auto") -> tuple[jax.Array, _em_core.EMInfo]:
    """EM on the exact per-report likelihood of RAPPOR/UE or uRAP reports: the MLE on the simplex.

    Args:
      mech: RAPPOR, UE (OUE/SUE) or URAP.
      ys: ``bool[n, d]`` reports or ``CompactBits`` (as ``ul.perturb`` returns), ``SupportReports``
        (``to_support``) or ``PackedReports`` (``to_packed``). Dense reports are bit-packed (one byte per 8
        report bits; rows bucketed, so calls in one bucket share one compiled solver). Concrete compact reports
        are packed on the host, as ``PackedReports`` where that is smaller than support lists (``layout``),
        traced ones as row-layout support lists.
      tol, max_iters, accelerate, init, alpha, throw: as in ``em_stats``.
      solver: ``"auto"`` or ``"newton"`` (projected Newton on exact Hessian products, the default), ``"squarem"``
        or ``"em"`` (``accelerate=False``): the same MLE.
      chunk: users per chunk for dense reports: given, EM runs chunked mat-vecs on the dense bits instead of
        packing them (default ``None``: bit-packed).
      pass_dtype: precision of the two passes over ``SupportReports`` (see ``support_update``).
      layout: form built from concrete ``CompactBits``: "packed" (``PackedReports``), "rows" or "columns"
        (``SupportReports`` layouts, see ``to_support``), or "auto" (packed where it is smaller, else
        ``to_support``'s own choice).

    Returns:
      ``(p_hat float[d], EMInfo)``. Pure; vmaps over a leading repetition axis of dense reports.

    Raises:
      ValueError/TypeError: bad options, reports of the wrong shape/dtype or of another mechanism.
    """
    tol, max_iters, solver = _em_core.check_options(tol, max_iters, accelerate, solver)
    _threshold.check_alpha(alpha)
    _em_core.check_init(init, mech.d)
    throw = _em_core.check_throw(throw)
    _memory.check_call_memory("EM (em_reports)", mech, ys, stage="em")  # static shapes: before packing or passes
    prod_mask, _ = _unary_parts(mech)
    if layout not in ("auto", "rows", "columns", "packed"):
        raise ValueError(f"Expected layout in ('auto', 'rows', 'columns', 'packed'), got {layout!r}.")
    dtype = jnp.zeros(()).dtype
    eps = jnp.asarray(product_log_odds(mech), dtype)  # the record's rates (t = e^-w), not mech.eps
    built = isinstance(ys, CompactBits)  # packed here from checked reports: not checked again below
    if built:
        _compact.check(mech, ys)
        if not _validate.is_concrete(ys.ones):
            ys = _support.compact_rows(mech, ys, chunk)
        elif layout == "packed" or (layout == "auto" and _packed_is_smaller(mech, ys)):
            ys = to_packed(mech, ys)
        else:
            ys = to_support(mech, ys, chunk, layout=layout)
    if isinstance(ys, PackedReports):
        _packed.check_packed(mech, ys)  # shapes only
        data, kind = ys, "packed"
    elif isinstance(ys, SupportReports):
        if not built:  # a caller's support lists: every entry checked on the host (slow: once per call)
            _check_support(mech, ys)
        data, kind = ys, "support"
    else:
        _check_bits(mech, ys)
        _check_invertible(mech, ys)
        if chunk is None and layout != "packed" and _validate.is_concrete(ys) and not _dense_packs_smaller(mech, ys):
            data, kind = to_support(mech, ys, layout=layout), "support"  # few ones: support lists are smaller
        elif chunk is None:  # bit-packed (one pass of byte-table gathers; 1 bit per report bit)
            data, kind = _pack_dense(mech, ys), "packed"
        else:  # an explicit chunk: chunked mat-vecs on the dense bits, ``chunk`` users at a time
            bits, weight, inverted = _split_invertible(mech, ys, check=False)
            chunk = _validate.check_int("chunk", chunk, minimum=1)
            data, kind = (bits & weight[:, None], weight, inverted), chunk
    stats = data.stats.astype(dtype) if kind in ("packed", "support") else mech.aggregate(ys).astype(dtype)
    n = jnp.sum(data.weight) + jnp.sum(data.inverted) if kind in ("packed", "support") else ys.shape[0]
    if init is None:
        p_init = _threshold.empirical_threshold(mech, stats, n, alpha)
    else:
        p_init = jnp.asarray(init, dtype)
    p0 = _em_core.start_point(jnp.asarray(p_init, dtype))
    tol, certify = _em_core.resolve_tol(tol, n, dtype, _em_core.REPORT_TOL)
    gap_tol = _em_newton.gap_tol_of(certify, dtype if pass_dtype is None else pass_dtype, dtype)
    pdt = None if pass_dtype is None else jnp.dtype(pass_dtype).name
    items = None if prod_mask.all() or kind not in ("packed", "support") else jnp.asarray(np.flatnonzero(prod_mask),
                                                                                       jnp.int32)
    p_hat, info = _solve(eps, data, p0, tol, kind, max_iters, solver, pdt, items, gap_tol)
    _em_core.maybe_throw(info, throw)
    return p_hat, info


def _packed_is_smaller(mech: Any, ys: CompactBits) -> bool:
    """Whether bit-packed bytes (``d / 8`` per report) take less memory than support lists (2 bytes per one)."""
    prod_mask, _ = _unary_parts(mech)
    host = np.asarray(ys.ones)  # a view on CPU; counted ``host_rows`` rows at a time (an eager jnp.sum compared the
    step = _sizing.sizing().host_rows  # whole array into a temporary first)
    ones = sum(int(np.count_nonzero(host[r:r + step] < mech.d)) for r in range(0, host.shape[0], step))
    return _packed.num_bytes(int(prod_mask.sum())) * ys.ones.shape[0] <= 2 * ones


def _dense_packs_smaller(mech: Any, ys: Any) -> bool:
    """Whether bit-packed bytes take less memory than support lists for concrete dense reports (host count)."""
    prod_mask, _ = _unary_parts(mech)
    bits = np.asarray(ys)
    ones = sum(int(np.count_nonzero(bits[r:r + _sizing.sizing().host_rows][:, prod_mask]))
               for r in range(0, bits.shape[0], _sizing.sizing().host_rows))
    return _packed.num_bytes(int(prod_mask.sum())) * bits.shape[0] <= 2 * ones


def _check_invertible(mech: Any, ys: Any) -> None:
    """Rejects concrete uRAP reports with two or more non-sensitive bits (probability 0), on the host."""
    prod_mask, has_inv = _unary_parts(mech)
    if has_inv and _validate.is_concrete(ys):
        bits = np.asarray(ys)
        for r in range(0, bits.shape[0], _sizing.sizing().host_rows):
            if np.any(np.sum(bits[r:r + _sizing.sizing().host_rows][:, ~prod_mask], axis=1) > 1):
                raise ValueError("Expected uRAP reports with at most one non-sensitive bit set (reports with two "
                                 "or more have probability 0); got a report with more: wrong mechanism?")


def _pack_dense(mech: Any, ys: jax.Array) -> PackedReports:
    """Dense ``bool[n, d]`` reports -> ``PackedReports`` (rows bucketed: one compiled packer and solver per
    bucket; traced reports are padded to the chunk only)."""
    prod_mask, _ = _unary_parts(mech)
    n = ys.shape[0]
    chunk = _packed.chunk_rows(_packed.num_bytes(int(prod_mask.sum())), n)
    rows = _packed.padded_rows(n, chunk) if _validate.is_concrete(ys) else -(-n // chunk) * chunk
    if _validate.is_concrete(ys):
        ys = np.pad(np.asarray(ys), ((0, rows - n), (0, 0)))
    else:
        ys = jnp.pad(ys, ((0, rows - n), (0, 0)))
    by, w, inv, st = _pack_masked(mech, ys, np.arange(rows) < n)
    return PackedReports(by, w, inv, st, jnp.asarray(np.flatnonzero(prod_mask), jnp.int32), chunk)


_pack_masked = jax.jit(_packed.pack_dense)


def _solve_impl(eps, data, p0, tol, kind, max_iters, solver, pass_dtype, items, gap_tol):
    """``gap_tol``: Newton's certificate tolerance (``_em_newton.gap_tol_of``: the passes' resolution, or ``inf``
    under ``tol="stat"``)."""
    t, log_t = jnp.exp(-eps), -eps
    if solver in ("auto", "newton"):  # projected Newton on exact Hessian products (``_em_newton``; O(d) memory: any d)
        rows = None
        if kind == "packed":
            grad, gain = packed_grad(t, data, pass_dtype, log_t), packed_gain(t, data)
            inverted, weight, run = data.inverted, data.weight, packed_pass(data, pass_dtype)
        elif kind == "support":  # the passes hand each report's s_i on (``support_rows``): fewer gathers a step
            grad, gain = support_grad(t, data, pass_dtype, log_t), support_gain(t, data)
            inverted, weight, run = data.inverted, data.weight, support_pass(data, pass_dtype)
            rows = support_rows(t, data, pass_dtype, log_t)
        else:
            bits, weight, inverted = data
            grad, gain = dense_grad(t, bits, weight, inverted, kind, log_t), dense_gain(t, bits, weight, inverted, kind)
            run = dense_pass(bits, weight, kind)
        n = jnp.sum(weight) + jnp.sum(inverted)
        if items is not None:  # uRAP: Newton on the sensitive items and the non-sensitive total (``_em_reduced``)
            return _em_reduced.solve(grad, None, gain, items, inverted, n, p0, tol, max_iters, hessian_of(t, run),
                                     gap_tol, rows)
        update = _em_newton.as_update(grad, inverted, n)
        return _em_newton.solve(grad, None, gain, update, inverted, n, p0, tol, max_iters, hessian_of(t, run),
                                gap_tol, rows)
    if kind == "support":
        update, gain = support_update(t, data, pass_dtype, log_t), support_gain(t, data)
    elif kind == "packed":
        update, gain = packed_update(t, data, pass_dtype, log_t), packed_gain(t, data)
    else:
        bits, weight, inverted = data
        update = dense_update(t, bits, weight, inverted, kind, log_t)
        gain = dense_gain(t, bits, weight, inverted, kind)
    return _em_core.run(update, p0, tol, max_iters, solver == "squarem", gain)


# One compiled solver per (layout, shapes, options): repeated calls on reports of the same shapes skip compiling.
_solve = jax.jit(_solve_impl, static_argnums=(4, 5, 6, 7))
