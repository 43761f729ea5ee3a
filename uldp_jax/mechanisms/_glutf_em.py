r"""Exact-likelihood EM for pure LDP bases (SS, OLH, Wheel, GRR, UE) and their GLUTF mechanisms.

Every pure base here has a report likelihood of "support-ratio" form: for a report ``y`` with support
``S(y)``, :math:`P(y|x) = C(y)\,(t + (1-t)\,1[x \in S(y)])` with :math:`t = e^{-\varepsilon}` (OLH per fixed
hash, SS, Wheel's density, GRR, UE). For GLUTF (003 Alg. 1) a protected-only report has, up to the same
``C(y)``, likelihood :math:`t + (1-t) 1[x \in S(y)]` for sensitive ``x`` and
:math:`f(1-z)\,(t + (1-t)\,k(y)/s)` for every non-sensitive ``x`` (``k(y) = |S(y) \cap X_S|``); an invertible
report (``x`` alone or paired) comes from its ``x`` only. EM for the mixture weights ``p`` is then

.. math:: p'_x = \frac{1}{n}\Big(\sum_{i \in Y'} \frac{p_x L_{ix}}{\sum_u p_u L_{iu}} + N_x\Big),

where ``N_x`` counts the invertible reports of ``x``: the exact MLE on the simplex (a fixed point of EM),
from ``O(n d)`` per-report support indicators built on device.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax.estimation import _registry
from uldp_jax.mechanisms import _glutf_core


def report_support(base: Any, ys: Any) -> jax.Array:
    """``bool[n, s]``: the base items each base report supports."""
    if hasattr(base, "support"):
        return base.support(ys)
    if base.report_kind == "bits":
        return jnp.asarray(ys, bool)
    return jnp.asarray(ys)[:, None] == jnp.arange(base.d)


def likelihood_terms(mech: Any, ys: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(L float[n, d], w float[n], N float[d])``: likelihood factors of the product part, its 0/1 weights,
    and the invertible counts."""
    t = jnp.exp(-jnp.asarray(mech.eps))
    if not isinstance(mech, _glutf_core.GLUTFMixin):
        sup = report_support(mech, ys)
        L = t + (1.0 - t) * sup
        return L, jnp.ones(L.shape[0], L.dtype), jnp.zeros(mech.d, L.dtype)
    sup = report_support(mech.base, ys.base)  # [n, s]
    k = jnp.sum(sup, axis=1)
    L_s = t + (1.0 - t) * sup
    L_n = mech.f_protected() * (t + (1.0 - t) * k / mech.s)
    L = jnp.broadcast_to(L_n[:, None], (L_s.shape[0], mech.d)).astype(L_s.dtype)
    L = L.at[:, jnp.asarray(mech.sensitive, jnp.int32)].set(L_s)
    protected = ys.has_base & (ys.item < 0)
    item = jnp.where(ys.item >= 0, ys.item, 0)
    N = jnp.zeros(mech.d, L.dtype).at[item].add((ys.item >= 0).astype(L.dtype))
    return L, protected.astype(L.dtype), N


PURE_BASES = ("SS", "OLH", "Wheel", "GRR", "UE", "RAPPOR")


def supports(mech: Any) -> bool:
    """Whether ``em_pure`` has the exact likelihood of ``mech``'s reports."""
    return isinstance(mech, _glutf_core.GLUTFMixin) or type(mech).__name__ in PURE_BASES


def em_pure(mech: Any, ys: Any, *, max_iters: int = 2000, tol: float = 1e-10, init: Any = None) -> jax.Array:
    """Exact-likelihood EM (MLE on the simplex) from reports of a pure base or a pure GLUTF mechanism.

    Args:
      mech: SS, OLH, Wheel, GRR, UE/RAPPOR, or a GLUTF mechanism (``USS``, ``UUE``, ``ULH``, ``UWheel``,
        ``glutf(...)``, either rule: the likelihood does not depend on how f was chosen).
      ys: the reports (``ul.perturb``), leading axis = users.
      max_iters: iteration cap (``lax.while_loop``).
      tol: stop when the l1 change of ``p`` falls below ``tol``.
      init: optional start ``float[d]`` (default uniform).

    Returns:
      ``float[d]`` estimate on the simplex.
    """
    if not supports(mech):
        raise ValueError(f"em-pure supports SS, OLH, Wheel, GRR, UE/RAPPOR and GLUTF mechanisms, got "
                         f"mech={type(mech).__name__}; use method='em'.")
    L, w, N = likelihood_terms(mech, ys)
    n = jnp.sum(w) + jnp.sum(N)
    p0 = jnp.full((mech.d,), 1.0 / mech.d, L.dtype) if init is None else jnp.asarray(init, L.dtype)

    def update(p):
        D = L @ p
        r = jnp.where(w > 0, w / jnp.where(D > 0, D, 1.0), 0.0)
        return (p * (r @ L) + N) / n

    def cond(c):
        i, _, delta = c
        return (i < max_iters) & (delta > tol)

    def body(c):
        i, p, _ = c
        p_new = update(p)
        return i + 1, p_new, jnp.sum(jnp.abs(p_new - p))

    _, p, _ = jax.lax.while_loop(cond, body, (0, p0, jnp.asarray(jnp.inf, L.dtype)))
    return p


def _em_pure_method(mech: Any, ys: Any, **options: Any) -> jax.Array:
    return em_pure(mech, ys, **options)


_registry.register_method(
    "em-pure", _em_pure_method, "reports",
    "Exact-likelihood EM for pure bases (SS, OLH, Wheel, GRR, UE) and GLUTF mechanisms (uSS, uUE, uLH, uWheel).")
