r"""Pure ULDP theory (003 §4-5, corrected by docs/errata.md): GLUTF's f and z, eq 21 estimation, eqs 25/28 error.

Every function is a JAX function of its arguments (``jnp`` arrays or Python floats), differentiable and
float64-capable (wrap calls in ``jax.enable_x64(True)`` for float64). Notation: ``e = exp(eps)``,
``s = |X_S|``, ``theta_n`` = total true mass of the non-sensitive items (003 calls it theta),
``p_star, q_star, z_star`` the pure probabilities of 003 Def 6.

Variance models (docs/errata.md#variance-models): *fixed* (exactly ``n c_x`` users hold ``x``; 003's model, in which eqs 25 and 28 are
exact) and *iid* (each user's value drawn from ``p``): ``n MSE_iid = n MSE_fixed + 1 - sum_x p(x)^2``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def x64():
    """A local float64 context (``jax.enable_x64``; the older experimental spelling on old JAX)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # pragma: no cover - older JAX

    return enable_x64()


def _e(eps: Any) -> jax.Array:
    return jnp.exp(jnp.asarray(eps))


# ---------------------------------------------------------------- GLUTF parameters (003 eqs 9, 10, Thm 1)
def glutf_f(p_star: Any, q_star: Any, s: Any) -> jax.Array:
    r"""003 eq 9 (pure bases): :math:`f = s q^* / (p^* + (s-1) q^*)`."""
    return s * q_star / (p_star + (s - 1) * q_star)


def glutf_f_nonpure(eps: Any, s: Any) -> jax.Array:
    r"""003 eq 10 (non-pure bases): :math:`f = s / (e^\varepsilon + s - 1)` (computed with ``e^{-eps}``)."""
    t = jnp.exp(-jnp.asarray(eps))
    return s * t / (1.0 + (s - 1) * t)


def glutf_z_max(eps: Any, s: Any, f: Any, share: Any) -> jax.Array:
    r"""Largest valid z (docs/errata.md#003-theorem-1-glutfs-valid-z corrected Theorem 1).

    :math:`z = 1 - e^{-\varepsilon} (s/f) \max_{i,m} p_{im}/\sum_t p_{tm}`.

    Args:
      eps: privacy budget.
      s: number of sensitive items.
      f: GLUTF's f (eq 9 or eq 10).
      share: :math:`\max_{i,m} p_{im} / \sum_t p_{tm}` over sensitive inputs ``i`` and the base's *actual*
        outputs ``m`` (hash function included); ``e/(e+s-1)`` whenever some output has likelihood ratio
        exactly ``e`` against every other input (GRR, UE, OLH, Wheel).
    """
    return 1.0 - jnp.exp(-jnp.asarray(eps)) * (s / f) * share


def glutf_z_star(f: Any, z: Any) -> jax.Array:
    r"""003 Theorem 5: :math:`z^* = 1 - f + f z`."""
    return 1.0 - f + f * z


def ratio_share(eps: Any, s: Any) -> jax.Array:
    r""":math:`e/(e+s-1)`, the largest possible share of an eps-LDP base (computed with ``e^{-eps}``)."""
    t = jnp.exp(-jnp.asarray(eps))
    return 1.0 / (1.0 + (s - 1) * t)


# ---------------------------------------------------------------- estimation and error (003 eqs 21, 25, 28)
def pure_uldp_estimate(counts: Any, n: Any, p_star: Any, q_star: Any, z_star: Any, sensitive_mask: Any) -> jax.Array:
    r"""003 eq 21: :math:`\hat c_x = (C_x - n q^*)/(n(p^*-q^*))` on ``X_S``, :math:`C_x/(n z^*)` on ``X_N``.

    Args:
      counts: ``int[..., d]`` per-item support counts :math:`C_x = \sum_i 1[x \in Supp(y_i)]`.
      n: number of users.
      p_star, q_star, z_star: pure probabilities.
      sensitive_mask: ``bool[d]``.
    """
    f = jnp.asarray(counts) / n
    return jnp.where(sensitive_mask, (f - q_star) / (p_star - q_star), f / z_star)


def pure_uldp_variance(c: Any, n: Any, p_star: Any, q_star: Any, z_star: Any, sensitive_mask: Any) -> jax.Array:
    r"""003 eq 25 (fixed model, exact): per-item variance of eq 21.

    :math:`c_x (1-p^*-q^*)/(n(p^*-q^*)) + q^*(1-q^*)/(n(p^*-q^*)^2)` on ``X_S``; :math:`c_x (1-z^*)/(n z^*)`
    on ``X_N``.
    """
    c = jnp.asarray(c)
    gap = p_star - q_star
    sens = c * (1.0 - p_star - q_star) / (n * gap) + q_star * (1.0 - q_star) / (n * gap**2)
    return jnp.where(sensitive_mask, sens, c * (1.0 - z_star) / (n * z_star))


