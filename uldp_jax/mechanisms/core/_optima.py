r"""Closed-form MSE-optimal parameters (003 eqs 37 and 43, docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta exact g*, l* and uRAP theta*).

The uSS/uUE/uLH/uWheel optima are those of ``mechanisms/core/_pure_uldp.py`` (GLUTF module), re-exported under one naming
scheme ``optimal_*(eps, s, theta_n)``; uRAP's theta* is defined here.

All optima minimise the fixed-model risk (``uldp_jax.mechanisms.core._nmse``); the iid risk differs by a constant, so
the optima are the same in both models. Continuous optima are ``jax.numpy`` expressions of
``(eps, s, theta_n)`` (vmappable); the integer optima (``k``, ``g``) compare the neighbouring integers of the
continuous optimum exactly (NumPy, concrete inputs). For LDP mechanisms pass ``s = d`` and ``theta_n = 0``.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _pure_uldp as _pu


def _t(eps: Any):
    eps = jnp.asarray(eps)
    return jnp.exp(-eps), -jnp.expm1(-eps)


def optimal_theta(eps: Any, s: Any, theta_n: Any) -> Any:
    r"""uRAP's MSE-optimal keep-probability (docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta):
    :math:`\theta^* = 1/(1 + \sqrt{(e s - (1-\theta_N)(e-1)) / (e (s + e - 1))})`.

    With ``s = d`` and ``theta_n = 0`` it is the optimal keep-probability of generalized RAPPOR / UE.
    """
    t, u = _t(eps)
    return 1.0 / (1.0 + jnp.sqrt(t * (s - (1.0 - theta_n) * u) / (1.0 + (s - 1.0) * t)))


def optimal_p(eps: Any, s: Any, theta_n: Any) -> Any:
    r"""uUE's MSE-optimal keep-probability (003 eq 43, ``_pure_uldp.uue_p_opt``):
    :math:`p = 1/(1 + \sqrt{(e s + (e-1)(\theta_N-1)) / (e (s - (e-1)(\theta_N-1)))})`."""
    return _pu.uue_p_opt(s, eps, theta_n)


def optimal_g_continuous(eps: Any, s: Any, theta_n: Any) -> Any:
    r"""uLH's exact continuous optimum (docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l, not 003's s >> g approximation eq 49; ``_pure_uldp.ulh_g_opt``):
    :math:`g^* = 1 + \sqrt{e (e s - (1-\theta_N)(e-1)) / (s + (1-\theta_N)(e-1))}`."""
    return _pu.ulh_g_opt(s, eps, theta_n)


def optimal_l(eps: Any, s: Any, theta_n: Any) -> Any:
    """uWheel's exact optimal coverage ``l* = 1 / g*`` (docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l; uWheel(l) has uLH(1/l)'s risk)."""
    return _pu.uwheel_l_opt(s, eps, theta_n)


def optimal_k_continuous(eps: Any, s: Any, theta_n: Any) -> Any:
    r"""uSS's continuous optimum (003 eq 37, ``_pure_uldp.uss_k_continuous``):
    :math:`k = s / (e\sqrt{(s-1)(e(s+\theta_N-1)-\theta_N) / (e((e-1)\theta_N + (s-1)^2))} + 1)`."""
    return _pu.uss_k_continuous(s, eps, theta_n)


def best_integer(fn, x_cont: float, lo: int, hi: int) -> int:
    """The integer in ``[lo, hi]`` among ``floor``/``ceil`` of ``x_cont`` (clipped) with the smallest ``fn``."""
    if hi < lo:
        raise ValueError(f"Expected an integer range, got [{lo}, {hi}].")
    x = float(x_cont)
    cands = sorted({min(max(c, lo), hi) for c in (math.floor(x), math.ceil(x))} if np.isfinite(x) else {lo, hi})
    vals = [float(fn(c)) for c in cands]
    return int(cands[int(np.argmin(vals))])


def optimal_k(eps: float, s: int, theta_n: float) -> int:
    """uSS's integer optimum: the better of ``floor``/``ceil`` of eq 37, clipped to ``[1, s - 1]`` (docs/errata.md#003-usss-optimal-subset-size).

    ``k = 1`` is uRR. Requires ``s >= 2``. (``_pure_uldp.uss_k_opt``.)
    """
    return int(_pu.uss_k_opt(int(s), float(eps), float(theta_n)))


def optimal_g(eps: float, s: int, theta_n: float) -> int:
    """uLH's integer hash range: the better of ``floor``/``ceil`` of ``g*`` (at least 2; ``_pure_uldp.ulh_g_int``)."""
    return int(_pu.ulh_g_int(int(s), float(eps), float(theta_n)))
