r"""Non-pure GLUTF aggregation (003 eqs 30-31), checked against exact channels (tests/mechanisms/transform/test_nonpure_uldp.py).

Eq 30 is unbiased (Theorem 7) for either choice of f (eq 9 or eq 10). Eq 31 is exact on ``X_N`` but drops a
covariance on ``X_S``: the exact fixed-model variance exceeds it by ``nonpure_covariance_gap``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def nonpure_estimate(stats: Any, n: Any, p_star: Any, q_star: Any, f: Any, z: Any, sensitive_mask: Any) -> jax.Array:
    r"""003 eq 30 from the ``int[..., d + 1]`` statistic of ``GLUTF.eq30_stats``.

    :math:`\hat c_x = Agg(Y') - \frac{f(1-z)}{s}\theta'` on ``X_S`` and :math:`C_x/(n(1-f))` on ``X_N``, with
    :math:`\theta' = \sum_{x \in X_N} \hat c_x`. ``Y'`` are the protected-only reports; ``Agg`` is the base's
    unbiased estimator applied to them and normalised by all ``n`` users,
    :math:`Agg(Y')_x = (C'_x - |Y'| q^*)/(n(p^*-q^*))` (003 leaves the normalisation implicit; this one makes
    eq 30 unbiased, Theorem 7, for eq 9's or eq 10's f).

    Args:
      stats: ``[..., d + 1]``: ``C'_x`` (base support counts over ``Y'``) at sensitive ``x``, counts of ``x``
        alone at non-sensitive ``x``, and ``|Y'|`` last.
      n: number of users.
      p_star, q_star: the base's pure probabilities.
      f, z: GLUTF's parameters.
      sensitive_mask: ``bool[d]``.
    """
    stats = jnp.asarray(stats)
    counts, m = stats[..., :-1] / n, stats[..., -1:] / n
    s = jnp.sum(sensitive_mask)
    theta = jnp.sum(jnp.where(sensitive_mask, 0.0, counts), axis=-1, keepdims=True) / (1.0 - f)
    agg = (counts - m * q_star) / (p_star - q_star)
    return jnp.where(sensitive_mask, agg - f * (1.0 - z) / s * theta, counts / (1.0 - f))


def nonpure_variance_eq31(ua: Any, c: Any, n: Any, f: Any, z: Any, sensitive_mask: Any) -> jax.Array:
    r"""003 eq 31 as published: :math:`UA + f^3(1-z)^2\theta/(ns^2(1-f))` on ``X_S``, :math:`c_x f/(n(1-f))` on ``X_N``.

    ``ua`` is the variance of ``Agg(Y')``. Checked against exact channels (tests/mechanisms/transform): the ``X_N`` part is
    exact (fixed model); the ``X_S`` part ignores the covariance of ``Agg(Y')`` and ``theta'`` (a user's report
    is either in ``Y'`` or ``x`` alone, never both), so the exact variance is larger by
    ``nonpure_covariance_gap``. 003 itself calls eq 31 approximate.
    """
    c = jnp.asarray(c)
    s = jnp.sum(sensitive_mask)
    theta = jnp.sum(jnp.where(sensitive_mask, 0.0, c))
    sens = ua + f**3 * (1.0 - z) ** 2 * theta / (n * s**2 * (1.0 - f))
    return jnp.where(sensitive_mask, sens, c * f / (n * (1.0 - f)))


def nonpure_covariance_gap(theta_n: Any, n: Any, f: Any, z: Any, s: Any) -> jax.Array:
    r"""Exact variance of eq 30 minus eq 31 on each sensitive item (fixed model): :math:`2 f^2(1-z)^2\theta_N/(n s^2)`.

    Derivation: :math:`Cov(Agg(Y')_x, \theta') = -\theta_N f(1-z)/(ns)` because each non-sensitive user's
    report falls in ``Y'`` or is ``x`` alone, exclusively; eq 31 drops :math:`-2\frac{f(1-z)}{s}Cov`.
    """
    return 2.0 * f**2 * (1.0 - z) ** 2 * theta_n / (n * s**2)
