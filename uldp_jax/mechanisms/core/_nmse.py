r"""Closed-form risks of the empirical estimator, per mechanism (003 §4-5 with docs/errata.md corrections, 001).

Every function returns :math:`n\,\mathrm{MSE}_{\mathrm{fixed}}`: ``n`` times the expected squared l2 loss
:math:`\sum_x E(\hat p(x) - p(x))^2` in the *fixed* model (exactly ``n p(x)`` users hold ``x``; 003's model,
where eq 28 is exact). For these unbiased estimators the *iid* model (001) adds ``1 - sum_x p(x)^2``:
:math:`n\,\mathrm{MSE}_{\mathrm{iid}} = n\,\mathrm{MSE}_{\mathrm{fixed}} + 1 - \sum_x p(x)^2` (docs/errata.md#variance-models). The risk
depends on the distribution only through ``theta_n``, the total mass of the non-sensitive items.

All functions are plain ``jax.numpy`` expressions (differentiable and vmappable in every argument, including
``s`` and the integer parameters ``k``/``g``, which may be passed as floats for a continuous relaxation; use
``jax.enable_x64(True)`` for float64). Large ``eps`` is handled by writing every ratio in
:math:`t = e^{-\varepsilon}` and :math:`1 - t` (``-expm1(-eps)``), so ``eps`` up to 50 stays finite in float32.

Notation: :math:`e = e^\varepsilon`, ``s`` = number of sensitive items (``d`` for LDP mechanisms),
``theta_n`` = :math:`\theta_N` (``0`` for LDP mechanisms).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from uldp_jax.mechanisms.core import _pure_uldp as _pu


def _t(eps: Any) -> tuple[Any, Any]:
    """(t, 1 - t) with t = e^-eps, computed stably."""
    eps = jnp.asarray(eps)
    return jnp.exp(-eps), -jnp.expm1(-eps)


def pure_nmse(p_star: Any, q_star: Any, z_star: Any, s: Any, theta_n: Any) -> Any:
    r"""003 Thm 4 (eq 28) for any pure ULDP mechanism, times ``n`` (fixed model).

    .. math:: (1-\theta_N)\frac{1-p^*-q^*}{p^*-q^*} + s\frac{q^*(1-q^*)}{(p^*-q^*)^2}
       + \theta_N\frac{1-z^*}{z^*}

    With ``s = d`` and ``theta_n = 0`` this is the pure-LDP risk of Wang et al. (2017). Computed by
    ``_pure_uldp.pure_uldp_mse`` (GLUTF module); ``z_star=None`` marks an LDP mechanism.
    """
    if z_star is None:  # LDP mechanism: no non-sensitive items (z* unused, theta_n = 0).
        return _pu.pure_uldp_mse(p_star, q_star, 1.0, s, 0.0)
    return _pu.pure_uldp_mse(p_star, q_star, z_star, s, theta_n)


def urr_nmse(eps: Any, s: Any, theta_n: Any) -> Any:
    r"""uRR (001 Prop 15, fixed part): :math:`\frac{2(s - 1 + \theta_N)}{e-1} + \frac{s(s-1)}{(e-1)^2}`."""
    t, u = _t(eps)
    return 2.0 * (s - 1.0 + theta_n) * t / u + s * (s - 1.0) * t**2 / u**2


def grr_nmse(eps: Any, d: Any) -> Any:
    r"""eps-RR over ``d`` items: :math:`\frac{d-2}{e-1} + \frac{d(d+e-2)}{(e-1)^2}` (uRR with ``s = d``)."""
    return urr_nmse(eps, d, 0.0)


def uue_nmse(eps: Any, s: Any, theta_n: Any, p: Any) -> Any:
    r"""uUE with keep-probability ``p`` (003 eq 41; ``z* = (e-1)/(e+s-1)``).

    .. math:: \frac{s e}{p(1-p)(e-1)^2} + (1-\theta_N)\frac{p^2 - e(1-p)^2}{p(p-1)(e-1)} + \frac{\theta_N s}{e-1}
    """
    t, u = _t(eps)
    sens = s * t / (p * (1.0 - p) * u**2) + (1.0 - theta_n) * (p**2 * t - (1.0 - p) ** 2) / (p * (p - 1.0) * u)
    return sens + theta_n * s * t / u


def ue_nmse(eps: Any, d: Any, p: Any) -> Any:
    """Unary encoding / generalized RAPPOR with keep-probability ``p`` (LDP; uUE with ``s = d``, ``theta_n = 0``)."""
    return uue_nmse(eps, d, 0.0, p)


def urap_nmse(eps: Any, s: Any, theta_n: Any, theta: Any) -> Any:
    r"""uRAP with any ``theta`` (docs/errata.md; pure ULDP with ``p* = theta``, ``q* = d_1``, ``z* = theta (e-1)/e``).

    .. math:: \frac{e(s+e-1)}{(e-1)^2\theta} + \frac{e s - (1-\theta_N)(e-1)}{(e-1)^2(1-\theta)} - 1
    """
    t, u = _t(eps)
    return (1.0 + (s - 1.0) * t) / (u**2 * theta) + t * (s - (1.0 - theta_n) * u) / (u**2 * (1.0 - theta)) - 1.0


def uss_nmse(eps: Any, s: Any, theta_n: Any, k: Any) -> Any:
    r"""uSS with subset size ``k`` in ``[1, s-1]`` (003 eq 35).

    .. math:: s\frac{(ke-e+s-k)(ke-k+s-1)}{k(s-k)(e-1)^2}
       + (1-\theta_N)\frac{k(1-k)(e-1)+(s-1)(s-2k)}{k(s-k)(e-1)} + \theta_N\frac{s}{k(e-1)}
    """
    t, u = _t(eps)
    first = s * (k - 1.0 + (s - k) * t) * (k + (s - 1.0 - k) * t) / (k * (s - k) * u**2)
    second = (1.0 - theta_n) * (k * (1.0 - k) + (s - 1.0) * (s - 2.0 * k) * t / u) / (k * (s - k))
    return first + second + theta_n * s * t / (k * u)


def ss_nmse(eps: Any, d: Any, k: Any) -> Any:
    """Subset selection over ``d`` items (LDP; uSS with ``s = d``, ``theta_n = 0``)."""
    return uss_nmse(eps, d, 0.0, k)


def ulh_nmse(eps: Any, s: Any, theta_n: Any, g: Any) -> Any:
    r"""Corrected uLH with hash range ``g`` (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp; ``z* = (e-1)/(e+s-1)``).

    .. math:: \frac{s(e+g-1)^2}{(e-1)^2(g-1)} + (1-\theta_N)\frac{(g-1)^2-e}{(e-1)(g-1)} + \frac{\theta_N s}{e-1}
    """
    t, u = _t(eps)
    gm = g - 1.0
    return s * (1.0 + gm * t) ** 2 / (gm * u**2) + (1.0 - theta_n) * (gm**2 * t - 1.0) / (gm * u) + theta_n * s * t / u


def olh_nmse(eps: Any, d: Any, g: Any) -> Any:
    """Local hashing with range ``g`` over ``d`` items (LDP; uLH with ``s = d``, ``theta_n = 0``)."""
    return ulh_nmse(eps, d, 0.0, g)


def uwheel_nmse(eps: Any, s: Any, theta_n: Any, l: Any) -> Any:  # noqa: E741
    r"""Corrected uWheel with coverage ``l`` (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp; equals ``ulh_nmse`` at ``g = 1/l``).

    .. math:: s\frac{(le-l+1)^2}{(e-1)^2 l(1-l)} + (1-\theta_N)\frac{(1-l)^2 - e l^2}{(e-1)l(1-l)}
       + \frac{\theta_N s}{e-1}
    """
    t, u = _t(eps)
    lv = l * (1.0 - l)
    first = s * (l + (1.0 - l) * t) ** 2 / (lv * u**2)
    return first + (1.0 - theta_n) * ((1.0 - l) ** 2 * t - l**2) / (lv * u) + theta_n * s * t / u


def wheel_nmse(eps: Any, d: Any, l: Any) -> Any:  # noqa: E741
    """Wheel with coverage ``l`` over ``d`` items (LDP; uWheel with ``s = d``, ``theta_n = 0``)."""
    return uwheel_nmse(eps, d, 0.0, l)


def nonprivate_nmse(p: Any) -> Any:
    """n E l2^2 of the empirical distribution of n iid draws: ``1 - sum p^2`` (001 App. C; 0 in the fixed model)."""
    p = jnp.asarray(p)
    return 1.0 - jnp.sum(p**2, axis=-1)
