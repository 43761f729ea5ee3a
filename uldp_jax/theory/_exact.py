"""Exact risk of the empirical estimator from a mechanism's exact channel (float64 NumPy, no closed forms).

Every linear mechanism of the library reports a per-item *support* statistic: user ``i`` adds
``supp_j(y_i) in {0, 1}`` to ``stats_j`` (items: ``y == j``; bit vectors: bit ``j``; hashed or set-valued reports:
the mechanism's ``support_matrix()``). With ``F[x, j] = sum_y Q(y|x) supp_j(y)`` the support probability of item
``j`` for input ``x``, an unbiased affine estimator needs ``F[x, j] = a_j [x == j] + b_j``; then
``p_hat_j = (stats_j / n - b_j) / a_j`` and, as each user adds an independent Bernoulli(F[x_i, j]):

* fixed model (``n p(x)`` users hold ``x``): ``Var(p_hat_j) = sum_x p(x) F[x, j](1 - F[x, j]) / (n a_j^2)``;
* iid model (``x_i ~ p``): ``Var(p_hat_j) = f_j (1 - f_j) / (n a_j^2)`` with ``f_j = sum_x p(x) F[x, j]``.

``a`` and ``b`` are read off ``F`` (never from ``support_affine``), so these numbers check the closed forms in
``uldp_jax.theory`` independently.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms import _base
from uldp_jax.privacy import _channel

MODELS = ("iid", "fixed")


class SupportMoments(NamedTuple):
    """Support structure of a channel.

    Attributes:
      F: float64 ``[d, d]``; ``F[x, j]`` = P(report supports item ``j`` | input ``x``).
      a: float64 ``[d]``; ``F[j, j] - b_j`` (the estimator's scale).
      b: float64 ``[d]``; the common off-diagonal support probability of item ``j``.
    """

    F: np.ndarray
    a: np.ndarray
    b: np.ndarray


def check_model(model: Any) -> str:
    if model not in MODELS:
        raise ValueError(f"Expected model={model!r} to be one of {MODELS}.")
    return model


def support_matrix(mech: Any) -> np.ndarray:
    """float64 ``[m, d]``: ``S[y, j] = 1`` when report ``y`` supports item ``j`` (columns of ``ul.channel``).

    Uses ``mech.support_matrix()`` when the mechanism defines one; otherwise derives it from ``report_kind``
    (``"item"``: report ``y`` supports item ``y``; ``"bits"``: report ``y`` supports the items of its set bits).

    Raises:
      TypeError: if the mechanism's report structure has no per-item support.
    """
    if hasattr(mech, "support_matrix"):
        return np.asarray(mech.support_matrix(), dtype=np.float64)
    kind = getattr(mech, "report_kind", None)
    m, d = int(mech.num_outputs), int(mech.d)
    if kind == "item":
        S = np.zeros((m, d))
        k = min(m, d)
        S[np.arange(k), np.arange(k)] = 1.0
        return S
    if kind == "bits":
        nbits = int(round(np.log2(m)))
        if 2**nbits != m or nbits != int(mech.num_stats):
            raise TypeError(f"{type(mech).__name__}: bit reports with {m} outputs do not map to {d} items.")
        return _base.bits_table(nbits)[:, :d].astype(np.float64)
    raise TypeError(
        f"Expected mech with item or bit reports or a support_matrix() method, got {type(mech).__name__} "
        f"with report_kind={kind!r}.")


def support_moments(mech: Any, rtol: float = 1e-9) -> SupportMoments:
    """Support probabilities ``F`` of ``mech`` and the affine map ``(a, b)`` of its unbiased estimator.

    Raises:
      ValueError: if some item's off-diagonal support probabilities differ (no unbiased per-item estimator).
    """
    Q, _ = _channel.channel(mech)
    F = Q @ support_matrix(mech)
    d = F.shape[0]
    off = ~np.eye(d, dtype=bool)
    hi = np.where(off, F, -np.inf).max(axis=0)
    lo = np.where(off, F, np.inf).min(axis=0)
    if np.any(hi - lo > rtol * np.maximum(hi, 1e-300) + 1e-15):
        j = int(np.argmax(hi - lo))
        raise ValueError(
            f"{type(mech).__name__}: item {j} is supported with probabilities in [{lo[j]:.6g}, {hi[j]:.6g}] by "
            "different other inputs; the per-item empirical estimator is biased.")
    b = 0.5 * (hi + lo)
    a = np.diag(F) - b
    return SupportMoments(F, a, b)


def exact_item_variance(mech: Any, p: Any, n: Any, model: str = "iid") -> np.ndarray:
    """float64 ``[d]``: exact ``Var(p_hat_j)`` of the empirical estimator, from the channel."""
    check_model(model)
    p = _validate.check_distribution("p", p, mech.d)
    n = _check_n(n)
    F, a, _ = support_moments(mech)
    if model == "iid":
        f = p @ F
        num = f * (1.0 - f)
    else:
        num = p @ (F * (1.0 - F))
    return num / (n * a**2)


def exact_mse(mech: Any, p: Any, n: Any, model: str = "iid") -> float:
    """Exact expected squared l2 loss ``sum_j E (p_hat_j - p_j)^2`` of the empirical estimator (float64).

    Computed from the exact channel (``ul.channel``) and the report support structure, independently of the
    closed forms in ``ul.theory.mse``; units are the same (a sum over items, 001's ``E l_2^2``).

    Args:
      mech: a mechanism with an exact channel (small domain).
      p: ``float[d]`` true distribution.
      n: number of users (> 0; may be a float).
      model: ``"iid"`` (x_i ~ p, 001) or ``"fixed"`` (n p(x) users hold x, 003).

    Returns:
      A Python float.
    """
    return float(np.sum(exact_item_variance(mech, p, n, model)))


def _check_n(n: Any) -> float:
    if isinstance(n, bool) or not np.isscalar(n) and np.ndim(n) != 0:
        raise TypeError(f"Expected n={n!r} to be a positive number.")
    try:
        val = float(n)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Expected n={n!r} to be a positive number.") from e
    if not np.isfinite(val) or val <= 0:
        raise ValueError(f"Expected n={n!r} > 0.")
    return val