def pure_uldp_mse(p_star: Any, q_star: Any, z_star: Any, s: Any, theta_n: Any, n: Any = 1,
                  model: str = "fixed", p: Any = None) -> jax.Array:
    r"""003 eq 28: MSE (sum of per-item variances) of eq 21.

    .. math:: \frac{1}{n}\Big((1-\theta_N)\frac{1-p^*-q^*}{p^*-q^*} + s\frac{q^*(1-q^*)}{(p^*-q^*)^2}
              + \theta_N\frac{1-z^*}{z^*}\Big)

    Args:
      p_star, q_star, z_star: pure probabilities.
      s: number of sensitive items.
      theta_n: total true mass of the non-sensitive items.
      n: number of users (default 1: returns ``n * MSE``).
      model: ``"fixed"`` (003's model, exact) or ``"iid"`` (adds ``(1 - sum p^2)/n``; needs ``p``).
      p: ``float[d]`` input distribution (iid model only).
    """
    gap = p_star - q_star
    out = ((1.0 - theta_n) * (1.0 - p_star - q_star) / gap + s * q_star * (1.0 - q_star) / gap**2
           + theta_n * (1.0 - z_star) / z_star)
    if model == "iid":
        if p is None:
            raise ValueError("Expected p (the input distribution) with model='iid'.")
        out = out + 1.0 - jnp.sum(jnp.asarray(p) ** 2)
    elif model != "fixed":
        raise ValueError(f"Expected model={model!r} in ('fixed', 'iid').")
    return out / n


# ---------------------------------------------------------------- closed forms per mechanism
def ss_probs(s: Any, eps: Any, k: Any) -> tuple[jax.Array, jax.Array]:
    r"""Subset selection (003 §5.1): :math:`p^* = ke/(ke+s-k)`, :math:`q^* = k(ke+s-k-e)/((ke+s-k)(s-1))`."""
    t = jnp.exp(-jnp.asarray(eps))
    K = k + (s - k) * t
    return k / K, k * (k - 1 + (s - k) * t) / (K * (s - 1))


def ss_share(s: Any, eps: Any, k: Any) -> jax.Array:
    r"""Largest share of a subset-selection output: :math:`e/(ke+s-k)`."""
    t = jnp.exp(-jnp.asarray(eps))
    return 1.0 / (k + (s - k) * t)


def uss_z_max(s: Any, eps: Any, k: Any) -> jax.Array:
    r"""003 eq 33: :math:`z = (e-1)(k-1)/(e(k-1) - k + s)` (correct per docs/errata.md#003-usss-optimal-subset-size)."""
    e = _e(eps)
    return (e - 1.0) * (k - 1) / (e * (k - 1) - k + s)


def uss_k_continuous(s: Any, eps: Any, theta_n: Any) -> jax.Array:
    r"""003 eq 37, the continuous MSE-optimal subset size."""
    e = _e(eps)
    th = theta_n
    root = jnp.sqrt((s - 1) * (e * (s + th - 1) - th) / (e * ((e - 1) * th + (s - 1) ** 2)))
    return s / (e * root + 1.0)


def ue_q(p: Any, eps: Any) -> jax.Array:
    r"""Unary encoding's :math:`q^* = p/(e(1-p)+p)` (docs/errata.md#003-uues-q: the text garbles it)."""
    t = jnp.exp(-jnp.asarray(eps))
    return p * t / ((1.0 - p) + p * t)


def uue_p_opt(s: Any, eps: Any, theta_n: Any) -> jax.Array:
    r"""003 eq 43: :math:`p = 1/(1 + \sqrt{(es - (1-\theta_N)(e-1))/(e(s + (1-\theta_N)(e-1)))})`."""
    e = _e(eps)
    a = 1.0 - theta_n
    return 1.0 / (1.0 + jnp.sqrt((e * s - a * (e - 1.0)) / (e * (s + a * (e - 1.0)))))


def lh_probs(eps: Any, g: Any) -> tuple[jax.Array, jax.Array]:
    r"""Local hashing: :math:`p^* = e/(e+g-1)`, :math:`q^* = 1/g`."""
    t = jnp.exp(-jnp.asarray(eps))
    return 1.0 / (1.0 + (g - 1) * t), 1.0 / jnp.asarray(g, dtype=t.dtype)


def ulh_g_opt(s: Any, eps: Any, theta_n: Any) -> jax.Array:
    r"""docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l exact optimum :math:`g^* = 1 + \sqrt{e(es - (1-\theta_N)(e-1))/(s + (1-\theta_N)(e-1))}`."""
    e = _e(eps)
    a = 1.0 - theta_n
    return 1.0 + jnp.sqrt(e * (e * s - a * (e - 1.0)) / (s + a * (e - 1.0)))


