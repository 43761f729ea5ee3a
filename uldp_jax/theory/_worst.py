"""The exact worst case over the simplex of an unbiased linear estimator's squared l2 risk (float64 NumPy).

For an unbiased estimator affine in the report histogram, one user adds ``G[y] = W[y] + c`` (``estimator_matrix``)
and ``n * MSE(p) = sum_x p_x m_x - |p|^2`` in the iid model, with ``m_x = Q[x] @ |G|^2``. This concave quadratic
is largest at the Euclidean projection of ``m / 2`` onto the simplex, so the worst case is exact, not searched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from uldp_jax.privacy import channel
from uldp_jax.theory._exact import estimator_matrix


def project_simplex(y: np.ndarray) -> np.ndarray:
    """The Euclidean projection of ``y float64[d]`` onto the probability simplex (sort and threshold)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.flatnonzero(u - css / np.arange(1, y.size + 1) > 0)[-1]
    return np.maximum(y - css[rho] / (rho + 1.0), 0.0)


def exact_worst_mse(mech: Any, n: Any = 1.0) -> tuple[float, np.ndarray]:
    """``(max_p MSE(p), argmax p)``: the worst case over every distribution ``p`` of the exact iid squared l2 risk
    of ``mech``'s empirical estimator for ``n`` users (``n = 1``: ``n`` times the risk), from its exact channel.

    Raises:
      ValueError: if the estimator is biased on the exact channel (the quadratic form above needs unbiasedness).
    """
    Q, _ = channel(mech)
    W, c = estimator_matrix(mech)
    G = W + c[None, :]
    if np.max(np.abs(Q @ G - np.eye(Q.shape[0], G.shape[1]))) > 1e-8:
        raise ValueError(f"{type(mech).__name__}: the estimator is biased on its exact channel; no worst case here.")
    m = Q @ np.sum(G**2, axis=1)
    p = project_simplex(m / 2.0)
    return float((m @ p - p @ p) / float(n)), p
