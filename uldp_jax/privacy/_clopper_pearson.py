"""Exact (Clopper-Pearson) one-sided confidence bounds on a binomial proportion, float64, vectorised.

``lower(k, n, alpha)`` is the largest ``p`` with ``P(Bin(n, p) >= k) <= alpha`` (0 when ``k = 0``); ``upper`` the
smallest ``p`` with ``P(Bin(n, p) <= k) <= alpha`` (1 when ``k = n``). Each is a level-``1 - alpha`` one-sided
bound for any ``n``, with no normal approximation (Clopper and Pearson, Biometrika 1934; the interval LDP-Auditor
uses, ``statsmodels.proportion_confint(method="beta")``).

The binomial tails are regularised incomplete beta functions, ``P(Bin(n, p) >= k) = I_p(k, n - k + 1)``, evaluated
by ``jax.scipy.special.betainc`` in float64 (scipy is a test-only dependency) and inverted by bisection. The
bisection keeps the conservative end of its bracket and targets ``alpha * (1 - SLACK)``, so betainc's float64
error (relative ~1e-7 in the far tails at ``n`` ~ 1e8) cannot make a bound anti-conservative.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

SLACK = 1e-4  # relative margin on alpha absorbing betainc's rounding (the bound is that much more conservative)
_STEPS = 64  # bisection steps on [0, 1] in float64: the bracket shrinks below one ulp of any p > 1e-19


def _check(k: Any, n: Any, alpha: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, n, alpha = (np.asarray(v, np.float64) for v in (k, n, alpha))
    if np.any(~np.isfinite(k)) or np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)):
        raise ValueError("Expected counts k to be integers in [0, n].")
    if np.any(~(n >= 1)) or np.any(n != np.round(n)):
        raise ValueError("Expected trial counts n to be integers >= 1.")
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"Expected alpha in (0, 1), got {alpha!r}.")
    return np.broadcast_arrays(k, n, alpha)


@jax.jit
def _bisect_tail(a: jax.Array, b: jax.Array, target: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Bracket ``[lo, hi]`` of the root in ``p`` of ``I_p(a, b) = target`` (``I_p`` increases in ``p``)."""

    def step(bracket, _):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        above = jax.scipy.special.betainc(a, b, mid) > target
        return (jnp.where(above, lo, mid), jnp.where(above, mid, hi)), None

    (lo, hi), _ = jax.lax.scan(step, (jnp.zeros_like(a), jnp.ones_like(a)), None, length=_STEPS)
    return lo, hi


def _solve(a: np.ndarray, b: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Low end of the bisection bracket of ``I_p(a, b) = target``, elementwise; inputs are flattened and padded to a
    power-of-two length so that a few compiled shapes serve every call."""
    shape = a.shape
    flat = [np.ravel(v) for v in (a, b, target)]
    size = max(8, 1 << max(flat[0].size - 1, 0).bit_length())
    padded = [np.pad(v, (0, size - v.size), constant_values=1.0 if i < 2 else 0.5) for i, v in enumerate(flat)]
    with jax.enable_x64(True):
        lo, _ = _bisect_tail(*(jnp.asarray(v, jnp.float64) for v in padded))
    return np.asarray(lo, np.float64)[: flat[0].size].reshape(shape)


def lower(k: Any, n: Any, alpha: Any) -> np.ndarray:
    """One-sided lower ``1 - alpha`` bound on ``p`` from ``k`` successes in ``n`` trials (float64, broadcast).

    Raises:
      ValueError: counts outside ``[0, n]``, ``n < 1`` or ``alpha`` outside ``(0, 1)``.
    """
    k, n, alpha = _check(k, n, alpha)
    pos = k > 0
    # P(Bin(n, p) >= k) = I_p(k, n - k + 1) increases in p: the bound is the root of I_p = alpha, taken low.
    lo = _solve(np.where(pos, k, 1.0), np.where(pos, n - k + 1.0, 1.0), alpha * (1.0 - SLACK))
    return np.where(pos, lo, 0.0)


def upper(k: Any, n: Any, alpha: Any) -> np.ndarray:
    """One-sided upper ``1 - alpha`` bound on ``p`` from ``k`` successes in ``n`` trials (float64, broadcast).

    Raises:
      ValueError: counts outside ``[0, n]``, ``n < 1`` or ``alpha`` outside ``(0, 1)``.
    """
    k, n, alpha = _check(k, n, alpha)
    below = k < n
    # P(Bin(n, p) <= k) = I_{1-p}(n - k, k + 1) (a lower tail, no cancellation near 1) increases in 1 - p:
    # the root in 1 - p is taken low, so p is taken high.
    lo = _solve(np.where(below, n - k, 1.0), np.where(below, k + 1.0, 1.0), alpha * (1.0 - SLACK))
    return np.where(below, 1.0 - lo, 1.0)