def ulh_z_max(s: Any, eps: Any, g: Any) -> jax.Array:
    r"""docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp corrected uLH z: :math:`e(e-1)/((e+g-1)(e+s-1))`."""
    t = jnp.exp(-jnp.asarray(eps))
    return -jnp.expm1(-jnp.asarray(eps)) / ((1.0 + (g - 1) * t) * (1.0 + (s - 1) * t))


def ulh_z_published(eps: Any, g: Any) -> jax.Array:
    r"""003 §5.3's published uLH z :math:`(e-1)/(e+g-1)`: VIOLATES ULDP for s >= 2 (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp)."""
    t = jnp.exp(-jnp.asarray(eps))
    return -jnp.expm1(-jnp.asarray(eps)) / (1.0 + (g - 1) * t)


def ulh_mse(s: Any, eps: Any, g: Any, theta_n: Any) -> jax.Array:
    r"""docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp fixed-model ``n * MSE`` of corrected uLH (equals uWheel with ``l = 1/g``)."""
    e = _e(eps)
    return (s * (e + g - 1.0) ** 2 / ((e - 1.0) ** 2 * (g - 1.0))
            + (1.0 - theta_n) * ((g - 1.0) ** 2 - e) / ((e - 1.0) * (g - 1.0)) + theta_n * s / (e - 1.0))


def wheel_probs(eps: Any, l: Any) -> tuple[jax.Array, jax.Array]:
    r"""Wheel (003 App. B): :math:`p^* = le/(le+1-l)`, :math:`q^* = l`."""
    t = jnp.exp(-jnp.asarray(eps))
    l = jnp.asarray(l)
    return l / (l + (1.0 - l) * t), l


def uwheel_z_max(s: Any, eps: Any, l: Any) -> jax.Array:
    r"""docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp corrected uWheel z: :math:`el(e-1)/((le+1-l)(e+s-1))`."""
    t = jnp.exp(-jnp.asarray(eps))
    return l * -jnp.expm1(-jnp.asarray(eps)) / ((l + (1.0 - l) * t) * (1.0 + (s - 1) * t))


def uwheel_z_published(eps: Any, l: Any) -> jax.Array:
    r"""003 App. B's published uWheel z :math:`l(e-1)/(le+1-l)`: VIOLATES ULDP for s >= 2 (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp)."""
    t = jnp.exp(-jnp.asarray(eps))
    return l * -jnp.expm1(-jnp.asarray(eps)) / (l + (1.0 - l) * t)


def uwheel_l_opt(s: Any, eps: Any, theta_n: Any) -> jax.Array:
    """docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l: the optimal coverage is ``1 / g*`` (``ulh_g_opt``)."""
    return 1.0 / ulh_g_opt(s, eps, theta_n)


# ---------------------------------------------------------------- integer optima (host-side, float64)
def best_integer(candidates: Any, objective, lo: int, hi: int) -> int:
    """The candidate (floor/ceil of a continuous optimum, clipped to ``[lo, hi]``) with the smaller objective."""
    x = float(np.asarray(candidates, np.float64))
    cands = sorted({int(min(max(np.floor(x), lo), hi)), int(min(max(np.ceil(x), lo), hi))})
    vals = [float(objective(c)) for c in cands]
    return cands[int(np.argmin(vals))]


def uss_k_opt(s: int, eps: float, theta_n: float = 0.0) -> int:
    """Integer MSE-optimal uSS subset size: the better of floor/ceil of eq 37, clipped to ``[1, s - 1]``."""
    if s < 2:
        raise ValueError(f"Expected s={s} >= 2 for subset selection.")
    eps, theta_n = float(eps), float(theta_n)
    with x64():
        return _uss_k_opt(s, eps, theta_n)


def _uss_k_opt(s: int, eps: float, theta_n: float) -> int:

    def mse(k):
        p, q = (float(v) for v in ss_probs(s, np.float64(eps), k))
        return float(pure_uldp_mse(p, q, float(uss_z_star(s, eps, k)), s, theta_n))

    return best_integer(np.nan_to_num(float(uss_k_continuous(s, np.float64(eps), theta_n)), nan=1.0), mse, 1, s - 1)


def uss_z_star(s: Any, eps: Any, k: Any) -> jax.Array:
    r"""uSS :math:`z^* = k(e-1)/(k(e-1)+s)` (003 §5.1)."""
    em1 = jnp.expm1(jnp.asarray(eps))
    return k * em1 / (k * em1 + s)


def ulh_g_int(s: int, eps: float, theta_n: float = 0.0, max_g: int = 2**30) -> int:
    """Integer uLH range: the better of floor/ceil of ``ulh_g_opt`` under ``ulh_mse``, in ``[2, max_g]``."""
    with x64():
        g = float(np.minimum(np.asarray(ulh_g_opt(s, float(eps), float(theta_n)), np.float64), max_g))
        return best_integer(g, lambda c: ulh_mse(s, float(eps), float(c), float(theta_n)), 2, max_g)

