"""Utility-optimized subset selection (uSS, 003 §5.1): GLUTF over SS."""

from __future__ import annotations

from typing import Any

from uldp_jax.mechanisms.core import _family, _fields, _nmse, _optima, _pytree
from uldp_jax.mechanisms import transform as _glutf
from uldp_jax.mechanisms.subset import _ss
from uldp_jax.mechanisms.subset._ss import SS


class USS(_glutf.GLUTFMixin, _fields.ULDPFields):
    r"""(X_S, eps)-utility-optimized subset selection: GLUTF (003 Alg. 1) with base ``SS(s, eps, k)``.

    Pure ULDP: :math:`p^* = ke/(ke+s-k)`, :math:`q^* = k(ke+s-k-e)/((ke+s-k)(s-1))`,
    :math:`z^* = k(e-1)/(k(e-1)+s)`, with 003 eq 32's f and eq 33's z (both correct per docs/errata.md#003-usss-optimal-subset-size).
    ``k = 1`` is uRR (001 Def 3), channel for channel.

    Privacy: ``(X_S, Y_P, eps)``-ULDP, tight; ``Y_P`` = the k-subsets of ``X_S``.

    Attributes:
      d: domain size (static).
      sensitive: sensitive items (static; ``2 <= s < d``).
      eps: privacy budget (leaf).
      k: subset size in ``[1, s - 1]`` (static). ``None``: the integer MSE optimum, the better of floor/ceil of
        003 eq 37 clipped to ``[1, s - 1]`` (needs a concrete eps).
      theta_n: assumed non-sensitive mass for the default ``k`` (default 0: all users sensitive, which gives
        the LDP optimum ``k ~ s/(e^eps+1)``); not used otherwise.
      z_rule: ``"max"`` (eq 33, default) or ``"zero"``.

    Reports: ``GLUTFReport`` with ``bool[s]`` subset indicators as the base part.

    References:
      He et al. (GLUTF) §5.1.
    """

    k: Any = _pytree.static_field(default=None)
    theta_n: Any = _pytree.static_field(default=0.0)
    z_rule: str = _pytree.static_field(default="max")

    _closed_form = _family.Family("USS", "k", _nmse.uss_nmse, _family.uss_probs, ldp=False, integer=True,
                                  domain=lambda s: (1, s - 1), optimum=_optima.optimal_k)

    rule = "pure"

    def __post_init__(self):
        _ss.check_k(self, _glutf.check_named(self, published_z=False), self.theta_n)

    @property
    def base(self) -> SS:
        return _glutf.raw(SS, d=self.s, eps=self.eps, k=self.k)
