"""Empirical estimation with a significance threshold ("emp+thr", 001 §2.5/§6.1; Wang et al. 2017)."""

from __future__ import annotations

import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _empirical, _registry
from uldp_jax.mechanisms.core import affine


def check_alpha(alpha: Any) -> Any:
    """Validates a significance level ``alpha`` in (0, 1) (concrete values only)."""
    if not _validate.is_concrete(alpha):
        return alpha
    if isinstance(alpha, bool) or not isinstance(alpha, (numbers.Real, np.ndarray, jax.Array)):
        raise TypeError(f"Expected alpha={alpha!r} to be a real number in (0, 1).")
    a = np.asarray(alpha, dtype=np.float64)
    if a.ndim != 0 or not np.isfinite(a) or not 0.0 < float(a) < 1.0:
        raise ValueError(f"Expected alpha={alpha!r} in (0, 1).")
    return alpha


def significance_threshold(mech: Any, n: Any, alpha: Any = 0.05) -> jax.Array:
    r"""Per-item Bonferroni significance threshold of the empirical estimate.

    :math:`T_j = z_{1-\alpha/d}\,\sigma_j` where :math:`\sigma_j^2` is the iid-model variance of the empirical
    estimate of item ``j`` under the null hypothesis :math:`p_j = 0` (``empirical_variance`` at ``p = 0``:
    :math:`b_j(1-b_j)/(n a_j^2)`), as in Wang et al. (2017) who use the variance at :math:`p_j = 0`. Items
    whose reports are invertible under the null (uRR/uRAP non-sensitive items, :math:`b_j = 0`) get
    :math:`T_j = 0`: any positive estimate is significant.

    Args:
      mech: the mechanism.
      n: number of reports.
      alpha: family-wise significance level in (0, 1) (Bonferroni over the ``d`` items).

    Returns:
      ``float[d]`` thresholds.
    """
    alpha = check_alpha(alpha)
    d = mech.d
    # Mechanisms with their own ``estimator().debias`` (Hadamard response family) have no affine form.
    form = affine(mech)
    dtype = jnp.zeros(()).dtype if form is None else form[0].dtype
    var0 = _empirical.empirical_variance(mech, jnp.zeros((d,), dtype), n)
    z = jax.scipy.special.ndtri(1.0 - jnp.asarray(alpha, dtype) / d)
    return z * jnp.sqrt(jnp.maximum(var0, 0.0))


def apply_threshold(p_hat: jax.Array, thr: jax.Array) -> jax.Array:
    """Keeps ``p_hat > thr`` and spreads the remaining mass uniformly over the other items (001 §6.1).

    Exact definition: ``K = {j : p_hat_j > thr_j}``; kept entries are unchanged and every item outside ``K``
    gets ``max(1 - sum_K p_hat, 0) / |K^c|``. If the kept mass exceeds 1 (or every item is kept), the kept
    entries are rescaled to sum to 1 (and the others get 0); if nothing is kept the result is uniform. The output is always on the simplex.
    """
    keep = p_hat > thr
    kept = jnp.where(keep, p_hat, 0.0)
    mass = jnp.sum(kept, axis=-1, keepdims=True)
    num_rest = jnp.sum(~keep, axis=-1, keepdims=True)
    rest = jnp.maximum(1.0 - mass, 0.0) / jnp.maximum(num_rest, 1)
    rescale = (mass > 1.0) | (num_rest == 0)
    scale = jnp.where(rescale, 1.0 / jnp.where(mass > 0, mass, 1.0), 1.0)
    return jnp.where(keep, kept * scale, rest)


def empirical_threshold(mech: Any, stats: jax.Array, n: Any, alpha: Any = 0.05) -> jax.Array:
    r"""The "emp+thr" estimator: empirical estimate, Bonferroni significance threshold, uniform remainder.

    Keeps the empirical estimates above :math:`z_{1-\alpha/d}\sigma_j` (``significance_threshold``) and assigns
    the remaining probability uniformly to the items below it, as 001 §6.1 does following Wang et al. (2017)
    (see ``apply_threshold`` for the exact rule). Pure; vmaps over repetitions.

    Args:
      mech: the mechanism that produced the reports.
      stats: ``int32[num_stats]`` aggregate statistic.
      n: number of reports.
      alpha: significance level in (0, 1), default 0.05.

    Returns:
      ``float[d]`` estimate on the probability simplex.

    Raises:
      ValueError: if ``alpha`` is not in (0, 1).

    References:
      Wang, Blocki, Li, Jha, "Locally differentially private protocols for frequency estimation" (USENIX
      Security 2017); Murakami & Kawamoto (2019) §6.1.
    """
    alpha = check_alpha(alpha)
    p_hat = _empirical.empirical(mech, stats, n)
    return apply_threshold(p_hat, significance_threshold(mech, n, alpha))


_registry.register_method(
    "emp+thr", empirical_threshold, "stats",
    "Empirical estimate with a Bonferroni significance threshold, remainder spread uniformly (001 §6.1).")
