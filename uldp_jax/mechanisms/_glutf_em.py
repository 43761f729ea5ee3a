r"""Exact-likelihood EM for pure LDP bases (SS, OLH, Wheel, GRR, UE) and their GLUTF mechanisms.

Every pure base here has a report likelihood of "support-ratio" form: for a report ``y`` with support
``S(y)``, :math:`P(y|x) = C(y)\,(t + (1-t)\,1[x \in S(y)])` with :math:`t = e^{-\varepsilon}` (OLH per fixed
hash, SS, Wheel's density, GRR, UE). For GLUTF (003 Alg. 1) a protected-only report has, up to the same
``C(y)``, likelihood :math:`t + (1-t) 1[x \in S(y)]` for sensitive ``x`` and
:math:`f(1-z)\,(t + (1-t)\,k(y)/s)` for every non-sensitive ``x`` (``k(y) = |S(y) \cap X_S|``); an invertible
report (``x`` alone or paired) comes from its ``x`` only. EM for the mixture weights ``p`` is then

.. math:: p'_x = \frac{1}{n}\Big(\sum_{i \in Y'} \frac{p_x L_{ix}}{\sum_u p_u L_{iu}} + N_x\Big),

where ``N_x`` counts the invertible reports of ``x``: the exact MLE on the simplex (a fixed point of EM),
from ``O(n d)`` per-report support indicators built on device. The mechanisms offer these terms through the
protocol method ``report_likelihood(ys)``; the EM loop is estimation's one core (``ul.estimation.em``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax.mechanisms import _compact


def report_support(base: Any, ys: Any) -> jax.Array:
    """``bool[n, s]``: the base items each base report supports."""
    if hasattr(base, "support"):
        return base.support(ys)
    if base.report_kind == "bits":
        return jnp.asarray(_compact.to_dense(ys), bool)  # the factors L[n, d] are dense anyway
    return jnp.asarray(ys)[:, None] == jnp.arange(base.d)


def pure_terms(mech: Any, ys: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(L float[n, d], w float[n], N float[d])`` of a pure base: support-ratio factors, all reports weighted.

    A report with an empty support has the factor ``t`` on every item: it is stored as 1 (a row's scale does
    not change EM), so ``t`` underflowing at large eps keeps the report.
    """
    t = jnp.exp(-jnp.asarray(mech.eps))
    sup = report_support(mech, ys)
    empty = ~jnp.any(sup, axis=1, keepdims=True)
    L = jnp.where(empty, 1.0, t + (1.0 - t) * sup)
    return L, jnp.ones(L.shape[0], L.dtype), jnp.zeros(mech.d, L.dtype)


def glutf_terms(mech: Any, ys: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(L float[n, d], w float[n], N float[d])`` of a GLUTF mechanism: likelihood factors of the protected
    reports, their 0/1 weights, and the invertible counts."""
    t = jnp.exp(-jnp.asarray(mech.eps))
    sup = report_support(mech.base, ys.base)  # [n, s]
    k = jnp.sum(sup, axis=1)
    empty = k == 0  # every factor carries t: divided by t (row scales do not change EM; t underflows at eps ~ 87)
    L_s = jnp.where(empty[:, None], 1.0, t + (1.0 - t) * sup)
    L_n = mech.f_protected() * jnp.where(empty, 1.0, t + (1.0 - t) * k / mech.s)
    L = jnp.broadcast_to(L_n[:, None], (L_s.shape[0], mech.d)).astype(L_s.dtype)
    L = L.at[:, jnp.asarray(mech.sensitive, jnp.int32)].set(L_s)
    protected = ys.has_base & (ys.item < 0)
    item = jnp.where(ys.item >= 0, ys.item, 0)
    N = jnp.zeros(mech.d, L.dtype).at[item].add((ys.item >= 0).astype(L.dtype))
    return L, protected.astype(L.dtype), N
