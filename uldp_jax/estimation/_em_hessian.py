r"""The Hessian of the per-report bit-vector likelihoods for projected Newton (``_em_newton``).

With :math:`L_i = t 1 + (1 - t) y_i`, :math:`D_i = L_i \cdot p` and :math:`c_i = w_i / D_i^2`, the product
part of the negative Hessian is :math:`G = \sum_i c_i L_i L_i^\top`.
``hessian_of(t, run)`` gives (an earlier dense model from a subsample of the reports, ``*_gram``, was dropped:
inaccurate where a few reports with small :math:`D_i` carry much of the curvature, RAPPOR at large eps, and
``d x d``):

* the exact product :math:`Gv = t \sum_i c_i (L_i \cdot v) 1 + (1 - t) \sum_i c_i
  (L_i \cdot v) y_i` and a preconditioner with the exact diagonal :math:`G_{xx} = t^2 \sum_i c_i + (1 - t^2)
  \sum_{i: y_{ix} = 1} c_i`, each one pass over the reports through the layout's generic pass
  (``_em_passes.Pass``, the same pass as the gradient). A report with no one has :math:`D = t \sum p`; its terms are taken as
  :math:`w (\sum v) / (\sum p)^2` and :math:`w / (\sum p)^2`, so ``t`` may underflow.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from uldp_jax.estimation import _em_newton
from uldp_jax.estimation._em_passes import INV_CAP, Pass


def _curvature(t, total, s, w):
    """Per report ``(c = w / D^2, t^2 c, t c)``, capped at ``INV_CAP``; where ``s = 0`` (no one, or ones
    only on items with ``p = 0``: ``D = t total``) ``t^2 c = w / total^2`` and ``t c = w / (t total^2)`` are
    taken in that form (``t`` may underflow)."""
    den = t * (total - s) + s
    empty = s <= 0
    pos = w > 0
    c = jnp.where(pos & (den > 0), jnp.minimum(w / jnp.where(den > 0, den, 1.0) ** 2, INV_CAP), 0.0)
    w_pos = jnp.where(pos, w, 0.0)
    t2c = jnp.where(empty, w_pos / (total * total), t * t * c)
    tc = jnp.where(empty, jnp.minimum(w_pos / (t * total * total), INV_CAP), t * c)
    return c, t2c, tc


def hessian_of(t: jax.Array, run: Pass) -> tuple[_em_newton.Hvp, _em_newton.Model]:
    r"""``(hvp(p, v, model_at_p=None, cols=None) -> G v, model(p, rows=None, cols=None) -> M)``, one pass each
    (module docstring): ``G v`` exact;
    ``M`` the preconditioner of ``_em_newton``, held as ``_em_newton.LowRank`` (O(d): no ``d x d`` matrix at any ``d``):
    ``G`` with the off-diagonal of :math:`(1-t)^2 \sum_i c_i y_i y_i^\top` dropped, i.e. :math:`(1-t)^2 \mathrm{diag}(b) + c_0 11^\top + t(1-t)(1 b^\top + b 1^\top)` with
    :math:`b_x = \sum_{i: y_{ix} = 1} c_i` and :math:`c_0 = t^2 \sum_i c_i` (exact diagonal and exact
    all-items part; on 001's census data its condition number relative to ``G`` is 2-5 where the subsample's
    reaches 1e4 at eps = 10). ``M.rows`` keeps every report's :math:`s_i = \sum_{x \in y_i} p_x` from the model's
    pass; ``hvp(p, v, M)`` (``M`` the model at the same ``p``) then gathers only ``v``: conjugate gradients'
    products cost one table gather instead of two.
    ``model(p, rows)`` takes those :math:`s_i` at ``p`` where the caller has them (``_em_newton.RowPasses``): a
    column pass without a gather. ``cols`` (``bool[d]``, both): the items whose entries the caller reads (Newton's
    free items for products; those not bound whatever the model says for the model); others may come back 0, and
    the column layout then skips their entries."""

    def hvp(p, v, model_at_p=None, cols=None):
        total, vtotal = jnp.sum(p), jnp.sum(v)

        def product(s, sv, w):
            c, t2c, tc = _curvature(t, total, s, w)
            # c_i (L_i . v) with L_i . v = t (sum v - sv_i) + sv_i; the all-items part t c_i (L_i . v)
            return c * (t * (vtotal - sv) + sv), t2c * (vtotal - sv) + tc * sv, jnp.zeros((), p.dtype)

        if isinstance(model_at_p, _em_newton.LowRank) and model_at_p.rows is not None:
            col, a, _ = run((v,), lambda ss, w, s: product(s.astype(v.dtype), ss[0], w), rows=model_at_p.rows,
                            cols=cols)
        else:
            col, a, _ = run((p, v), lambda ss, w: product(ss[0], ss[1], w), cols=cols)
        return a + (1.0 - t) * col

    def model(p, rows=None, cols=None):
        total = jnp.sum(p)

        def terms(ss, w, r=None):
            c, t2c, _ = _curvature(t, total, ss[0] if r is None else r.astype(p.dtype), w)
            return c, t2c, jnp.zeros((), p.dtype)

        if rows is None:
            b, c0, _, rows = run((p,), terms, keep_rows=True, cols=cols)
        else:  # s_i at p given (``_em_newton.RowPasses``): a column pass only
            b, c0, _ = run((), terms, rows=rows, cols=cols)
        return _em_newton.LowRank((1.0 - t) ** 2 * b, c0, t * (1.0 - t) * b, rows)

    return hvp, model
