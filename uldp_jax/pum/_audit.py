"""Exact privacy checks of a PUM (001 §5.2, Props 9 and 10) on small domains: float64 NumPy, no sampling."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from uldp_jax.mechanisms import Mechanism
from uldp_jax.mechanisms.core import _grid_check
from uldp_jax.privacy import _audit


class PUMAudit(NamedTuple):
    """Result of ``audit_pum`` over ``u`` user types.

    Attributes:
      eps_user: float64 ``[u]``: user type ``i``'s actual epsilon, the worst ``log Q^(i)(y|x)/Q^(i)(y|x')`` over
        protected ``y`` and all inputs (001 Prop 9 asks ``<= eps``).
      invertible_ok: bool ``[u]``: invertible outputs of ``Q^(i)`` are reached by one input each, never by an
        item of ``X_S ∪ X_S^(i)`` (sensitive data only goes to ``Y_P``).
      ok_user: bool ``[u]``: Prop 9 holds for user type ``i`` (``ul.audit(mech.user(personal)).ok``).
      eps_cross: float64 ``[u, u]``: ``max_x max_{y in Y_P} log Q^(i)(y|x) / Q^(j)(y|x)`` (Prop 10 asks ``<= eps``).
      ok: every user type passes Prop 9 and every pair Prop 10 (within ``tol``).
      nominal_eps: the PUM's epsilon.
      tol: relative tolerance on each log-ratio.
    """

    eps_user: np.ndarray
    invertible_ok: np.ndarray
    ok_user: np.ndarray
    eps_cross: np.ndarray
    ok: bool
    nominal_eps: float
    tol: float


def cross_user_log_ratio(Q_i: np.ndarray, Q_j: np.ndarray, protected: np.ndarray) -> float:
    """``max_x max_{y in Y_P} log Q_i(y|x) - log Q_j(y|x)`` for two channels over the same inputs and outputs."""
    d = Q_i.shape[0]
    L = _audit.pairwise_log_ratios(np.vstack([Q_i, Q_j]), protected)
    return float(np.max(L[np.arange(d), d + np.arange(d)]))


def audit_pum(mech: Mechanism, personals: Any, tol: float = 1e-9) -> PUMAudit:
    """Checks 001 Props 9 and 10 for the user types ``personals`` on exact composite channels.

    Args:
      mech: a ``PUM`` (single, not a grid) with a small exact channel.
      personals: ``int[u, num_tags]`` or ``int[u, num_tags, r]``: ``u`` user types (``-1`` = none).
      tol: relative tolerance on each log-ratio constraint.

    Returns:
      A ``PUMAudit``.
    """
    _grid_check.validate_grid(mech, "mech")  # a grid with a bad point is named as such before "a single mechanism"
    _audit.check_tol(tol)
    personals = np.asarray(personals)
    if personals.ndim not in (2, 3):
        raise ValueError(f"Expected personals with shape [u, num_tags(, r)], got {personals.shape}.")
    users = [mech.user(p) for p in personals]
    reports = [_audit.audit(u, tol=tol) for u in users]
    chans = [u.channel_matrix() for u in users]
    protected = chans[0][1]
    nominal = reports[0].nominal_eps
    u = len(users)
    cross = np.zeros((u, u))
    for i in range(u):  # user types, not users: a handful on a small domain
        for j in range(u):
            if i != j:
                cross[i, j] = cross_user_log_ratio(chans[i][0], chans[j][0], protected)
    ok_user = np.array([r.ok for r in reports], bool)
    ok = bool(ok_user.all() and np.all(cross <= nominal + tol * max(1.0, nominal)))
    return PUMAudit(
        eps_user=np.array([r.eps for r in reports]),
        invertible_ok=np.array([r.invertible_ok for r in reports], bool),
        ok_user=ok_user,
        eps_cross=cross,
        ok=ok,
        nominal_eps=float(nominal),
        tol=tol,
    )
