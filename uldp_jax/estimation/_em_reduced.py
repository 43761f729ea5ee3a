r"""Projected Newton in ``s + 1`` coordinates where ``d - s`` items share one likelihood column.

Under 001's and 003's utility-optimized mechanisms (uRAP's bit vectors, GLUTF's support ratios) every report
that is not *invertible* gives each non-sensitive item the same likelihood: those reports see only the items'
total ``T``. Given ``T``, the invertible part :math:`\sum_x N_x \log p_x` of the log-likelihood is largest at
:math:`p_x = T N_x / N` (uniform if :math:`N = 0`), so the MLE has that form: the problem is exactly one in the
``s`` items and ``T``. Newton on the full ``d`` would face an exactly singular block there (float32 noise made
every ULH step fail; uRAP at eps = 0.1 on 001's 8-attribute census handed over to thousands of SQUAREM cycles).

With :math:`p = A u` (``expand``; ``A`` linear: the identity on the items, the shares on the others), the reduced
gradient, Hessian products and preconditioner are :math:`A^\top` of the full ones; since the full gradient (of the
reports) and every column of the Hessian are equal on the other items and the shares sum to 1, :math:`A^\top g`
is ``pick(g)``: the items' entries, then any other item's.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from uldp_jax.estimation import _em_core, _em_newton


class Reduced(NamedTuple):
    """The map between the ``s + 1`` coordinates (the items, then the others' total ``T``; no ``T`` when ``s = d``)
    and the full ``d``."""

    items: jax.Array  # int[s]
    share: jax.Array  # float[d]: each other item's share of T (0 on the items)

    def expand(self, u: jax.Array) -> jax.Array:
        s = self.items.shape[0]
        p = self.share * (u[s] if u.shape[0] > s else 0.0)
        return p.at[self.items].set(u[:s])

    def reduce(self, p: jax.Array) -> jax.Array:
        s, d = self.items.shape[0], p.shape[0]
        head = p[self.items]
        return head if s == d else jnp.append(head, jnp.sum(p) - jnp.sum(head))

    def expand_mask(self, mask: jax.Array | None) -> jax.Array | None:
        """A ``bool`` mask in ``u``'s coordinates -> ``bool[d]`` (the others take the total's entry)."""
        if mask is None:
            return None
        s, d = self.items.shape[0], self.share.shape[0]
        rest = jnp.full((d,), mask[s] if mask.shape[0] > s else False)
        return rest.at[self.items].set(mask[:s])

    def pick(self, v: jax.Array) -> jax.Array:
        """A per-item vector whose other items are all equal (the gradient, a Hessian product) in ``u``'s
        coordinates."""
        s, d = self.items.shape[0], v.shape[0]
        head = v[self.items]
        if s == d:
            return head
        other = jnp.argmax(self.share)  # any other item: their entries are equal
        return jnp.append(head, v[other])


def reduced(items: jax.Array, inverted: jax.Array, d: int, dtype: Any) -> tuple[Reduced, jax.Array]:
    """``(Reduced, invertible counts in its coordinates)`` for the product ``items`` of a ``d``-item problem."""
    inv = inverted.astype(dtype)
    mask = jnp.ones(d, bool).at[items].set(False)
    rest = jnp.sum(jnp.where(mask, inv, 0.0))
    uniform = 1.0 / max(d - items.shape[0], 1)
    share = jnp.where(mask, jnp.where(rest > 0, inv / jnp.where(rest > 0, rest, 1.0), uniform), 0.0)
    inv_r = inv[items] if items.shape[0] == d else jnp.append(inv[items], rest)
    return Reduced(items, share), inv_r


def solve(grad: _em_newton.Grad, gram: _em_newton.Gram | None, gain: _em_core.Gain, items: jax.Array,
          inverted: jax.Array, n: Any, p0: jax.Array, tol: Any, max_iters: int,
          hessian: tuple[_em_newton.Hvp, _em_newton.Model] | None = None,
          gap_tol: Any = None, rows: _em_newton.RowPasses | None = None) -> tuple[jax.Array, _em_core.EMInfo]:
    """``_em_newton.solve`` (Newton, SQUAREM past it) on the reduced problem, expanded to ``d``.

    ``grad``, ``gram``, ``gain``, ``hessian`` and ``rows`` are the full problem's (functions of a ``float[d]`` point);
    ``EMInfo.loglik`` is the full ``p``'s (the reduced one plus :math:`\\sum_x N_x \\log(\\text{share}_x)/n`)."""
    d, dt = p0.shape[-1], p0.dtype
    red, inv_r = reduced(items, inverted, d, dt)

    def grad_r(u):
        g, lsum = grad(red.expand(u))
        return red.pick(g), lsum

    gram_r = None if gram is None else (lambda u: gram(red.expand(u)))
    gain_r = lambda ua, ub: gain(red.expand(ua), red.expand(ub))  # noqa: E731
    hessian_r = None
    if hessian is not None:
        hvp, model = hessian

        def model_r(u, r=None, cols=None):
            m = model(red.expand(u), r, red.expand_mask(cols))  # r: the reports' s_i at u where known
            if not isinstance(m, _em_newton.LowRank):
                raise TypeError(f"Expected a LowRank Hessian model, got {type(m).__name__}.")
            # A^T (diag(a) + c0 11^T + u 1^T + 1 u^T) A: a and u vanish on the others (no report's bit is there)
            return _em_newton.LowRank(red.pick(m.a), m.c0, red.pick(m.u), m.rows)  # rows: per report, unchanged

        hessian_r = (lambda u, v, m=None, cols=None: red.pick(hvp(red.expand(u), red.expand(v), m,
                                                                    red.expand_mask(cols))), model_r)
    rows_r = None
    if rows is not None:

        def rows_grad(u, r):
            g, lsum, r = rows.grad(red.expand(u), r)
            return red.pick(g), lsum, r

        rows_r = _em_newton.RowPasses(rows_grad, lambda ua, ub, r: rows.gain(red.expand(ua), red.expand(ub), r))
    update = _em_newton.as_update(grad_r, inv_r, n)
    u, info = _em_newton.solve(grad_r, gram_r, gain_r, update, inv_r, n, red.reduce(p0), tol, max_iters, hessian_r,
                               gap_tol, rows_r)
    inv = inverted.astype(dt)  # the log-likelihood of the full p: add sum_x N_x log(share_x) of the others
    split = jnp.sum(jnp.where((red.share > 0) & (inv > 0), inv * jnp.log(jnp.where(inv > 0, red.share, 1.0)), 0.0))
    return red.expand(u), info._replace(loglik=info.loglik + split / n)
