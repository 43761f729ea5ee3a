r"""001 (Murakami & Kawamoto) utility analysis: expected l1 (Props 4-8) and l2 (Props 15-19) losses.

All losses are for the empirical estimator in the **iid** model (001's model). The l1 forms are asymptotic
(:math:`\lim_n f(n)/g(n) = 1`, the normal approximation); the l2 forms are exact. ``p`` is ``float[d]``,
``sensitive`` a ``bool[d]`` mask (or index set), ``N = |X_N|``, ``s = |X_S|``. uRAP here is 001's default
:math:`\theta = e^{\varepsilon/2}/(e^{\varepsilon/2}+1)`; for any other theta use ``ul.theory.l1``/``mse``.

Worst cases: 001 Props 5/16 (uRR, ``p_UN`` for ``eps < ln(N + 1)``), 6/17 (uRR, ``p*`` of eq 13 otherwise) and
19 (uRAP l2, ``p_UN`` for ``eps < 2 ln(N/2 + 1)``) are exact. Prop 8 (uRAP l1) is only sufficient: with docs/errata.md#001-prop-8-uraps-worst-case-in-l1
correction ``p_UN`` maximises eq 16 exactly when ``eps <= 2 ln((N + sqrt(N^2 + 4)) / 2)``. Above that threshold
``urap_worst_l1`` maximises eq 16 numerically over the distributions uniform on ``X_S`` and on ``X_N`` (eq 16 is
concave and symmetric within each part, so the maximiser has this form).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

_C = np.sqrt(2.0 / np.pi)


def _mask(sensitive: Any, d: int | None = None) -> np.ndarray:
    arr = np.asarray(sensitive)
    if arr.dtype == bool:
        return arr
    if d is None:
        raise ValueError("Pass sensitive as a bool[d] mask, or pass d with an index set.")
    mask = np.zeros(d, dtype=bool)
    mask[arr.astype(int)] = True
    return mask


def urr_l1(p: Any, sensitive: Any, eps: Any, n: Any) -> Any:
    r"""001 Prop 4 (eq 11) with ``v = u/u'`` (docs/errata.md#001-prop-4-urrs-l1-loss): uRR's asymptotic expected l1 loss."""
    p = jnp.asarray(p)
    mask = jnp.asarray(_mask(sensitive, p.shape[-1]))
    s = jnp.sum(mask)
    up = jnp.expm1(eps)  # u' = e - 1
    v = (s + up) / up  # u / u'
    sens = jnp.sqrt(jnp.maximum((p + 1.0 / up) * (v - p - 1.0 / up), 0.0))
    non = jnp.sqrt(jnp.maximum(p * (v - p), 0.0))
    return _C / jnp.sqrt(n) * jnp.sum(jnp.where(mask, sens, non), axis=-1)


def urap_l1(p: Any, sensitive: Any, eps: Any, n: Any) -> Any:
    r"""001 Prop 7 (eq 16): asymptotic expected l1 loss of uRAP with 001's default theta."""
    p = jnp.asarray(p)
    mask = jnp.asarray(_mask(sensitive, p.shape[-1]))
    up = jnp.expm1(jnp.asarray(eps) / 2.0)
    vn = (up + 1.0) / up
    sens = jnp.sqrt(jnp.maximum((p + 1.0 / up) * (vn - p), 0.0))
    non = jnp.sqrt(jnp.maximum(p * (vn - p), 0.0))
    return _C / jnp.sqrt(n) * jnp.sum(jnp.where(mask, sens, non), axis=-1)


def _every_item_sensitive(uldp_risk: Any, p: Any, eps: Any, n: Any) -> Any:
    """``uldp_risk(p, sensitive, eps, n)`` with every item sensitive: the LDP mechanism its ULDP form extends."""
    p = jnp.asarray(p)
    return uldp_risk(p, np.ones(p.shape[-1], bool), eps, n)


def rr_l1(p: Any, eps: Any, n: Any) -> Any:
    """eps-RR's asymptotic l1 (Kairouz et al. 2016): uRR with every item sensitive."""
    return _every_item_sensitive(urr_l1, p, eps, n)


