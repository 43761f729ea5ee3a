r"""Closed-form utility of a mechanism instance: ``mse``, ``nmse``, ``item_variance``, ``l1``.

Units (used everywhere in ``uldp_jax.theory`` and ``uldp_jax.tuning``): ``mse`` is the **expected squared l2
loss summed over items**, :math:`\sum_x E(\hat p(x) - p(x))^2` (001's :math:`E[l_2^2]`, 003's eq 6-7), of the
unbiased empirical estimator (``ul.estimate(..., "emp")``). ``ul.metrics.mse`` is the per-item mean, so
``ul.metrics.mse`` averaged over repetitions estimates ``ul.theory.mse / d``.

Variance models (docs/errata.md#variance-models): ``"iid"`` (each user's value drawn from ``p``; 001) and ``"fixed"`` (exactly
``n p(x)`` users hold ``x``; 003); ``n * mse_iid = n * mse_fixed + 1 - sum p^2``.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _grid_check, _nmse as _forms
from uldp_jax.theory import _exact, _families
from uldp_jax.theory._grid import grid_shape, per_point
from uldp_jax.theory._exact import check_model


def _check_p(p: Any, d: int) -> Any:
    if _validate.is_concrete(p):
        return jnp.asarray(_validate.check_distribution("p", p, d))
    p = jnp.asarray(p)
    if p.shape[-1:] != (d,):
        raise ValueError(f"Expected p to have length d={d}, got shape {p.shape}.")
    return p


def _check_n(n: Any) -> Any:
    """A concrete ``n`` becomes a float (``n = 10**15`` would overflow an int32 inside jit); tracers pass."""
    if _validate.is_concrete(n):
        if isinstance(n, (bool, str, bytes, np.bool_)) or np.ndim(n) != 0 or np.asarray(n).dtype.kind not in "iuf":
            raise TypeError(f"Expected n={n!r} to be a positive number.")
        if not float(n) > 0 or not math.isfinite(float(n)):
            raise ValueError(f"Expected n={n!r} > 0.")
        return float(n)
    return n


def _closed_form(mech: Any) -> Any:
    """The mechanism's closed-form ``Family``, ``None`` for a mechanism without one (exact moments are used)."""
    if not isinstance(mech, _base.Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    return mech.closed_form()


def _per_point(risk: Callable[..., Any]) -> Callable[..., Any]:
    """What ``mse`` and ``item_variance`` check first: ``model``, ``n`` (a concrete one becomes a float), a grid
    split into its points (``risk`` runs on each), ``mech`` a mechanism and every point in range."""

    @functools.wraps(risk)
    def checked(mech: Any, p: Any, n: Any, model: str = "iid") -> Any:
        check_model(model)
        n = _check_n(n)
        if grid_shape(mech):
            return per_point(checked, mech, p, n, model=model)
        _closed_form(mech)
        _grid_check.validate_grid(mech)
        return risk(mech, p, n, model)

    return checked


def check_theta_n(theta_n: Any) -> Any:
    """theta_n (total mass of non-sensitive items) must lie in [0, 1]."""
    if _validate.is_concrete(theta_n):
        arr = np.asarray(theta_n, dtype=np.float64)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
            raise ValueError(f"Expected theta_n={theta_n!r} in [0, 1].")
    return theta_n


def _nvar_item_variance(mech: Any, fam: Any, p: Any, n: Any, model: str) -> Any:
    """Per-item variance from the family's iid ``item_nvar`` (HR family), minus ``p(1-p)/n`` when fixed."""
    nvar = fam.item_nvar(mech, p)
    if model == "fixed":  # unbiased linear estimator: per item, iid - fixed = Var_x(1[x = j]) / n
        nvar = nvar - p * (1.0 - p)
    return nvar / n


def _exact_item_variance(mech: Any, p: Any, n: Any, model: str) -> Any:
    """The default for mechanisms without a closed form: exact per-item MSE from the channel moments."""
    if not (_validate.is_concrete(p) and _validate.is_concrete(n)):
        raise TypeError(f"{type(mech).__name__} has no closed form (closed_form() is None): its risk comes from "
                        "the exact channel, which needs concrete p and n (not traced or batched).")
    return jnp.asarray(_exact.exact_item_mse(mech, p, n, model))


def theta_n_of(mech: _base.Mechanism, p: Any) -> Any:
    """Total mass of ``mech``'s non-sensitive items under ``p`` (0 for LDP mechanisms)."""
    fam = _families.family_of(mech)
    _, mask = _families.sizes(mech, fam)
    if fam.ldp:
        return jnp.zeros(jnp.shape(p)[:-1])
    return jnp.sum(jnp.where(jnp.asarray(~mask), jnp.asarray(p), 0.0), axis=-1)


def nmse(mech: _base.Mechanism, theta_n: Any) -> Any:
    """``n`` times the fixed-model ``mse``, a function of ``theta_n`` only (003 eq 28 form).

    Args:
      mech: a mechanism with a closed form (``mech.closed_form()``); leaves may be traced or batched.
      theta_n: total true mass of the non-sensitive items, in ``[0, 1]`` (ignored by LDP mechanisms).
    """
    check_theta_n(theta_n)
    if grid_shape(mech):
        return per_point(nmse, mech, theta_n)
    _grid_check.validate_grid(mech)
    fam = _families.family_of(mech)
    s, _ = _families.sizes(mech, fam)
    th = 0.0 if fam.ldp else jnp.asarray(theta_n)
    if _families.uses_generic(mech, fam):
        P, Q, Z = _families.generic_probs(mech)
        return _forms.pure_nmse(P, Q, Z, float(s), th)
    param = _families.param_value(mech, fam)
    if fam.risk is None:
        raise TypeError(f"{type(mech).__name__}.closed_form() has no risk(eps, s, theta_n, param) (its per-item "
                        "risk item_nvar depends on p and the instance): nmse and ul.tune need risk; "
                        "ul.theory.mse(mech, p, n) and item_variance use item_nvar.")
    return fam.risk(jnp.asarray(mech.eps), float(s), th, param)


@_per_point
def mse(mech: _base.Mechanism, p: Any, n: Any, model: str = "iid") -> Any:
    r"""Closed-form expected squared l2 loss :math:`\sum_x E(\hat p(x)-p(x))^2` of the empirical estimator.

    Asks the mechanism (``mech.closed_form()``): GRR, UE/RAPPOR, SS, OLH, Wheel (LDP), uRR (001 Prop 15), uRAP
    with any theta (docs/errata.md#004-eq-13-the-hadamard-row), uSS (003 eq 35), uUE (eq 41), corrected uLH and uWheel (docs/errata.md#004-eq-13-the-hadamard-row), and the Hadamard mechanisms'
    exact risks (``mechanisms/hadamard/_forms.py``, 004 / docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms). Differentiable in the continuous parameters and ``p``.
    A mechanism without a closed form (``closed_form() is None``, e.g. one defined outside the library) gets the
    exact risk from its channel moments (``ul.theory.exact_mse``; concrete ``p`` and ``n`` only).

    Args:
      mech: a mechanism (leaves may be traced, or batched for a grid).
      p: ``float[d]`` true distribution.
      n: number of users.
      model: ``"iid"`` (001) or ``"fixed"`` (003).

    Returns:
      A scalar ``jax.Array`` (float64 under ``jax.enable_x64(True)``).

    Raises:
      TypeError: if the mechanism has no closed form.
      ValueError: on a bad ``p``, ``n`` or ``model``.
    """
    fam = mech.closed_form()
    if fam is None or fam.item_nvar is not None or fam.item_risk is not None:
        return jnp.sum(item_variance(mech, p, n, model), axis=-1)
    p = _check_p(p, mech.d)
    r = nmse(mech, theta_n_of(mech, p))
    if model == "iid":
        r = r + 1.0 - jnp.sum(p**2, axis=-1)
    return r / n


def pure_probs(mech: _base.Mechanism) -> tuple[Any, Any, Any]:
    """003 Def 6 pure probabilities ``(p*, q*, z*)`` of ``mech`` (``z*`` is ``None`` for LDP mechanisms)."""
    if grid_shape(mech):
        return per_point(pure_probs, mech)
    fam = _families.family_of(mech)
    s, _ = _families.sizes(mech, fam)
    if _families.uses_generic(mech, fam):
        return _families.generic_probs(mech)
    return fam.probs(jnp.asarray(mech.eps), float(s), _families.param_value(mech, fam))


@_per_point
def item_variance(mech: _base.Mechanism, p: Any, n: Any, model: str = "iid") -> Any:
    """``float[d]``: closed-form ``Var(p_hat_x)`` per item (003 eq 25; its iid counterpart).

    Sensitive items (all items for LDP mechanisms): fixed ``[p_x p*(1-p*) + (1-p_x) q*(1-q*)] / (n (p*-q*)^2)``,
    iid ``f (1-f) / (n (p*-q*)^2)`` with ``f = q* + (p*-q*) p_x``; non-sensitive items: fixed
    ``p_x (1-z*) / (n z*)``, iid ``p_x (1 - z* p_x) / (n z*)``.
    """
    fam = mech.closed_form()
    if fam is None:
        return _exact_item_variance(mech, _check_p(p, mech.d), n, model)
    if fam.item_risk is not None:  # a biased estimator (a sketch's collisions): variance plus squared bias
        return fam.item_risk(mech, _check_p(p, mech.d), n, model)
    if fam.item_nvar is not None:
        return _nvar_item_variance(mech, fam, _check_p(p, mech.d), n, model)
    p = _check_p(p, mech.d)
    _, mask = _families.sizes(mech, fam)
    P, Q, Z = pure_probs(mech)
    return pure_item_variance(P, Q, None if fam.ldp else Z, mask, p, n, model)


def pure_item_variance(p_star: Any, q_star: Any, z_star: Any, sensitive_mask: Any, p: Any, n: Any,
                       model: str = "iid") -> Any:
    """Per-item variance of 003 eq 21 from pure probabilities (eq 25 when fixed; ``z_star=None``: LDP)."""
    gap = p_star - q_star
    if model == "iid":
        f = q_star + gap * p
        v_s = f * (1.0 - f) / gap**2
    else:
        v_s = (p * p_star * (1.0 - p_star) + (1.0 - p) * q_star * (1.0 - q_star)) / gap**2
    if z_star is None:
        return v_s / n
    z = jnp.asarray(z_star)
    v_n = p * (1.0 - z * p) / z if model == "iid" else p * (1.0 - z) / z
    return jnp.where(jnp.asarray(sensitive_mask), v_s, v_n) / n


def l1(mech: _base.Mechanism, p: Any, n: Any, model: str = "iid") -> Any:
    r"""Asymptotic expected l1 loss :math:`\sqrt{2/\pi}\sum_x \sqrt{\mathrm{Var}(\hat p(x))}` (n -> infinity).

    The normal approximation behind 001 Props 4 and 7 (``f(n) ~ g(n)`` there), for any mechanism with a
    closed form; for uRR and uRAP with the default theta it equals eqs 11 and 16.
    """
    return jnp.sqrt(2.0 / jnp.pi) * jnp.sum(jnp.sqrt(jnp.maximum(item_variance(mech, p, n, model), 0.0)), axis=-1)
