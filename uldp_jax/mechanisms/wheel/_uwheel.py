"""Utility-optimized Wheel (uWheel, 003 App. B) with docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp corrected z."""

from __future__ import annotations

from typing import Any

from uldp_jax.mechanisms.core import _family, _fields, _nmse, _optima, _pytree
from uldp_jax.mechanisms import transform as _glutf
from uldp_jax.mechanisms.wheel import _wheel
from uldp_jax.mechanisms.wheel._wheel import Wheel


class UWheel(_glutf.GLUTFMixin, _fields.ULDPFields):
    r"""(X_S, eps)-utility-optimized Wheel: GLUTF (003 Alg. 1) with base ``Wheel(s, eps, l)``.

    Pure ULDP: :math:`p^* = le/(le+1-l)`, :math:`q^* = l`, :math:`z^* = (e-1)/(e+s-1)` with docs/errata.md
    corrected :math:`z = el(e-1)/((le+1-l)(e+s-1))`. 003 Thm 9's published :math:`z = l(e-1)/(le+1-l)`
    violates ULDP for ``s >= 2`` (the hash is part of the report) and is available only as
    ``z_rule="published_unsafe"``.

    Privacy: ``(X_S, Y_P, eps)``-ULDP (``z_rule="max"``); tight when some point is covered by one arc only.

    Attributes:
      d: domain size (static).
      sensitive: sensitive items (static; ``1 <= s < d``).
      eps: privacy budget (leaf).
      l: coverage in ``[2**-14, 1 - 2**-22]`` (leaf). ``None``: docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l optimum ``1 / g*`` (continuous; needs a
        concrete eps), clipped to that range.
      theta_n: assumed non-sensitive mass for the default ``l`` (default 0).
      z_rule: ``"max"`` (corrected, default), ``"zero"``, or ``"published_unsafe"`` (violates ULDP).
      num_hashes: seeds of the base's hash family (``None``: all ``2**32``).

    References:
      He et al. (GLUTF) App. B; docs/errata.md.
    """

    l: Any = None
    theta_n: Any = _pytree.static_field(default=0.0)
    z_rule: str = _pytree.static_field(default="max")
    num_hashes: Any = _pytree.static_field(default=None)

    _closed_form = _family.Family("UWheel", "l", _nmse.uwheel_nmse, _family.uwheel_probs, ldp=False,
                                  domain=_wheel.WHEEL_L_DOMAIN, closed=True, optimum=_optima.optimal_l)

    rule = "pure"

    def __post_init__(self):
        _wheel.check_wheel_fields(self, _glutf.check_named(self), self.theta_n)

    @property
    def base(self) -> Wheel:
        return _glutf.raw(Wheel, d=self.s, eps=self.eps, l=self.l, num_hashes=self.num_hashes)
