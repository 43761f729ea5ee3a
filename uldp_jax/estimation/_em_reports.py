r"""EM on the exact product likelihood of bit-vector reports (RAPPOR/UE, uRAP).

Unary encodings: a report ``y`` has :math:`P(y|x) = C(y)\,\kappa\,w^{y_x}` with
:math:`w = \text{keep}(1-q)/(q(1-\text{keep})) = e^\varepsilon` for every keep-probability, so with
:math:`t = e^{-\varepsilon}` and :math:`s_i = \sum_{x \in \mathrm{supp}(y_i)} p_x`,

.. math:: P(y_i|p) \propto D_i = t\,(1 - s_i) + s_i, \qquad
          p'_x = \frac{p_x}{n}\Big(t \sum_i \frac{1}{D_i} + (1-t) \sum_{i: y_{ix}=1} \frac{1}{D_i}\Big).

One EM step is two passes over the reported ones: a gather-sum for ``s`` and a scatter-add for the second sum
(O(number of ones)), or two mat-vecs on dense ``bool[n, d]`` reports, chunked over users.

uRAP: the sensitive bits follow the same form (the non-sensitive items have weight :math:`w^0` in :math:`D_i`,
since :math:`(1-\theta)/(1-d_1) = d_2`); a report with non-sensitive bit ``j`` set comes only from ``x = j``
(likelihood :math:`\propto p_j`), so those reports enter as invertible counts: :math:`p'_j \mathrel{+}= N_j/n`.
Reports with two or more non-sensitive bits have probability 0 and are rejected.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _em_core, _threshold
from uldp_jax.mechanisms import _base

CHUNK_ENTRIES = 2**20  # entries of the per-chunk temporaries (users x columns); cache-sized


@_base.pytree_dataclass(data_fields=("support", "weight", "inverted", "stats"), meta_fields=("chunk",))
@dataclasses.dataclass(frozen=True)
class SupportReports:
    """Bit-vector reports as padded support lists (compact form of the product-likelihood data).

    Attributes:
      support: ``int32[rows, L]`` (or int16): per product-part report, the items whose bit is 1 (every item for
        RAPPOR/UE, the sensitive items for uRAP), padded with ``d``. ``to_support`` keeps no rows for
        invertible reports; ``rows`` is a multiple of the chunk size (padding rows have weight 0).
      weight: ``float[rows]``: 1 for a product-part report, 0 for padding rows (and invertible reports).
      inverted: ``float[d]``: number of invertible reports per item (uRAP non-sensitive bits; 0 for RAPPOR).
      stats: ``float[d]``: the mechanism's aggregate (per-item support counts of all reports), for the start.
      chunk: users per chunk (static).
    """

    support: Any
    weight: Any
    inverted: Any
    stats: Any
    chunk: int


def _unary_parts(mech: Any) -> tuple[np.ndarray, bool]:
    """(product-part mask bool[d], has_invertible) for the supported mechanisms."""
    from uldp_jax.mechanisms import _ue, _urap

    if isinstance(mech, _ue._UnaryMixin):
        return np.ones(mech.d, bool), False
    if isinstance(mech, _urap.URAP):
        return _base.sensitive_mask(mech.d, mech.sensitive), True
    raise ValueError(f"No exact-likelihood EM for reports of mech={type(mech).__name__} "
                     f"(report_kind={getattr(mech, 'report_kind', None)!r}).")


def _check_bits(mech: Any, ys: Any) -> None:
    if not hasattr(ys, "dtype") or jnp.dtype(ys.dtype) != jnp.bool_:
        raise TypeError(f"Expected ys to be bool[n, {mech.d}] bit-vector reports of {type(mech).__name__}, "
                        f"got {getattr(ys, 'dtype', type(ys).__name__)}.")
    if ys.ndim != 2 or ys.shape[1] != mech.d or ys.shape[0] < 1:
        raise ValueError(f"Expected ys with shape [n, {mech.d}] (n >= 1), got {tuple(ys.shape)}.")


def _split_invertible(mech: Any, ys: jax.Array, check: bool):
    """``(product-part bits bool[n, d], weight bool[n], inverted counts int[d])``."""
    prod_mask, has_inv = _unary_parts(mech)
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


def to_support(mech: Any, ys: Any, chunk: int | None = None, dtype: Any = np.int32) -> SupportReports:
    """Converts concrete ``bool[n, d]`` reports into ``SupportReports`` on the host (NumPy), block by block.

    Args:
      mech: RAPPOR/UE or URAP.
      ys: concrete ``bool[n, d]`` reports, or an iterable of such blocks (e.g. a generator, so that the dense
        reports of a large study never exist at once; memory is that of the packed support lists).
      chunk: users per chunk of the EM passes (default: about ``CHUNK_ENTRIES`` gathered entries per chunk).
      dtype: index dtype (``np.int16`` halves memory when ``d < 32767``).
    """
    blocks = [ys] if hasattr(ys, "shape") else ys
    d = mech.d
    packed, weights, inverted, stats = [], [], np.zeros(d, np.int64), np.zeros(d, np.int64)
    for b in blocks:
        _check_bits(mech, b)
        bits, w, inv = _split_invertible(mech, jnp.asarray(b), check=True)
        bits = np.asarray(bits)[np.asarray(w)]  # invertible reports only count in `inverted`: drop their rows
        w = np.ones(bits.shape[0], bool)
        rows, cols = np.nonzero(bits)
        counts = np.bincount(rows, minlength=bits.shape[0])
        sup = np.full((bits.shape[0], max(int(counts.max(initial=0)), 1)), d, dtype=dtype)
        starts = np.concatenate([[0], np.cumsum(counts)])[:-1]
        sup[rows, np.arange(rows.shape[0]) - starts[rows]] = cols
        packed.append(sup)
        weights.append(w)
        inverted += np.asarray(inv)
        stats += np.asarray(mech.aggregate(jnp.asarray(b)))
    if not packed:
        raise ValueError("Expected ys to hold at least one block of reports.")
    width = max(s.shape[1] for s in packed)
    n = sum(s.shape[0] for s in packed)
    if chunk is None:
        chunk = max(1, min(n, CHUNK_ENTRIES // width))
    chunk = _validate.check_int("chunk", chunk, minimum=1)
    n_pad = max(-(-n // chunk), 1) * chunk
    support = np.full((n_pad, width), d, dtype=dtype)
    row = 0
    for s in packed:
        support[row:row + s.shape[0], : s.shape[1]] = s
        row += s.shape[0]
    del packed
    w = np.zeros(n_pad, np.float32)
    w[:n] = np.concatenate(weights)
    return SupportReports(jnp.asarray(support), jnp.asarray(w), jnp.asarray(inverted), jnp.asarray(stats),
                          int(chunk))


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
    prod_mask, _ = _unary_parts(mech)
    if _validate.is_concrete(sup) and sup.size:
        s = np.asarray(sup)
        if s.min() < 0 or s.max() > d:
            raise ValueError(f"Expected reports.support entries in [0, {d}] (d = padding), got "
                             f"{s.min()}..{s.max()}.")
        ok = np.append(prod_mask, True)
        if not ok[s].all():
            raise ValueError("Expected reports.support to hold only product-part (sensitive) items.")


def support_update(t: jax.Array, rep: SupportReports, pass_dtype: Any = None) -> _em_core.Update:
    """The EM map on ``SupportReports`` (two chunked passes over the reported ones).

    ``pass_dtype`` (e.g. ``jnp.float32`` under x64) runs the two passes in that precision, with per-chunk
    results accumulated in ``p``'s dtype (about 1.5x faster on CPU; the log-likelihood stays accurate to
    ~1e-9 per report, so use ``tol >= 1e-8``).
    """
    d = rep.inverted.shape[0]
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    num_chunks = rep.support.shape[0] // rep.chunk
    sup = rep.support.reshape(num_chunks, rep.chunk, -1)
    wts = rep.weight.reshape(num_chunks, rep.chunk)

    def update(p):
        dt = p.dtype if pass_dtype is None else jnp.dtype(pass_dtype)
        total = jnp.sum(p).astype(dt)
        p_pad = jnp.concatenate([p, jnp.zeros((1,), p.dtype)]).astype(dt)
        tt = t.astype(dt)

        def chunk_pass(carry, a):
            b_acc, a_acc, l_acc = carry
            idx, w = a
            w = w.astype(dt)
            s = jnp.sum(p_pad[idx], axis=1)
            den = tt * (total - s) + s
            inv = jnp.where(w > 0, w / jnp.where(den > 0, den, 1.0), 0.0)
            b = jnp.zeros(d + 1, dt).at[idx].add(jnp.broadcast_to(inv[:, None], idx.shape))
            ll = jnp.sum(jnp.where(w > 0, w * jnp.log(jnp.where(w > 0, den, 1.0)), 0.0))
            return (b_acc + b.astype(p.dtype), a_acc + jnp.sum(inv).astype(p.dtype),
                    l_acc + ll.astype(p.dtype)), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(chunk_pass, (jnp.zeros(d + 1, p.dtype), zero, zero), (sup, wts))
        inv_counts = rep.inverted.astype(p.dtype)
        l_inv = jnp.sum(jnp.where(inv_counts > 0, inv_counts * jnp.log(p), 0.0))
        p_new = (p * (t * a + (1.0 - t) * b[:d]) + inv_counts) / n
        return p_new, (l_prod + l_inv) / n

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
            s = yf @ p
            den = t * (total - s) + s
            inv = jnp.where(w > 0, w / jnp.where(den > 0, den, 1.0), 0.0)
            l_acc = l_acc + jnp.sum(jnp.where(w > 0, w * jnp.log(jnp.where(w > 0, den, 1.0)), 0.0))
            return (b_acc + inv @ yf, a_acc + jnp.sum(inv), l_acc), None

        zero = jnp.zeros((), p.dtype)
        (b, a, l_prod), _ = jax.lax.scan(chunk_pass, (jnp.zeros(d, p.dtype), zero, zero),
                                         (bits, weight.astype(p.dtype)))
        inv_counts = inverted.astype(p.dtype)
        l_inv = jnp.sum(jnp.where(inv_counts > 0, inv_counts * jnp.log(p), 0.0))
        p_new = (p * (t * a + (1.0 - t) * b) + inv_counts) / n
        return p_new, (l_prod + l_inv) / n

    return update


def em_reports(mech: Any, ys: Any, *, tol: Any = None, max_iters: int = 10_000, accelerate: bool = True,
               init: Any = None, alpha: Any = 0.05, throw: bool = False,
               chunk: int | None = None, pass_dtype: Any = None) -> tuple[jax.Array, _em_core.EMInfo]:
    """EM on the exact per-report likelihood of RAPPOR/UE or uRAP reports: the MLE on the simplex.

    Args:
      mech: RAPPOR, UE (OUE/SUE) or URAP.
      ys: ``bool[n, d]`` reports (as ``ul.perturb`` returns) or ``SupportReports`` (``to_support``).
      tol, max_iters, accelerate, init, alpha, throw: as in ``em_stats``.
      chunk: users per chunk for dense reports (default: about ``CHUNK_ENTRIES`` entries per chunk).
      pass_dtype: precision of the two passes over ``SupportReports`` (see ``support_update``).

    Returns:
      ``(p_hat float[d], EMInfo)``. Pure; vmaps over a leading repetition axis of dense reports.

    Raises:
      ValueError/TypeError: bad options, reports of the wrong shape/dtype or of another mechanism.
    """
    tol, max_iters, accelerate = _em_core.check_options(tol, max_iters, accelerate)
    _threshold.check_alpha(alpha)
    _em_core.check_init(init, mech.d)
    _unary_parts(mech)
    dtype = jnp.zeros(()).dtype
    t = jnp.exp(-jnp.asarray(mech.eps, dtype))
    if isinstance(ys, SupportReports):
        _check_support(mech, ys)
        update = support_update(t, ys, pass_dtype)
        stats, n = ys.stats.astype(dtype), jnp.sum(ys.weight) + jnp.sum(ys.inverted)
    else:
        _check_bits(mech, ys)
        bits, weight, inverted = _split_invertible(mech, ys, check=True)
        bits = bits & weight[:, None]
        if chunk is None:
            chunk = max(1, min(ys.shape[0], CHUNK_ENTRIES // mech.d))
        chunk = _validate.check_int("chunk", chunk, minimum=1)
        update = dense_update(t, bits, weight, inverted, chunk)
        stats, n = mech.aggregate(ys), ys.shape[0]
    if init is None:
        p_init = _threshold.empirical_threshold(mech, stats, n, alpha)
    else:
        p_init = jnp.asarray(init, dtype)
    p0 = _em_core.start_point(jnp.asarray(p_init, dtype))
    p_hat, info = _em_core.run(update, p0, tol, max_iters, accelerate)
    _em_core.maybe_throw(info, throw)
    return p_hat, info
