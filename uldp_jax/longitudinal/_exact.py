"""Exact laws of a whole memoized run of one fixed value, for small domains (NumPy float64, never samples).

The report sequence of a user with fixed value ``x`` has law
:math:`P(y_1..y_\\tau \\mid x) = \\sum_z Q_1(z|x) \\prod_t Q_2(y_t|z)`: given the memo the reports are iid, so
the law of a sequence depends only on its histogram ``c`` over the report space, and every ratio between two
inputs is a ratio of :math:`\\sum_z Q_1(z|x) \\exp(\\sum_y c_y \\ln Q_2(y|z))`. Enumerating histograms (stars
and bars) instead of sequences keeps ``tau`` rounds over ``My`` outputs at ``C(tau + My - 1, My - 1)`` rows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln, logsumexp, xlogy

from uldp_jax import _validate
from uldp_jax.longitudinal import _base


class SequenceAudit(NamedTuple):
    """Exact privacy of ``tau`` reports of one fixed value."""

    eps: float  # max over protected sequences and input pairs of the log-ratio
    invertible_ok: bool  # every other sequence is reached by exactly one input, a non-sensitive one
    num_protected: int  # histograms reached by every input
    num_invertible: int  # histograms reached by some inputs only


def _reachable(mech):
    """Channels restricted to report columns some input reaches (the rest never occur)."""
    q1, q2 = mech.perm_channel(), mech.irr_channel()
    keep = (q1 @ q2).max(axis=0) > 0
    return q1, q2[:, keep]


def sequence_loglik(q1: np.ndarray, q2: np.ndarray, hist: np.ndarray) -> np.ndarray:
    """``[K, d]``: ``ln P(one sequence with histogram hist[k] | x)`` (the multinomial coefficient left out)."""
    per_z = xlogy(hist[:, None, :], q2[None]).sum(-1)  # [K, Mz]
    with np.errstate(divide="ignore"):
        lq1 = np.log(q1)  # [d, Mz]
    return logsumexp(lq1[None] + per_z[:, None, :], axis=-1)


def _histograms(mech, tau: int):
    tau = _validate.check_int("tau", tau, minimum=1)
    q1, q2 = _reachable(mech)
    return q1, q2, _base.compositions(tau, q2.shape[1])


def audit_sequence(mech, tau: int, sensitive=None) -> SequenceAudit:
    """Exact privacy of ``tau`` reports of a fixed value: the max log-ratio over all report sequences every input
    can produce, and (ULDP) whether every other sequence reveals only one non-sensitive value.

    Args:
      mech: a memoized protocol with ``perm_channel``/``irr_channel`` (small ``d``).
      tau: number of rounds, ``>= 1``.
      sensitive: ``X_S`` (default: ``mech.sensitive`` if it has one, else the whole domain).
    """
    q1, q2, hist = _histograms(mech, tau)
    ll = sequence_loglik(q1, q2, hist)
    reach = np.isfinite(ll)
    full = reach.all(axis=1)
    some = reach.any(axis=1) & ~full
    eps = float(np.max(ll[full].max(1) - ll[full].min(1))) if full.any() else 0.0
    sens = np.zeros(q1.shape[0], bool)
    sens[list(mech.sensitive_set() if sensitive is None else sensitive)] = True
    one = reach[some].sum(1) == 1
    nonsens = ~(reach[some] & sens[None]).any(1)
    return SequenceAudit(eps, bool(np.all(one & nonsens)), int(full.sum()), int(some.sum()))


def sequence_eps(mech, tau: int) -> float:
    """Exact eps of ``tau`` reports of one fixed value (``audit_sequence(...).eps``)."""
    return audit_sequence(mech, tau).eps


def brute_force_eps(mech, tau: int) -> float:
    """The same quantity from every one of the ``My^tau`` sequences (no sufficient statistic): the check that
    the histogram enumeration loses nothing. Tiny cases only."""
    q1, q2 = _reachable(mech)
    per = q1[:, :, None]  # [d, Mz, My^t]: memo and the reports so far
    for _ in range(_validate.check_int("tau", tau, minimum=1)):
        per = (per[:, :, :, None] * q2[None, :, None, :]).reshape(q1.shape[0], q1.shape[1], -1)
    seq = per.sum(axis=1)  # [d, My^tau]
    full = (seq > 0).all(0)
    lg = np.log(seq[:, full])
    return float(np.max(lg.max(0) - lg.min(0)))


def exact_attack_success(mech, tau: int, prior=None) -> float:
    r"""Exact success probability of the MAP adversary after ``tau`` reports of a fixed value drawn from
    ``prior`` (uniform by default), ties broken uniformly:
    :math:`\sum_c \binom{\tau}{c} \sum_x \pi(x) P(c|x) 1[x \in \arg\max] / |\arg\max|`."""
    q1, q2, hist = _histograms(mech, tau)
    d = q1.shape[0]
    prior = np.full(d, 1.0 / d) if prior is None else _validate.check_distribution("prior", prior, d)
    ll = sequence_loglik(q1, q2, hist)
    with np.errstate(divide="ignore"):
        post = ll + np.log(prior)[None]
    best = post >= post.max(1, keepdims=True) - 1e-9 * np.maximum(1.0, np.abs(post.max(1, keepdims=True)))
    win = best / best.sum(1, keepdims=True)
    lmult = gammaln(tau + 1) - gammaln(hist + 1).sum(1)
    return float(np.sum(np.exp(lmult[:, None] + post) * win * np.isfinite(post)))


def round_moments(mech, counts_of):
    """Exact per-item mean and variance of one round's support count for a fixed population.

    Args:
      counts_of: ``int[d]`` number of users holding each value.

    Returns:
      ``(mean, var)``, each ``float64[m]``: from the composite channel and the support matrix, no closed form.
    """
    pi = mech.round_channel() @ mech.support_matrix()  # [d, m]: P(support_j | x)
    n_x = np.asarray(counts_of, np.float64)
    return n_x @ pi, n_x @ (pi * (1 - pi))

