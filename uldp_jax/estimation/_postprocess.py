r"""Post-processing of frequency estimates onto (or towards) the probability simplex.

All functions are pure, act on the last axis (``float[..., d]``) and compose with ``jit``/``vmap``. Each is also
registered as a "stats" estimation method that post-processes the empirical estimate ("emp"):
``"clip"``, ``"norm-sub"``, ``"project"``, ``"base-cut"``.

References:
  Wang, Lopuhaä-Zwakenberg, Li, Skoric, Li, "Locally differentially private frequency estimation with
  consistency" (NDSS 2020) — Norm-Sub and Base-Cut; Duchi, Shalev-Shwartz, Singer, Chandra (ICML 2008) —
  sort-based Euclidean projection onto the simplex.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax.estimation import _empirical, _registry, _threshold


def clip(p_hat: jax.Array) -> jax.Array:
    """Clips negative entries to 0 and renormalises to sum 1 (uniform if nothing is positive)."""
    p_hat = jnp.asarray(p_hat)
    pos = jnp.maximum(p_hat, 0.0)
    total = jnp.sum(pos, axis=-1, keepdims=True)
    uniform = jnp.full_like(pos, 1.0 / p_hat.shape[-1])
    return jnp.where(total > 0, pos / jnp.where(total > 0, total, 1.0), uniform)


def _norm_sub_1d(x: jax.Array) -> jax.Array:
    d = x.shape[0]

    def shifted(mask):
        delta = (1.0 - jnp.sum(jnp.where(mask, x, 0.0))) / jnp.maximum(jnp.sum(mask), 1)
        return jnp.where(mask, x + delta, 0.0)

    def cond(state):
        return state[1]

    def body(state):
        mask, _ = state
        new = mask & (shifted(mask) > 0)
        return new, jnp.any(new != mask)

    mask0 = x > 0
    mask, _ = jax.lax.while_loop(cond, body, (mask0, jnp.any(mask0)))
    return jnp.where(jnp.any(mask), shifted(mask), jnp.full_like(x, 1.0 / d))


def norm_sub(p_hat: jax.Array) -> jax.Array:
    r"""Norm-Sub (Wang et al. 2020): zero the negatives, shift the positives by a common amount, repeat.

    Starting from ``K = {j : p_hat_j > 0}``, repeatedly sets :math:`\delta = (1 - \sum_K \hat p_j)/|K|`, zeroes
    the items outside ``K`` and removes from ``K`` the items with :math:`\hat p_j + \delta \le 0`, until ``K``
    stops changing (at most ``d`` rounds). The result is :math:`\hat p_j + \delta` on ``K`` and 0 elsewhere:
    non-negative, summing to 1, every kept entry shifted by the same :math:`\delta`. When the positive part
    sums to at least 1 (:math:`\delta \le 0`) this equals the Euclidean projection onto the simplex
    (``project``). If no entry is positive the result is uniform.
    """
    p_hat = jnp.asarray(p_hat)
    fn = _norm_sub_1d
    for _ in range(p_hat.ndim - 1):
        fn = jax.vmap(fn)
    return fn(p_hat)


def project(p_hat: jax.Array) -> jax.Array:
    r"""Euclidean projection onto the probability simplex (sort-based, :math:`O(d \log d)`).

    Returns :math:`\max(\hat p - \tau, 0)` with :math:`\tau` chosen so that the result sums to 1
    (Duchi et al. 2008).
    """
    p_hat = jnp.asarray(p_hat)
    d = p_hat.shape[-1]
    u = -jnp.sort(-p_hat, axis=-1)  # descending
    css = jnp.cumsum(u, axis=-1) - 1.0
    k = jnp.arange(1, d + 1, dtype=p_hat.dtype)
    cond = u - css / k > 0
    rho = jnp.sum(cond, axis=-1, keepdims=True)  # >= 1 always (the largest entry satisfies it)
    tau = jnp.take_along_axis(css, rho - 1, axis=-1) / rho.astype(p_hat.dtype)
    return jnp.maximum(p_hat - tau, 0.0)


def base_cut(p_hat: jax.Array, thr: jax.Array) -> jax.Array:
    r"""Base-Cut (Wang et al. 2020): zero every estimate not above its significance threshold.

    Exact definition used here: :math:`\hat p_j` if :math:`\hat p_j > T_j`, else 0, with :math:`T_j` the
    Bonferroni threshold of ``significance_threshold`` (level ``alpha``, null variance). The kept entries are
    not changed, so the output is non-negative but its sum is not forced to 1 (as in Wang et al. 2020, where
    Base-Cut does not renormalise); use "emp+thr" for the variant that spreads the remainder uniformly.
    """
    p_hat = jnp.asarray(p_hat)
    return jnp.where(p_hat > thr, p_hat, 0.0)


def _clip_method(mech: Any, stats: jax.Array, n: Any) -> jax.Array:
    return clip(_empirical.empirical(mech, stats, n))


def _norm_sub_method(mech: Any, stats: jax.Array, n: Any) -> jax.Array:
    return norm_sub(_empirical.empirical(mech, stats, n))


def _project_method(mech: Any, stats: jax.Array, n: Any) -> jax.Array:
    return project(_empirical.empirical(mech, stats, n))


def _base_cut_method(mech: Any, stats: jax.Array, n: Any, alpha: Any = 0.05) -> jax.Array:
    alpha = _threshold.check_alpha(alpha)
    p_hat = _empirical.empirical(mech, stats, n)
    return base_cut(p_hat, _threshold.significance_threshold(mech, n, alpha))


_registry.register_method("clip", _clip_method, "stats", "Empirical estimate clipped at 0 and renormalised.")
_registry.register_method("norm-sub", _norm_sub_method, "stats", "Empirical estimate + Norm-Sub (Wang et al. 2020).")
_registry.register_method("project", _project_method, "stats", "Empirical estimate projected onto the simplex.")
_registry.register_method(
    "base-cut", _base_cut_method, "stats",
    "Empirical estimate with entries below the Bonferroni threshold set to 0 (Wang et al. 2020; not renormalised).")