def rappor_l1(p: Any, eps: Any, n: Any) -> Any:
    """Basic (symmetric) RAPPOR's asymptotic l1: uRAP with every item sensitive."""
    return _every_item_sensitive(urap_l1, p, eps, n)


def nonprivate_l1(p: Any, n: Any) -> Any:
    r"""Empirical distribution of ``n`` iid draws: :math:`\sqrt{2/(n\pi)}\sum_x\sqrt{p(x)(1-p(x))}`."""
    p = jnp.asarray(p)
    return _C / jnp.sqrt(n) * jnp.sum(jnp.sqrt(jnp.maximum(p * (1.0 - p), 0.0)), axis=-1)


def urr_l2(p: Any, sensitive: Any, eps: Any, n: Any) -> Any:
    r"""001 Prop 15 (eq 25): uRR's expected :math:`l_2^2` (exact, iid)."""
    p = jnp.asarray(p)
    mask = jnp.asarray(_mask(sensitive, p.shape[-1]))
    s = jnp.sum(mask)
    up = jnp.expm1(eps)
    ps = jnp.sum(jnp.where(mask, p, 0.0), axis=-1)
    return (2.0 * up * (s - ps) + s * (s - 1.0)) / (n * up**2) + (1.0 - jnp.sum(p**2, axis=-1)) / n


def urap_l2(p: Any, sensitive: Any, eps: Any, n: Any) -> Any:
    r"""001 Prop 18 (eq 27): uRAP's expected :math:`l_2^2` with 001's default theta (exact, iid)."""
    p = jnp.asarray(p)
    mask = jnp.asarray(_mask(sensitive, p.shape[-1]))
    s = jnp.sum(mask)
    up = jnp.expm1(jnp.asarray(eps) / 2.0)
    ps = jnp.sum(jnp.where(mask, p, 0.0), axis=-1)
    return (1.0 + ((s + 1.0) * (up + 1.0) - 1.0) / up**2 - ps / up - jnp.sum(p**2, axis=-1)) / n


def rr_l2(p: Any, eps: Any, n: Any) -> Any:
    """eps-RR's expected l2^2: uRR with every item sensitive."""
    return _every_item_sensitive(urr_l2, p, eps, n)


def rappor_l2(p: Any, eps: Any, n: Any) -> Any:
    """Basic RAPPOR's expected l2^2: uRAP with every item sensitive."""
    return _every_item_sensitive(urap_l2, p, eps, n)


def nonprivate_l2(p: Any, n: Any) -> Any:
    """Empirical distribution of ``n`` iid draws: ``(1 - sum p^2) / n``."""
    return (1.0 - jnp.sum(jnp.asarray(p) ** 2, axis=-1)) / n


def uniform_nonsensitive(sensitive: np.ndarray) -> np.ndarray:
    """``p_UN``: uniform over ``X_N`` (0 on ``X_S``)."""
    mask = np.asarray(sensitive, bool)
    return np.where(mask, 0.0, 1.0 / np.sum(~mask))


def urr_worst_distribution(sensitive: np.ndarray, eps: float) -> np.ndarray:
    """001 eq 13's ``p*`` (eps >= ln(N + 1)) or ``p_UN`` (eps < ln(N + 1)): uRR's worst case (Props 5-6, 16-17)."""
    mask = np.asarray(sensitive, bool)
    s, nn = int(mask.sum()), int((~mask).sum())
    if eps < np.log(nn + 1.0):
        return uniform_nonsensitive(mask)
    up = np.expm1(eps)
    return np.where(mask, (1.0 - nn / up) / (s + nn), (1.0 + s / up) / (s + nn))


def _urr_worst_case(sensitive: np.ndarray, eps: float) -> tuple[int, int, float, np.ndarray, bool]:
    """``(s, N, e^eps - 1, p, uniform_n)``: uRR's worst-case distribution ``p`` and its regime (``uniform_n``:
    eps < ln(N + 1), ``p = p_UN``), shared by the l1 and l2 worst cases."""
    mask = np.asarray(sensitive, bool)
    s, nn = int(mask.sum()), int((~mask).sum())
    return s, nn, np.expm1(eps), urr_worst_distribution(mask, eps), bool(eps < np.log(nn + 1.0))


