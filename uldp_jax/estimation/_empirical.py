"""The empirical (matrix-inversion) estimator, 001 eq (3), from aggregate statistics."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.estimation import _registry


def empirical(mech: Any, stats: jax.Array, n: Any) -> jax.Array:
    r"""Unbiased empirical estimate :math:`\hat p_j = (c_j / n - b_j) / a_j` (001 eq 3).

    Calls ``mech.debias``: the closed-form inverse ``support_affine`` (GRR, RAPPOR/UE, uRR, uRAP, ...), a
    mechanism's own fast inverse (Hadamard response), or by default the exact inverse of its channel. May be negative; see ``emp+thr`` and the
    post-processing methods for projections onto the simplex.

    Args:
      mech: the mechanism that produced the reports.
      stats: ``int32[num_stats]`` aggregate of ``n`` reports.
      n: number of reports (scalar).

    Returns:
      ``float[d]`` estimate of the input distribution.
    """
    return mech.debias(stats, n)


def empirical_variance(mech: Any, p: jax.Array, n: Any) -> jax.Array:
    r"""Per-item variance of ``empirical`` in the iid model: :math:`f_j(1-f_j)/(n a_j^2)`, :math:`f = a p + b`."""
    return mech.debias_variance(p, n)


def channel_inverse(Q: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Generic fallback for item-report mechanisms: least-squares solution of ``p Q = counts / n`` (float64).

    For a square invertible ``Q`` this is exactly 001 eq (3), ``p = m Q^{-1}``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    m_hat = counts / counts.sum()
    sol, *_ = np.linalg.lstsq(np.asarray(Q, np.float64).T, m_hat, rcond=None)
    return sol


_registry.register_method("emp", empirical, "stats", "Empirical estimation (001 eq 3).")
