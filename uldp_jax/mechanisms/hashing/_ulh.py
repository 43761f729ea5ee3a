"""Utility-optimized local hashing (uLH, 003 §5.3) with docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp corrected z."""

from __future__ import annotations

from typing import Any

from uldp_jax.mechanisms.core import _family, _fields, _hashing, _nmse, _optima, _pytree
from uldp_jax.mechanisms import transform as _glutf
from uldp_jax.mechanisms.hashing import _olh
from uldp_jax.mechanisms.hashing._olh import OLH


class ULH(_glutf.GLUTFMixin, _fields.ULDPFields):
    r"""(X_S, eps)-utility-optimized local hashing: GLUTF (003 Alg. 1) with base ``OLH(s, eps, g)``.

    Pure ULDP: :math:`p^* = e/(e+g-1)`, :math:`q^* = 1/g`, :math:`z^* = (e-1)/(e+s-1)` with docs/errata.md
    corrected :math:`z = e(e-1)/((e+g-1)(e+s-1))`. 003 eq 45 averages the other inputs over the hash family,
    but the hash function is part of the report, so privacy must hold for each fixed hash: the published
    :math:`z = (e-1)/(e+g-1)` gives a worst ratio up to ``2.93 e^eps`` and is available only as
    ``z_rule="published_unsafe"`` (``ul.audit`` reports it as exceeding eps).

    Privacy: ``(X_S, Y_P, eps)``-ULDP (``z_rule="max"``), tight for the ``"full"`` family;
    ``Y_P`` = (seed, value) pairs.

    Attributes:
      d: domain size (static).
      sensitive: sensitive items (static; ``1 <= s < d``).
      eps: privacy budget (leaf).
      g: hash range (static int >= 2). ``None``: the integer MSE optimum, the better of floor/ceil of docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l
        exact :math:`g^* = 1 + \sqrt{e(es - (1-\theta_N)(e-1))/(s + (1-\theta_N)(e-1))}` (needs a concrete eps).
      theta_n: assumed non-sensitive mass for the default ``g`` (default 0).
      z_rule: ``"max"`` (corrected, default), ``"zero"``, or ``"published_unsafe"`` (violates ULDP).
      family, num_hashes: the hash family of the base (see ``OLH``).

    References:
      He et al. (GLUTF) §5.3; docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp (corrected z and g*).
    """

    g: Any = _pytree.static_field(default=None)
    theta_n: Any = _pytree.static_field(default=0.0)
    z_rule: str = _pytree.static_field(default="max")
    family: str = _pytree.static_field(default="hash")
    num_hashes: Any = _pytree.static_field(default=None)

    _closed_form = _family.Family("ULH", "g", _nmse.ulh_nmse, _family.ulh_probs, ldp=False, integer=True,
                                  domain=lambda s: (2, 2**31 - 1), optimum=_optima.optimal_g,
                                  rebuild=_hashing.tuned_g)

    rule = "pure"

    def __post_init__(self):
        _olh.check_hash_fields(self, _glutf.check_named(self), self.theta_n)

    @property
    def base(self) -> OLH:
        return _glutf.raw(OLH, d=self.s, eps=self.eps, g=self.g, family=self.family, num_hashes=self.num_hashes)
