r"""Hypothesis-testing view of context-aware LDP (004 §3.1, Theorem 1; App. B eqs 22-23).

For a pair of inputs ``(x, x')`` and a decision rule :math:`\hat X: \mathcal Y \to \{x, x'\}` (randomized rules
allowed), the false alarm and miss detection rates are
:math:`P_{FA} = \Pr(\hat X = x \mid X = x')` and :math:`P_{MD} = \Pr(\hat X = x' \mid X = x)`. The achievable
set of ``(P_FA, P_MD)`` is convex and symmetric under ``(a, b) -> (1 - a, 1 - b)`` (swap the decisions); its lower
boundary (the trade-off curve) comes from Neyman-Pearson: sort outputs by likelihood ratio
:math:`Q(y|x)/Q(y|x')` and decide ``x`` on a growing prefix. Theorem 1: ``Q`` is E-LDP iff every achievable point
satisfies :math:`P_{FA} + e^{\varepsilon_{x',x}} P_{MD} \ge 1` (eq 7) and
:math:`e^{\varepsilon_{x,x'}} P_{FA} + P_{MD} \ge 1` (eq 8) for every pair. NumPy float64; never samples.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from uldp_jax.mechanisms.core._base import Mechanism
from uldp_jax.privacy import _channel


class Tradeoff(NamedTuple):
    """A convex piecewise-linear lower boundary of an error region, vertices from ``(0, 1)`` to ``(1, 0)``.

    Attributes:
      p_fa: float64[k] false-alarm rates, non-decreasing.
      p_md: float64[k] miss-detection rates, non-increasing.
    """

    p_fa: np.ndarray
    p_md: np.ndarray


def _as_q(mech_or_q: Any) -> np.ndarray:
    if isinstance(mech_or_q, Mechanism):
        return _channel.channel(mech_or_q).Q
    Q = np.asarray(mech_or_q, dtype=np.float64)
    if Q.ndim != 2 or np.any(~np.isfinite(Q)) or np.any(Q < 0):
        raise ValueError(f"Expected Q to be a finite non-negative matrix [d, m], got shape {Q.shape}.")
    if not np.allclose(Q.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("Expected every row of Q to sum to 1.")
    return Q


def _check_pair(x: Any, x_alt: Any, d: int) -> tuple[int, int]:
    for name, v in (("x", x), ("x_alt", x_alt)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"Expected {name}={v!r} to be an int.")
        if not 0 <= int(v) < d:
            raise ValueError(f"Expected {name}={v} in [0, {d}).")
    if int(x) == int(x_alt):
        raise ValueError(f"Expected x={x} and x_alt={x_alt} to differ.")
    return int(x), int(x_alt)


def tradeoff_curve(mech_or_q: Any, x: int, x_alt: int) -> Tradeoff:
    r"""Lower boundary of the achievable ``(P_FA, P_MD)`` region for testing ``x`` against ``x_alt``.

    Every achievable pair lies on or above this curve (and on or below its mirror image
    ``(1 - p_fa, 1 - p_md)``); every point of the curve is achieved by a (randomized) likelihood-ratio test.

    Args:
      mech_or_q: a mechanism with an exact channel, or a row-stochastic ``Q`` float ``[d, m]``.
      x: the input whose miss is ``P_MD`` (decide ``x`` -> false alarm when the truth is ``x_alt``).
      x_alt: the alternative input.

    Returns:
      A ``Tradeoff`` whose vertices run from ``(0, 1)`` to ``(1, 0)``.
    """
    Q = _as_q(mech_or_q)
    x, x_alt = _check_pair(x, x_alt, Q.shape[0])
    qx, qa = Q[x], Q[x_alt]
    keep = (qx > 0) | (qa > 0)
    qx, qa = qx[keep], qa[keep]
    # Decide x first where Q(y|x)/Q(y|x') is largest: sort by angle, ratio inf (qa = 0) first.
    order = np.argsort(-np.arctan2(qx, qa), kind="stable")
    # Prefix sums for P_FA and suffix sums for P_MD, so structural zeros stay exact zeros.
    p_fa = np.concatenate([[0.0], np.cumsum(qa[order])])
    p_md = np.concatenate([np.cumsum(qx[order][::-1])[::-1], [0.0]])
    p_fa, p_md = np.clip(p_fa, 0.0, 1.0), np.clip(p_md, 0.0, 1.0)
    p_fa[-1], p_md[0] = 1.0, 1.0
    return Tradeoff(p_fa, p_md)


def privacy_tradeoff(eps_x_alt: Any, eps_alt_x: Any) -> Tradeoff:
    r"""Lower boundary of the region eqs 7-8 allow, for :math:`\varepsilon_{x,x'}` and :math:`\varepsilon_{x',x}`.

    Vertices ``(0, 1)``, the corner
    :math:`\big(\frac{e^{\varepsilon_{x',x}} - 1}{e^{\varepsilon_{x,x'} + \varepsilon_{x',x}} - 1},
    \frac{e^{\varepsilon_{x,x'}} - 1}{e^{\varepsilon_{x,x'} + \varepsilon_{x',x}} - 1}\big)` (004 App. B eq 23),
    and ``(1, 0)``. ``inf`` entries are allowed (e.g. Mangat: corner ``(0, e^{-eps_21})``); both zero gives the
    segment ``P_FA + P_MD = 1`` (corner reported at ``(1/2, 1/2)``).

    Args:
      eps_x_alt: :math:`\varepsilon_{x,x'} \ge 0` (bounds :math:`Q(S|x) \le e^{\varepsilon_{x,x'}} Q(S|x')`).
      eps_alt_x: :math:`\varepsilon_{x',x} \ge 0`.

    Returns:
      A ``Tradeoff`` with three vertices.
    """
    a = _check_nonneg("eps_x_alt", eps_x_alt)
    b = _check_nonneg("eps_alt_x", eps_alt_x)
    p_md, p_fa = _corner(a, b), _corner(b, a)
    return Tradeoff(np.array([0.0, p_fa, 1.0]), np.array([1.0, p_md, 0.0]))


def _check_nonneg(name: str, v: Any) -> float:
    if isinstance(v, bool):
        raise TypeError(f"Expected {name}={v!r} to be a real number.")
    try:
        f = float(v)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Expected {name}={v!r} to be a real number.") from e
    if np.isnan(f) or f < 0:
        raise ValueError(f"Expected {name}={v!r} >= 0.")
    return f


def _corner(u: float, v: float) -> float:
    r""":math:`(e^u - 1)/(e^{u+v} - 1) = (1 - e^{-u}) / (e^v - e^{-u})`, with its limits at 0 and inf."""
    if u == 0.0 and v == 0.0:
        return 0.5
    if np.isinf(v):
        return 0.0
    return float(-np.expm1(-u) / (np.exp(v) - np.exp(-u)))


def tradeoff_eps(curve: Tradeoff) -> tuple[float, float]:
    r"""The smallest :math:`(\varepsilon_{x,x'}, \varepsilon_{x',x})` with which every vertex obeys eqs 7-8.

    Eq 8 gives :math:`\varepsilon_{x,x'} \ge \log((1 - P_{MD})/P_{FA})` and eq 7 gives
    :math:`\varepsilon_{x',x} \ge \log((1 - P_{FA})/P_{MD})` at every point (convexity makes the vertices enough).
    For a channel's curve these equal the pairwise worst log-ratios ``max_y log Q(y|x)/Q(y|x')`` and the reverse.
    """
    p_fa, p_md = np.asarray(curve.p_fa, np.float64), np.asarray(curve.p_md, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.log(1.0 - p_md) - np.log(p_fa)
        r2 = np.log(1.0 - p_fa) - np.log(p_md)
    r1 = np.where(np.isnan(r1), -np.inf, r1)
    r2 = np.where(np.isnan(r2), -np.inf, r2)
    return max(0.0, float(r1.max())), max(0.0, float(r2.max()))


def satisfies_tradeoff(curve: Tradeoff, eps_x_alt: Any, eps_alt_x: Any, tol: float = 1e-9) -> bool:
    """True when every vertex of ``curve`` obeys eqs 7-8 for the given E entries (Theorem 1), up to ``tol``."""
    a = _check_nonneg("eps_x_alt", eps_x_alt)
    b = _check_nonneg("eps_alt_x", eps_alt_x)
    p_fa, p_md = np.asarray(curve.p_fa, np.float64), np.asarray(curve.p_md, np.float64)
    # An infinite entry leaves its constraint vacuous (no bound on Q(S|x) / Q(S|x')).
    with np.errstate(over="ignore", invalid="ignore"):
        eq7 = np.isinf(b) | (p_fa + np.exp(b) * p_md >= 1.0 - tol)
        eq8 = np.isinf(a) | (np.exp(a) * p_fa + p_md >= 1.0 - tol)
    return bool(np.all(eq7) and np.all(eq8))


def _lower(curve: Tradeoff, p_fa: np.ndarray) -> np.ndarray:
    """The convex lower boundary at ``p_fa``: the max of its non-vertical segments' lines."""
    fa, md = np.asarray(curve.p_fa, np.float64), np.asarray(curve.p_md, np.float64)
    dfa, dmd = np.diff(fa), np.diff(md)
    ok = dfa > 0
    slope = dmd[ok] / dfa[ok]
    lines = md[:-1][ok][None, :] + slope[None, :] * (p_fa.reshape(-1, 1) - fa[:-1][ok][None, :])
    return lines.max(axis=1).reshape(p_fa.shape)


def achievable(curve: Tradeoff, p_fa: Any, p_md: Any, tol: float = 1e-12) -> np.ndarray:
    """bool: ``(p_fa, p_md)`` lies in the region bounded below by ``curve`` and above by its mirror image."""
    p_fa, p_md = np.broadcast_arrays(np.asarray(p_fa, np.float64), np.asarray(p_md, np.float64))
    lower = _lower(curve, p_fa)
    upper = 1.0 - _lower(curve, 1.0 - p_fa)
    return (p_fa >= -tol) & (p_fa <= 1 + tol) & (p_md >= lower - tol) & (p_md <= upper + tol)