def urr_worst_l1(sensitive: np.ndarray, eps: float, n: float) -> tuple[float, np.ndarray]:
    """(value, p) of uRR's worst-case asymptotic l1 (001 eqs 12 and 14)."""
    s, nn, up, p, uniform_n = _urr_worst_case(sensitive, eps)
    if uniform_n:
        val = _C / np.sqrt(n) * (s * np.sqrt(s + up - 1.0) / up + np.sqrt(s * nn / up + nn - 1.0))
    else:
        val = np.sqrt(2.0 * (s + nn - 1.0) / (n * np.pi)) * (s + up) / up
    return float(val), p


def urr_worst_l2(sensitive: np.ndarray, eps: float, n: float) -> tuple[float, np.ndarray]:
    """(value, p) of uRR's worst-case l2^2 (001 eqs 26 and Prop 17)."""
    s, nn, up, p, uniform_n = _urr_worst_case(sensitive, eps)
    if uniform_n:
        val = s * (s + 2.0 * up - 1.0) / (n * up**2) + (1.0 - 1.0 / nn) / n
    else:
        val = (s + up) ** 2 / (n * up**2) * (1.0 - 1.0 / (s + nn))
    return float(val), p


def urap_l1_threshold(num_nonsensitive: int) -> float:
    """docs/errata.md#001-prop-8-uraps-worst-case-in-l1 exact threshold for Prop 8: ``p_UN`` maximises eq 16 iff eps <= this value."""
    nn = float(num_nonsensitive)
    return float(2.0 * np.log((nn + np.sqrt(nn**2 + 4.0)) / 2.0))


def urap_worst_l1(sensitive: np.ndarray, eps: float, n: float) -> tuple[float, np.ndarray]:
    """(value, p) of uRAP's worst-case asymptotic l1: eq 17 below docs/errata.md#001-prop-8-uraps-worst-case-in-l1 threshold, else a 1-D maximisation."""
    mask = np.asarray(sensitive, bool)
    s, nn = int(mask.sum()), int((~mask).sum())
    up = np.expm1(eps / 2.0)
    if eps <= urap_l1_threshold(nn):
        val = _C / np.sqrt(n) * (np.exp(eps / 4.0) * s / up + np.sqrt((up + 1.0) * nn / up - 1.0))
        return float(val), uniform_nonsensitive(mask)
    vn = (up + 1.0) / up

    def value(alpha):  # mass alpha spread evenly over X_S, 1 - alpha over X_N
        a, b = alpha / s, (1.0 - alpha) / nn
        return s * np.sqrt((a + 1.0 / up) * (vn - a)) + nn * np.sqrt(b * (vn - b))

    lo, hi = 0.0, 1.0
    for _ in range(200):  # golden-section search on a concave function
        m1, m2 = lo + 0.382 * (hi - lo), hi - 0.382 * (hi - lo)
        lo, hi = (m1, hi) if value(m1) < value(m2) else (lo, m2)
    alpha = 0.5 * (lo + hi)
    p = np.where(mask, alpha / s, (1.0 - alpha) / nn)
    return float(_C / np.sqrt(n) * value(alpha)), p


def urap_worst_l2(sensitive: np.ndarray, eps: float, n: float) -> tuple[float, np.ndarray]:
    """(value, p) of uRAP's worst-case l2^2 (001 Prop 19, eq 28; requires eps < 2 ln(N/2 + 1))."""
    mask = np.asarray(sensitive, bool)
    s, nn = int(mask.sum()), int((~mask).sum())
    if not eps < 2.0 * np.log(nn / 2.0 + 1.0):
        raise ValueError(f"Expected eps={eps} < 2 ln(N/2 + 1) = {2.0 * np.log(nn / 2.0 + 1.0):.6g} (Prop 19).")
    up = np.expm1(eps / 2.0)
    val = (1.0 + ((s + 1.0) * (up + 1.0) - 1.0) / up**2 - 1.0 / nn) / n
    return float(val), uniform_nonsensitive(mask)
