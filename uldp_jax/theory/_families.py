"""Which closed form belongs to which mechanism: one ``Family`` record per mechanism class.

A family names the tunable parameter, its closed-form risk ``risk(eps, s, theta_n, param)`` (n * fixed-model MSE,
``_forms``), the pure probabilities ``probs(eps, s, param) -> (p*, q*, z*)`` (003 Def 6; ``z*`` unused for LDP
mechanisms), the parameter's domain and its closed-form optimum. Mechanism classes are matched by name among
``uldp_jax.mechanisms`` (GLUTF and Hadamard classes are looked up lazily, so this module works before and after
they exist). LDP families use ``s = d`` and ``theta_n = 0``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms import _base
from uldp_jax.theory import _forms, _optima


def _exp_terms(eps):
    eps = jnp.asarray(eps)
    return jnp.exp(-eps), -jnp.expm1(-eps)


def _ue_probs(eps, s, keep):
    t, _ = _exp_terms(eps)
    return keep, keep * t / ((1.0 - keep) + keep * t), None


def _uue_probs(eps, s, keep):
    t, u = _exp_terms(eps)
    P, Q, _ = _ue_probs(eps, s, keep)
    return P, Q, u / (1.0 + (s - 1.0) * t)


def _urap_probs(eps, s, theta):
    t, u = _exp_terms(eps)
    P, Q, _ = _ue_probs(eps, s, theta)
    return P, Q, theta * u


def _urr_probs(eps, s, _unused=None):
    t, u = _exp_terms(eps)
    den = 1.0 + (s - 1.0) * t
    return 1.0 / den, t / den, u / den


def _uss_probs(eps, s, k):
    t, u = _exp_terms(eps)
    den = k + (s - k) * t  # (k e + s - k) / e
    P = k / den
    Q = k * (k - 1.0 + (s - k) * t) / (den * (s - 1.0))
    Z = k * u / (k * u + s * t)
    return P, Q, Z


def _ulh_probs(eps, s, g):
    t, u = _exp_terms(eps)
    return 1.0 / (1.0 + (g - 1.0) * t), 1.0 / g, u / (1.0 + (s - 1.0) * t)


def _uwheel_probs(eps, s, l):  # noqa: E741
    t, u = _exp_terms(eps)
    return l / (l + (1.0 - l) * t), l, u / (1.0 + (s - 1.0) * t)


@dataclasses.dataclass(frozen=True)
class Family:
    """Closed-form description of one mechanism class.

    Attributes:
      name: the mechanism class name.
      param: name of the tunable attribute (``None``: nothing to tune).
      risk: ``(eps, s, theta_n, param) -> n * MSE_fixed``.
      probs: ``(eps, s, param) -> (p*, q*, z*)``.
      ldp: True for LDP mechanisms (``s = d``, ``theta_n = 0``).
      integer: the parameter is an integer (static field).
      domain: ``s -> (lo, hi)``: open interval for continuous parameters, inclusive range for integers.
      optimum: ``(eps, s, theta_n) -> param``: closed-form optimum (integer for integer parameters).
    """

    name: str
    param: str | None
    risk: Callable
    probs: Callable
    ldp: bool
    integer: bool = False
    domain: Callable | None = None
    optimum: Callable | None = None


_UNIT = lambda s: (0.0, 1.0)  # noqa: E731
FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("GRR", None, lambda e, s, th, _: _forms.grr_nmse(e, s), _urr_probs, ldp=True),
    Family("UE", "p", lambda e, s, th, p: _forms.ue_nmse(e, s, p), _ue_probs, ldp=True, domain=_UNIT,
           optimum=lambda e, s, th: _optima.optimal_theta(e, s, 0.0)),
    Family("RAPPOR", "theta", lambda e, s, th, p: _forms.ue_nmse(e, s, p), _ue_probs, ldp=True, domain=_UNIT,
           optimum=lambda e, s, th: _optima.optimal_theta(e, s, 0.0)),
    Family("SS", "k", lambda e, s, th, k: _forms.ss_nmse(e, s, k), _uss_probs, ldp=True, integer=True,
           domain=lambda s: (1, s - 1), optimum=lambda e, s, th: _optima.optimal_k(e, s, 0.0)),
    Family("OLH", "g", lambda e, s, th, g: _forms.olh_nmse(e, s, g), _ulh_probs, ldp=True, integer=True,
           domain=lambda s: (2, 2**31 - 1), optimum=lambda e, s, th: _optima.optimal_g(e, s, 0.0)),
    Family("Wheel", "l", lambda e, s, th, cov: _forms.wheel_nmse(e, s, cov), _uwheel_probs, ldp=True, domain=_UNIT,
           optimum=lambda e, s, th: _optima.optimal_l(e, s, 0.0)),
    Family("URR", None, lambda e, s, th, _: _forms.urr_nmse(e, s, th), _urr_probs, ldp=False),
    Family("URAP", "theta", _forms.urap_nmse, _urap_probs, ldp=False, domain=_UNIT, optimum=_optima.optimal_theta),
    Family("USS", "k", _forms.uss_nmse, _uss_probs, ldp=False, integer=True, domain=lambda s: (1, s - 1),
           optimum=_optima.optimal_k),
    Family("UUE", "p", _forms.uue_nmse, _uue_probs, ldp=False, domain=_UNIT, optimum=_optima.optimal_p),
    Family("ULH", "g", _forms.ulh_nmse, _ulh_probs, ldp=False, integer=True, domain=lambda s: (2, 2**31 - 1),
           optimum=_optima.optimal_g),
    Family("UWheel", "l", _forms.uwheel_nmse, _uwheel_probs, ldp=False, domain=_UNIT, optimum=_optima.optimal_l),
    Family("GLUTF", None, None, None, ldp=False),  # any pure base: eq 28 from the instance's (p*, q*, z*)
]}
GLUTF_NAMES = ("USS", "UUE", "ULH", "UWheel", "GLUTF")


def uses_generic(mech: Any, fam: Family) -> bool:
    """True when the closed form must come from the instance's own (p*, q*, z*) (003 eq 28).

    That is the generic ``GLUTF`` class and named GLUTF mechanisms with ``z_rule != "max"`` (``"zero"`` or the
    published, ULDP-violating z), whose z* differs from the per-mechanism forms.
    """
    if fam.name not in GLUTF_NAMES:
        return False
    if getattr(mech, "rule", "pure") != "pure":
        raise TypeError(f"Expected a pure GLUTF mechanism (rule='pure'), got rule={mech.rule!r}: 003 eqs 30-31 "
                        "are approximate and have no exact closed form here.")
    return fam.name == "GLUTF" or getattr(mech, "z_rule", "max") != "max"


def generic_probs(mech: Any) -> tuple[Any, Any, Any]:
    """``(p*, q*, z*)`` of a GLUTF instance from its base and its own z* (003 Theorem 5), as JAX values."""
    base = mech.base
    P, Q = base._pq() if hasattr(base, "_pq") else base.probs()
    return P, Q, mech.z_star()


def family_of(mech: Any) -> Family:
    """The ``Family`` of a mechanism instance.

    Raises:
      TypeError: if the mechanism has no closed form in this module.
    """
    name = type(mech).__name__
    fam = FAMILIES.get(name)
    if fam is not None and fam.ldp and getattr(mech, "sensitive", None) is not None:
        fam = None
    if fam is None or not type(mech).__module__.startswith("uldp_jax."):
        raise TypeError(
            f"Expected mech to be one of the mechanisms with closed forms ({sorted(FAMILIES)}), got {name}.")
    return fam


def sizes(mech: Any, fam: Family) -> tuple[int, np.ndarray]:
    """``(s, sensitive mask bool[d])``: ``s = d`` and an all-True mask for LDP families."""
    if fam.ldp:
        return int(mech.d), np.ones(mech.d, dtype=bool)
    return len(mech.sensitive), _base.sensitive_mask(mech.d, mech.sensitive)


def param_value(mech: Any, fam: Family) -> Any:
    """The current value of the family's parameter (``None`` when it has none)."""
    if fam.param is None:
        return None
    value = getattr(mech, fam.param)
    return value if not fam.integer else int(value)
