r"""EM on support-ratio likelihoods (``SupportRatio``: SS, OLH, Wheel, GRR, UE bases and their GLUTF mechanisms).

With the row factors of ``SupportRatio`` and :math:`r_i = w_i / D_i`, one EM step is

.. math:: p'_x = \frac{p_x}{n}\Big(\sum_i r_i\,low_i + \sum_{i: x \in S_i} r_i (high_i - low_i)\Big) + \frac{N_x}{n}
          \quad (x \in items), \qquad p'_x = \frac{p_x}{n} \sum_i r_i\,other_i + \frac{N_x}{n} \quad \text{(else)}.

The support bits are built chunk by chunk from the mechanism's ``likelihood().report`` and kept **bit-packed**
(``uint8[rows, ceil(s / 8)]``: one bit per report and base item, never an ``n x d`` float or byte likelihood), and
both sums over a report's support are read through byte tables, as for bit vectors (``_em_packed``):
:math:`s_i = \sum_j T_j[y_{ij}]` (``s / 8`` gathers per report) and the column sums
:math:`\sum_{i: x \in S_i} c_i` from a scatter-add of ``c_i`` into each report's ``s / 8`` byte bins. An OLH report
supports about ``d / g`` items and an SS report ``k``: the packed form costs ``d / 8`` gathers per report and map
instead of the ``2 d`` multiply-adds of the former unpacked mat-vecs. The reports are padded to a bucketed number
of chunks (``bucket``: a few sizes per power of two), so calls with different ``n`` in one bucket reuse one
compiled solver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _compensated, _em_core, _em_newton, _em_reduced, _packed
from uldp_jax.estimation._em_passes import INV_CAP
from uldp_jax.estimation._em_packed import _BITS, _flat_index, _table
from uldp_jax.estimation._support import bucket
from uldp_jax.mechanisms.core import SupportRatio, likelihood_of


def chunk_rows(num_items: int, n: int | None = None) -> int:
    """Rows per chunk: ``_packed.chunk_rows`` of the packed width (fixed per base size: reused shapes)."""
    return _packed.chunk_rows(_packed.num_bytes(num_items), n)


def _masses(p, items):
    sens = jnp.zeros(p.shape[-1], bool).at[items].set(True)
    p_items = p[items]
    total_s = jnp.sum(p_items)
    return sens, p_items, total_s, jnp.sum(p) - total_s


def _rows(rep: SupportRatio, dtype: Any):
    """``(bytes [k, chunk, B], low, high, other, weight [k, chunk])`` in ``dtype`` (``rep.bits`` holds bytes)."""
    cast = lambda a: a.astype(dtype)
    return rep.bits, cast(rep.low), cast(rep.high), cast(rep.other), cast(rep.weight)


def ratio_grad(rep: SupportRatio) -> _em_newton.Grad:
    """The gradient pass on packed ``SupportRatio`` reports (``_em_newton``: ``g_x = sum_i r_i L_ix``, and
    ``sum_i w_i log D_i``): one scan of table gathers and byte-bin scatter-adds. Its sums are ``_compensated``
    (as the bit-vector passes'): a plain float32 scatter-add of ~1e5 reports drifted by ~1e-4 of ``g``, which held
    Newton's certificate above its 1e-6 on uSS at eps = 4 while no step could gain."""
    nb = rep.bits.shape[-1]

    def grad(p):
        dt = p.dtype
        data = _rows(rep, dt)
        sens, p_items, total_s, total_n = _masses(p, rep.items)
        table = _table(p_items, nb, dt)

        def chunk_pass(carry, a):
            h_acc, a_acc, c_acc, l_acc = carry
            by, low, high, other, w = a
            idx = _flat_index(by)
            s = jnp.sum(table[idx], axis=1)
            den = low * (total_s - s) + high * s + other * total_n
            pos = w > 0
            safe = jnp.where(pos & (den > 0), den, 1.0)
            r = jnp.where(pos, jnp.minimum(w / safe, INV_CAP), 0.0)
            ll = jnp.sum(jnp.where(pos, w * jnp.log(safe), 0.0))
            h = _compensated.scatter_add(nb * 256, idx, r * (high - low), dt)
            return (_compensated.two_sum(h_acc, h), _compensated.two_sum(a_acc, _compensated.exact_sum(r * low)),
                    _compensated.two_sum(c_acc, _compensated.exact_sum(r * other)), l_acc + ll), None

        zero = _compensated.zeros((), dt)
        init = (_compensated.zeros(nb * 256, dt), zero, zero, jnp.zeros((), dt))
        (h, a, c, l_rep), _ = jax.lax.scan(chunk_pass, init, data)
        b = _bins_to_items(_compensated.total(h), nb, p_items.shape[0])
        return jnp.where(sens, _compensated.total(a), _compensated.total(c)).at[rep.items].add(b), l_rep

    return grad


def ratio_update(rep: SupportRatio) -> _em_core.Update:
    """The EM map on packed ``SupportRatio`` reports (``bits``: ``uint8[k, chunk, B]``, factors ``[k, chunk]``)."""
    wide = jnp.result_type(float)  # float64 under x64: the report count stays exact past 2^24
    n = jnp.sum(rep.weight.astype(wide)) + jnp.sum(rep.inverted.astype(wide))
    return _em_newton.as_update(ratio_grad(rep), rep.inverted, n)


def _bins_to_items(h: jax.Array, nb: int, s: int) -> jax.Array:
    """Byte-bin sums ``float[nb * 256]`` -> per-item sums ``float[s]`` (one ``[B, 256] x [256, 8]`` product)."""
    return (h.reshape(nb, 256) @ jnp.asarray(_BITS, h.dtype)).reshape(-1)[:s]


def ratio_hessian(rep: SupportRatio) -> tuple[_em_newton.Hvp, _em_newton.Model]:
    r"""``(hvp, model)`` for ``_em_newton``'s conjugate gradients on packed ``SupportRatio`` reports, one pass each.

    With :math:`c_i = w_i / D_i^2` and :math:`L_i = low_i 1_S + \Delta_i y_i + other_i 1_N`
    (:math:`\Delta = high - low`), the product part of the negative Hessian is :math:`G = \sum_i c_i L_i L_i^\top`:

    * ``hvp(p, v)``: :math:`G v = \sum_i c_i (L_i \cdot v) L_i`, exact, the gradient's pass with :math:`r_i`
      replaced by :math:`c_i (L_i \cdot v)` (one gather of the stacked tables of ``p`` and ``v`` per report).
    * ``model(p)``: ``_em_newton.LowRank`` with :math:`L_i = low_i 1 + z_i`, :math:`z_i = \Delta_i y_i +
      (other_i - low_i) 1_N`, and the off-diagonal of :math:`\sum_i c_i z_i z_i^\top` dropped: :math:`a =
      \sum_i c_i z_i^2`, :math:`c_0 = \sum_i c_i low_i^2`, :math:`u = \sum_i c_i low_i z_i`. It is held in the
      full ``d`` so that ``_em_reduced``'s ``pick`` gives the same model in its coordinates (the others' total
      ``T`` is the direction :math:`1_N`: their entries of ``a`` and ``u`` are ``T``'s).

    The subsampled Gram this replaces (a direct solve on a fixed subsample of the reports) needed tens of
    Newton steps on OLH and SS reports where the exact products need a few (experiments/benchmarks/README.md)."""
    nb, num_items = rep.bits.shape[-1], rep.items.shape[0]

    def hvp(p, v, model_at_p=None, cols=None):
        del model_at_p, cols  # every item's entry comes out of the pass
        dt = p.dtype
        data = _rows(rep, dt)
        sens, p_items, ps, pn = _masses(p, rep.items)
        _, v_items, vs, vn = _masses(v, rep.items)
        both = jnp.stack([_table(p_items, nb, dt), _table(v_items, nb, dt)], axis=1)

        def chunk_pass(carry, a):
            h_acc, lo_acc, ot_acc = carry
            by, low, high, other, w = a
            idx = _flat_index(by)
            sd = jnp.sum(both[idx], axis=1)
            sp, sv = sd[:, 0], sd[:, 1]
            den = low * (ps - sp) + high * sp + other * pn
            ok = (w > 0) & (den > 0)
            c = jnp.where(ok, jnp.minimum(w / jnp.where(ok, den, 1.0) ** 2, INV_CAP), 0.0)
            f = c * (low * (vs - sv) + high * sv + other * vn)  # c_i (L_i . v)
            h = jnp.zeros(nb * 256, dt).at[idx].add(jnp.broadcast_to((f * (high - low))[:, None], idx.shape))
            return (h_acc + h, lo_acc + jnp.sum(f * low), ot_acc + jnp.sum(f * other)), None

        zero = jnp.zeros((), dt)
        (h, lo, ot), _ = jax.lax.scan(chunk_pass, (jnp.zeros(nb * 256, dt), zero, zero), data)
        return jnp.where(sens, lo, ot).at[rep.items].add(_bins_to_items(h, nb, num_items))

    def model(p, rows=None, cols=None):
        del rows, cols
        dt = p.dtype
        data = _rows(rep, dt)
        sens, p_items, ps, pn = _masses(p, rep.items)
        table = _table(p_items, nb, dt)

        def chunk_pass(carry, a):
            h_acc, sums = carry
            by, low, high, other, w = a
            idx = _flat_index(by)
            sp = jnp.sum(table[idx], axis=1)
            den = low * (ps - sp) + high * sp + other * pn
            ok = (w > 0) & (den > 0)
            c = jnp.where(ok, jnp.minimum(w / jnp.where(ok, den, 1.0) ** 2, INV_CAP), 0.0)
            dl, on = high - low, other - low
            terms = jnp.stack([c * dl * dl, c * low * dl], axis=1)  # a and u on the items, by support bit
            h = jnp.zeros((nb * 256, 2), dt).at[idx].add(jnp.broadcast_to(terms[:, None, :], idx.shape + (2,)))
            s = jnp.stack([jnp.sum(c * low * low), jnp.sum(c * on * on), jnp.sum(c * low * on)])
            return (h_acc + h, sums + s), None

        init = (jnp.zeros((nb * 256, 2), dt), jnp.zeros(3, dt))
        (h, (c0, a_n, u_n)), _ = jax.lax.scan(chunk_pass, init, data)
        a_items, u_items = _bins_to_items(h[:, 0], nb, num_items), _bins_to_items(h[:, 1], nb, num_items)
        a = jnp.where(sens, 0.0, a_n).at[rep.items].set(a_items)
        u = jnp.where(sens, 0.0, u_n).at[rep.items].set(u_items)
        return _em_newton.LowRank(a, c0, u)

    return hvp, model


def newton_solve(rep: SupportRatio, p0: jax.Array, tol: Any, max_iters: int,
                 gap_tol: Any = None) -> tuple[jax.Array, _em_core.EMInfo]:
    """Projected Newton (``_em_newton.solve``, SQUAREM past it) on the ``_em_reduced`` problem (the items and the
    others' total), expanded to ``d``; ``gap_tol`` as in ``_em_newton.run``."""
    dt = p0.dtype
    n = jnp.sum(rep.weight.astype(dt)) + jnp.sum(rep.inverted.astype(dt))
    return _em_reduced.solve(ratio_grad(rep), None, ratio_gain(rep), rep.items, rep.inverted, n, p0, tol, max_iters,
                             hessian=ratio_hessian(rep), gap_tol=gap_tol)


def ratio_gain(rep: SupportRatio) -> _em_core.Gain:
    """The precise log-likelihood change (``_em_core``) of ``ratio_update``: one pass of table gathers."""
    nb = rep.bits.shape[-1]

    def gain(p_a, p_b):
        dt = p_a.dtype
        dp = p_b - p_a
        data = _rows(rep, dt)
        inv = rep.inverted.astype(dt)
        n = jnp.sum(rep.weight.astype(dt)) + jnp.sum(inv)
        _, pa_items, ts_a, tn_a = _masses(p_a, rep.items)
        _, dp_items, dts, dtn = _masses(dp, rep.items)
        both = jnp.stack([_table(pa_items, nb, dt), _table(dp_items, nb, dt)], axis=1)

        def chunk_pass(acc, a):
            by, low, high, other, w = a
            sd = jnp.sum(both[_flat_index(by)], axis=1)
            s, ds = sd[:, 0], sd[:, 1]
            den = low * (ts_a - s) + high * s + other * tn_a
            dden = low * (dts - ds) + high * ds + other * dtn
            ok = (w > 0) & (den > 0)
            x = jnp.where(ok, dden / jnp.where(ok, den, 1.0), 0.0)
            return acc + jnp.sum(jnp.where(ok, w * jnp.log1p(jnp.maximum(x, -1.0)), 0.0)), None

        g, _ = jax.lax.scan(chunk_pass, jnp.zeros((), dt), data)
        ok = (inv > 0) & (p_a > 0)
        g_inv = jnp.sum(jnp.where(ok, inv * jnp.log1p(dp / jnp.where(ok, p_a, 1.0)), 0.0))
        return (g + g_inv) / n - jnp.log1p(jnp.sum(dp) / jnp.sum(p_a))

    return gain


def _packed_terms(mech: Any, ys: Any, n_valid: jax.Array, chunk: int) -> SupportRatio:
    """``mech.likelihood().report`` chunk by chunk, its bits packed to bytes (``SupportRatio`` with ``bits``
    ``uint8[k, chunk, B]`` and factors ``[k, chunk]``); rows from ``n_valid`` on (padding) get weight 0."""
    report = likelihood_of(mech).report
    rows = jax.tree_util.tree_leaves(ys)[0].shape[0]
    k = rows // chunk
    blocks = jax.tree_util.tree_map(lambda a: a.reshape((k, chunk) + a.shape[1:]), ys)

    def one(yc):
        rep = report(yc)
        return (_packed.pack_bytes(rep.bits), rep.items, rep.low, rep.high, rep.other, rep.weight, rep.inverted)

    by, items, low, high, other, weight, inverted = jax.lax.map(one, blocks)
    valid = (jnp.arange(rows) < n_valid).reshape(k, chunk)
    first = report(jax.tree_util.tree_map(lambda a: a[:1], ys))  # what each padding row added
    inv = jnp.sum(inverted, axis=0) - (rows - n_valid).astype(inverted.dtype) * first.inverted
    return SupportRatio(by, items[0], low, high, other, jnp.where(valid, weight, 0.0), inv)


def _solve_impl(mech, ys, n_valid, p0, tol, chunk, max_iters, solver, gap_tol=None):
    """``ys``: reports padded (with copies of report 0) to a multiple of ``chunk`` rows; ``n_valid`` real ones."""
    rep = _packed_terms(mech, ys, n_valid, chunk)
    if solver in ("auto", "newton"):  # projected Newton (``Reduced``) with exact Hessian products, at any d
        return newton_solve(rep, p0, tol, max_iters, gap_tol)
    return _em_core.run(ratio_update(rep), p0, tol, max_iters, solver != "em", ratio_gain(rep))


# Module level: one compiled solver per (mechanism type and static fields, row bucket, options): different data,
# n (in one bucket), eps or theta reuse it.
_solve = jax.jit(_solve_impl, static_argnums=(5, 6, 7))


def _pad_rows(ys: Any, rows: int) -> Any:
    """Pads every leaf's report axis with copies of report 0 (on the host when concrete: no per-shape kernel)."""
    def pad_leaf(a):
        extra = rows - a.shape[0]
        if not extra:
            return a
        if _validate.is_concrete(a):
            a = np.asarray(a)
            return np.concatenate([a, np.broadcast_to(a[:1], (extra,) + a.shape[1:])])
        return jnp.concatenate([a, jnp.broadcast_to(a[:1], (extra,) + a.shape[1:])])
    return jax.tree_util.tree_map(pad_leaf, ys)


def solve_reports(mech: Any, ys: Any, p0: jax.Array, tol: jax.Array, max_iters: int,
                  solver: str, gap_tol: Any = None) -> tuple[jax.Array, _em_core.EMInfo]:
    """EM on ``mech.likelihood().report(ys)`` (a ``SupportRatio``), built (bit-packed) and solved in one compiled call.

    The reports (any pytree with a leading report axis) are padded to ``chunk * bucket(chunks)`` rows (``chunk``:
    ``chunk_rows``, or the power of two at or above ``n`` when that is smaller), so a second call with the same
    mechanism type and a report count in the same bucket compiles nothing. ``gap_tol``: Newton's certificate
    tolerance (``None``: its default; ``inf`` under ``tol="stat"``).
    """
    form = jax.eval_shape(likelihood_of(mech).report, ys)
    n = form.bits.shape[0]
    chunk = chunk_rows(form.bits.shape[1], n)
    rows = chunk * bucket(-(-n // chunk))
    return _solve(mech, _pad_rows(ys, rows), jnp.int32(n), p0, tol, chunk, max_iters, solver, gap_tol)
