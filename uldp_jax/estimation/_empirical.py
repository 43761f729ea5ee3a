"""The empirical (matrix-inversion) estimator, 001 eq (3), from aggregate statistics."""

from __future__ import annotations

from typing import Any

import warnings

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _registry
from uldp_jax.mechanisms.core import affine, debias, debias_variance, own_debias, stats_matrix


RANK_MODES = ("warn", "raise", "ignore")


class RankDeficientWarning(UserWarning):
    """The statistic of a mechanism cannot identify the input distribution: "emp" is biased."""


def statistic_rank(mech: Any) -> tuple[int, int]:
    """``(rank, d)`` of the map ``p -> E[stats] / n`` (``_estimation.stats_matrix``, concrete, small domains)."""
    A = np.asarray(stats_matrix(mech), dtype=np.float64)
    return int(np.linalg.matrix_rank(A)), int(A.shape[0])


def check_identifiable(mech: Any, on_rank_deficient: str = "warn") -> None:
    """Warns (``RankDeficientWarning``) or raises (``ValueError``) when the default channel-inverting ``debias``
    runs on a statistic of rank below ``d``: ``p`` is not identifiable and the pseudo-inverse is biased.

    Only the default ``debias`` (no ``estimator().affine`` nor ``.debias``) on concrete parameters is checked: the
    affine and mechanism-written estimators are identifiable by construction, and traced leaves are skipped.
    """
    if on_rank_deficient not in RANK_MODES:
        raise ValueError(f"Expected on_rank_deficient={on_rank_deficient!r} to be one of {RANK_MODES}.")
    if on_rank_deficient == "ignore" or own_debias(mech):
        return
    if not all(_validate.is_concrete(v) for v in jax.tree_util.tree_leaves(mech)):
        return
    if affine(mech) is not None:
        return
    rank, d = statistic_rank(mech)
    if rank >= d:
        return
    msg = (f"{type(mech).__name__}'s statistic has rank {rank} < d={d}: p is not identifiable from it, so the "
           "'emp' estimate (a pseudo-inverse) is biased. Use a statistic that identifies p (ul.check(mech) "
           "reports the rank), or pass on_rank_deficient='ignore' to accept the bias.")
    if on_rank_deficient == "raise":
        raise ValueError(msg)
    warnings.warn(msg, RankDeficientWarning, stacklevel=3)


def empirical(mech: Any, stats: jax.Array, n: Any, on_rank_deficient: str = "warn") -> jax.Array:
    r"""Unbiased empirical estimate :math:`\hat p_j = (c_j / n - b_j) / a_j` (001 eq 3).

    Calls ``_estimation.debias``: the closed-form affine inverse ``estimator().affine`` (GRR, RAPPOR/UE, uRR, uRAP), a
    mechanism's own fast inverse (Hadamard response), or by default the exact inverse of its channel. May be
    negative; see ``emp+thr`` and the post-processing methods for projections onto the simplex.

    Args:
      mech: the mechanism that produced the reports.
      stats: ``int32[num_stats]`` aggregate of ``n`` reports.
      n: number of reports (scalar).
      on_rank_deficient: what the default channel inverse does when the statistic has rank below ``d`` (``p``
        not identifiable, the pseudo-inverse biased): ``"warn"`` (``RankDeficientWarning``, the default),
        ``"raise"`` (``ValueError``) or ``"ignore"``. Checked on concrete parameters only.

    Returns:
      ``float[d]`` estimate of the input distribution.
    """
    check_identifiable(mech, on_rank_deficient)
    return debias(mech, stats, n)


def empirical_variance(mech: Any, p: jax.Array, n: Any) -> jax.Array:
    r"""Per-item variance of ``empirical`` in the iid model: :math:`f_j(1-f_j)/(n a_j^2)`, :math:`f = a p + b`."""
    return debias_variance(mech, p, n)


def channel_inverse(Q: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Generic fallback for item-report mechanisms: least-squares solution of ``p Q = counts / n`` (float64).

    For a square invertible ``Q`` this is exactly 001 eq (3), ``p = m Q^{-1}``.
    """
    counts = np.asarray(counts, dtype=np.float64)
    m_hat = counts / counts.sum()
    sol, *_ = np.linalg.lstsq(np.asarray(Q, np.float64).T, m_hat, rcond=None)
    return sol


_registry.register_method("emp", empirical, "stats", "Empirical estimation (001 eq 3).")
