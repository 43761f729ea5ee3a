"""Exact risk of the empirical estimator from a mechanism's exact channel (float64 NumPy, no closed forms).

Every estimator here is affine in the output histogram ``h`` (``int[m]``, columns of ``ul.channel``):
``p_hat = h @ W / n + c``. Per user, the contribution ``W[y]`` has mean ``Q[x] @ W`` and second moment
``Q[x] @ W**2``, which gives the exact per-item variance in both variance models and the exact bias.

Every linear mechanism of the library reports a per-item *support* statistic: user ``i`` adds
``supp_j(y_i) in {0, 1}`` to ``stats_j`` (items: ``y == j``; bit vectors: bit ``j``; hashed or set-valued reports:
the mechanism's ``support_matrix()``). With ``F[x, j] = sum_y Q(y|x) supp_j(y)`` the support probability of item
``j`` for input ``x``, an unbiased affine estimator needs ``F[x, j] = a_j [x == j] + b_j``; then
``p_hat_j = (stats_j / n - b_j) / a_j`` and, as each user adds an independent Bernoulli(F[x_i, j]):

* fixed model (``n p(x)`` users hold ``x``): ``Var(p_hat_j) = sum_x p(x) F[x, j](1 - F[x, j]) / (n a_j^2)``;
* iid model (``x_i ~ p``): ``Var(p_hat_j) = f_j (1 - f_j) / (n a_j^2)`` with ``f_j = sum_x p(x) F[x, j]``.

``a`` and ``b`` are read off ``F`` (never from ``estimator().affine``), so these numbers check the closed forms in
``uldp_jax.theory`` independently. Mechanisms with their own ``estimator().debias(stats, n)`` whose statistic is the
report histogram (the Hadamard family) use ``W = debias(I_m, 1)`` instead.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _estimation, _records, _report_space
from uldp_jax.privacy import _channel
from uldp_jax.theory._grid import grid_shape, per_point

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


def support_matrix(mech: _base.Mechanism) -> np.ndarray:
    """float64 ``[m, d]``: ``S[y, j] = 1`` when report ``y`` supports item ``j`` (columns of ``ul.channel``).

    Asks the mechanism (``likelihood().support``; its default derives it from ``report_kind``: ``"item"``: report
    ``y`` supports item ``y``; ``"bits"``: the items of its set bits).

    Raises:
      TypeError: if the mechanism's report structure has no per-item support.
    """
    S = _records.likelihood_of(mech).support() if isinstance(mech, _base.Mechanism) else None
    if S is None:
        raise TypeError(
            f"Expected mech with item or bit reports or a likelihood() with support, got {type(mech).__name__}.")
    return np.asarray(S, dtype=np.float64)


def support_moments(mech: _base.Mechanism, rtol: float = 1e-9) -> SupportMoments:
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
            "different other inputs, so the per-item estimator read off the channel is biased. For the risk of "
            "the mechanism's own estimator().affine use ul.theory.exact_mse(mech, p, n, affine='mechanism'); "
            "for a closed form that depends on p or on the instance give closed_form() a Family with "
            "item_nvar=(mech, p) -> float[d] (uldp_jax.mechanisms.core._family).")
    b = 0.5 * (hi + lo)
    a = np.diag(F) - b
    return SupportMoments(F, a, b)


def _uses_debias(mech: Any) -> bool:
    return (_estimation.affine(mech) is None and mech.report_kind == "item"
            and int(_report_space.num_stats(mech)) == int(mech.num_outputs))


def _column_stats(mech: Any) -> np.ndarray | None:
    """``reports().columns()`` as float64 ``[m, stats]`` (a statistic that is neither items nor supports), or None."""
    columns = _report_space.own(mech).columns if _estimation.own_debias(mech) else None
    return None if columns is None else np.asarray(columns(), np.float64)


def estimator_matrix(mech: _base.Mechanism, affine: str = "channel") -> tuple[np.ndarray, np.ndarray]:
    """``(W float64[m, d], c float64[d])`` with ``p_hat = h @ W / n + c`` for the empirical estimator.

    Args:
      mech: a mechanism with an exact channel.
      affine: ``"channel"`` (read ``a, b`` off the channel; requires an unbiased per-item estimator) or
        ``"mechanism"`` (use ``mech.estimator().affine``, e.g. for hash families that are only nearly uniform).
    """
    if affine not in ("channel", "mechanism"):
        raise ValueError(f"Expected affine={affine!r} in ('channel', 'mechanism').")
    columns = _column_stats(mech)
    if _uses_debias(mech) or columns is not None:
        import jax

        with jax.enable_x64(True):
            k = int(mech.num_outputs) if columns is None else columns.shape[1]
            mech64 = jax.tree_util.tree_map(lambda v: np.asarray(v, np.float64), mech)
            rows = _estimation.debias if columns is None else jax.vmap(_estimation.debias, in_axes=(None, 0, None))
            W = np.asarray(rows(mech64, np.eye(k), 1.0), np.float64)  # item debias takes a batch of histograms
            c = np.asarray(_estimation.debias(mech64, np.zeros(k), 1.0), np.float64)
        W = W - c[None, :]
        return (W if columns is None else columns @ W), c
    S = support_matrix(mech)
    if affine == "channel":
        _, a, b = support_moments(mech)
    else:
        a, b = (np.asarray(v, np.float64) for v in _estimation.affine(mech))
    return S / a[None, :], -b / a


def exact_item_mse(mech: _base.Mechanism, p: Any, n: Any, model: str = "iid", affine: str = "channel") -> np.ndarray:
    """float64 ``[d]``: exact ``E (p_hat_j - p_j)^2`` (variance plus squared bias) of the empirical estimator."""
    check_model(model)
    if grid_shape(mech):
        return per_point(exact_item_mse, mech, p, n, model, affine, stack=np.stack)
    p = _validate.check_distribution("p", p, mech.d)
    n = _check_n(n)
    Q, _ = _channel.channel(mech)
    W, c = estimator_matrix(mech, affine)
    M1, M2 = Q @ W, Q @ W**2  # [d, d]: per-input mean and second moment of one user's contribution
    mean = p @ M1
    if model == "iid":
        var = (p @ M2 - mean**2) / n
    else:
        var = (p @ (M2 - M1**2)) / n
    bias = mean + c - p
    return var + bias**2


def exact_item_variance(mech: _base.Mechanism, p: Any, n: Any, model: str = "iid") -> np.ndarray:
    """float64 ``[d]``: exact ``Var(p_hat_j)`` of the (unbiased) empirical estimator, from the channel."""
    return exact_item_mse(mech, p, n, model)


def exact_mse(mech: _base.Mechanism, p: Any, n: Any, model: str = "iid", affine: str = "channel") -> float:
    """Exact expected squared l2 loss ``sum_j E (p_hat_j - p_j)^2`` of the empirical estimator (float64).

    Computed from the exact channel (``ul.channel``) and the report support structure (or the histogram-linear
    ``debias`` of Hadamard mechanisms), independently of the closed forms in ``ul.theory.mse``; the units are
    the same (a sum over items, 001's ``E l_2^2``).

    Args:
      mech: a mechanism with an exact channel (small domain).
      p: ``float[d]`` true distribution.
      n: number of users (> 0; may be a float).
      model: ``"iid"`` (x_i ~ p, 001) or ``"fixed"`` (n p(x) users hold x, 003).
      affine: see ``estimator_matrix``.

    Returns:
      A Python float; for a ``jax.vmap``-built grid of mechanisms, float64 ``[*grid shape]`` (each point as
      computed alone).
    """
    if grid_shape(mech):
        return per_point(exact_mse, mech, p, n, model, affine, stack=np.stack)
    return float(np.sum(exact_item_mse(mech, p, n, model, affine)))


def _check_n(n: Any) -> float:
    if isinstance(n, (bool, str)) or np.ndim(n) != 0:
        raise TypeError(f"Expected n={n!r} to be a positive number.")
    try:
        val = float(n)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Expected n={n!r} to be a positive number.") from e
    if not np.isfinite(val) or val <= 0:
        raise ValueError(f"Expected n={n!r} > 0.")
    return val
