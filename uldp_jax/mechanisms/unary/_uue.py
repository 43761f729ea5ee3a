"""Utility-optimized unary encoding (uUE, 003 §5.2): GLUTF over UE."""

from __future__ import annotations

from typing import Any

import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _family, _fields, _nmse, _optima, _pure_uldp as _th, _pytree
from uldp_jax.mechanisms import transform as _glutf
from uldp_jax.mechanisms.unary._ue import UE


def _default_p(s: int, eps: Any, theta_n: float) -> float:
    """The MSE-optimal keep-probability (003 eq 43), capped below 1 in float32; needs a concrete eps."""
    with _th.x64():
        p = float(_th.uue_p_opt(s, _fields.concrete_eps(eps, "p"), theta_n))
    # For eps >~ 33 the optimum is within 6e-8 of 1, where float32 simulation rounds p to 1 and the
    # estimator divides by zero. Cap the default there: the MSE is flat (q* stays < 1e-14 either way).
    return min(p, float(np.nextafter(np.float32(1.0), np.float32(0.0))))


class UUE(_glutf.GLUTFMixin, _fields.ULDPFields):
    r"""(X_S, eps)-utility-optimized unary encoding: GLUTF (003 Alg. 1) with base ``UE(s, eps, p)``.

    Pure ULDP: :math:`p^* = p`, :math:`q^* = p/(e(1-p)+p)`, :math:`z^* = (e-1)/(e+s-1)`; f is 003 eq 38 and
    :math:`z = p(e-1)/(e+s-1)` (eq 39).

    Privacy: ``(X_S, Y_P, eps)``-ULDP, tight; ``Y_P = {0, 1}^s``.

    Attributes:
      d: domain size (static).
      sensitive: sensitive items (static; ``1 <= s < d``).
      eps: privacy budget (leaf).
      p: keep-probability of the own bit, in ``(0, 1)`` (leaf). ``None``: the MSE optimum, 003 eq 43.
      theta_n: assumed non-sensitive mass for the default ``p`` (default 0).
      z_rule: ``"max"`` (default) or ``"zero"``.

    Reports: ``GLUTFReport`` with ``bool[s]`` bit vectors as the base part.

    References:
      He et al. (GLUTF) §5.2.
    """

    p: Any = None
    theta_n: Any = _pytree.static_field(default=0.0)
    z_rule: str = _pytree.static_field(default="max")

    _closed_form = _family.Family("UUE", "p", _nmse.uue_nmse, _family.uue_probs, ldp=False,
                                  domain=_family.UNIT, optimum=_optima.optimal_p)

    rule = "pure"

    def __post_init__(self):
        s = _glutf.check_named(self, published_z=False)
        p = _default_p(s, self.eps, self.theta_n) if self.p is None else self.p
        _fields.set_fields(self, p=_validate.check_keep_probability("p", p))

    @property
    def base(self) -> UE:
        return _glutf.raw(UE, d=self.s, eps=self.eps, p=self.p)
