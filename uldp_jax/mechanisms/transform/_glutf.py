"""GLUTF: the general LDP-to-ULDP transformation (003 Algorithm 1), with docs/errata.md#003-theorem-1-glutfs-valid-z largest valid z."""

from __future__ import annotations

from typing import Any

import jax

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _estimation, _fields, _pytree, _report_space
from uldp_jax.mechanisms.transform import _glutf_base
from uldp_jax.mechanisms.transform._glutf_core import (  # noqa: F401  (re-exported)
    RULES,
    Z_RULES,
    GLUTFMixin,
    GLUTFReport,
    raw,
)


def check_common(d: Any, sensitive: Any, z_rule: Any, allow_full: bool = False) -> tuple[int, tuple[int, ...]]:
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    sensitive = _validate.check_index_set("sensitive", sensitive, d)
    if len(sensitive) == d and not allow_full:
        raise ValueError(
            f"Expected sensitive to be a proper subset of [0, {d}), got all {d} items: with no non-sensitive "
            "item ULDP is LDP; use the LDP base mechanism (e.g. ul.SS, ul.UE, ul.OLH, ul.Wheel) instead.")
    if z_rule not in Z_RULES:
        raise ValueError(f"Expected z_rule={z_rule!r} in {Z_RULES}.")
    return d, sensitive


def check_theta_n(theta_n: Any) -> float:
    theta_n = _validate.as_param("theta_n", theta_n, lower=0.0, upper=1.0, lower_open=False, upper_open=False)
    return float(theta_n)


def check_named(obj: Any, published_z: bool = True) -> int:
    """The checks of a named GLUTF mechanism (uSS, uUE, uLH, uWheel): ``d``, ``sensitive`` (a proper subset),
    ``z_rule`` (``"published_unsafe"`` only where 003's published z violates ULDP, ``published_z=True``),
    ``eps`` and ``theta_n``, normalised in place; returns ``s = len(sensitive)``."""
    d, sensitive = check_common(obj.d, obj.sensitive, obj.z_rule)
    if obj.z_rule == "published_unsafe" and not published_z:
        raise ValueError(f"z_rule='published_unsafe' exists only for ULH/UWheel ({type(obj).__name__}'s published "
                         "z is valid).")
    _fields.set_fields(obj, d=d, sensitive=sensitive, eps=_validate.check_eps(obj.eps),
                       theta_n=check_theta_n(obj.theta_n))
    return len(sensitive)


class GLUTF(GLUTFMixin, _base.Mechanism):
    r"""A ULDP mechanism built by GLUTF (003 Algorithm 1) from a pure LDP ``base`` over the sensitive items.

    A sensitive item ``sensitive[r]`` is randomized by ``base`` as its item ``r``. A non-sensitive ``x`` is
    reported as itself w.p. ``1 - f``; otherwise a uniform sensitive ``x'`` goes through ``base`` and ``x`` is
    attached to that output w.p. ``z`` (003 eq 8). ``f`` is 003 eq 9 (``rule="pure"``, default) or eq 10
    (``rule="non_pure"``); ``z`` is the largest valid value (docs/errata.md#003-theorem-1-glutfs-valid-z):
    :math:`z = 1 - e^{-\varepsilon}(s/f)\max_{i,m} p_{im}/\sum_t p_{tm}`, the max taken over the base's actual
    outputs (hash function included), from the base's closed form or, failing one, its exact channel.

    Pure ULDP (003 Theorem 5, ``rule="pure"``): ``p* = p*_LDP``, ``q* = q*_LDP``, ``z* = 1 - f + f z``.

    Privacy: ``(X_S, Y_P, eps)``-ULDP with ``Y_P`` = the base's outputs, tight whenever some base output
    attains the max share (all bases in this library). ``z_rule="zero"`` is also private (not tight);
    ``z_rule="published_unsafe"`` (OLH/Wheel bases only) uses 003's published z, which VIOLATES ULDP for
    ``s >= 2`` (docs/errata.md) and exists only to reproduce 003's figures.

    Any base (a user's ``ul.Mechanism`` too): what the base gives no closed form for is read off its exact channel
    once, at construction, outside tracing (``_glutf_base``): the share behind z (``share``) and, for a base
    without a per-report likelihood, the support ratio EM uses (``support_ratio``). A base whose channel cannot be
    read there (past the channel-size guard, or built inside ``jit``/``vmap``) is refused at construction with
    the reason, unless ``share`` is given.

    Attributes:
      base: LDP mechanism over ``s = len(sensitive)`` items: pure (``pure()``, a support function) for
        ``rule="pure"``; any with per-item support counts and an affine estimator for ``rule="non_pure"``.
      d: domain size (static).
      sensitive: sorted tuple of sensitive items (static, a proper subset of ``[0, d)``).
      rule: ``"pure"`` or ``"non_pure"`` (static).
      z_rule: ``"max"``, ``"zero"`` or ``"published_unsafe"`` (static).
      share: float64 leaf, the base's share :math:`\max_{i,m} p_{im}/\sum_t p_{tm}` where ``base.pure()`` has no
        closed form (``None`` otherwise): read off the channel; a caller's value is used only where the channel
        cannot be read (checked to lie in ``(0, 1]``).
      support_ratio: float64 leaf, ``t`` of the base's support-ratio likelihood read off its channel, for a pure
        base without ``likelihood().report`` or ``product`` (``None`` otherwise; EM then needs the base's own).
    """

    base: Any
    d: int = _pytree.static_field()
    sensitive: Any = _pytree.static_field()
    rule: str = _pytree.static_field(default="pure")
    z_rule: str = _pytree.static_field(default="max")
    share: Any = None
    support_ratio: Any = None

    def __post_init__(self):
        d, sensitive = check_common(self.d, self.sensitive, self.z_rule)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "sensitive", sensitive)
        check_base(self.base, len(sensitive), self.rule)
        pure = pure_ldp(self.base)
        if self.z_rule == "published_unsafe" and (pure is None or pure.z_published is None):
            raise ValueError(f"z_rule='published_unsafe' exists only for OLH/Wheel bases (uLH, uWheel), "
                             f"got {type(self.base).__name__}.")
        object.__setattr__(self, "share", _base_share(self.base, len(sensitive), self.z_rule, self.share))
        ratio = None
        if self.rule == "pure" and _glutf_base.needs_ratio(self.base):
            ratio = self.support_ratio if _traced(self.base) else _glutf_base.channel_ratio(self.base, len(sensitive))
        object.__setattr__(self, "support_ratio", ratio)

    @property
    def eps(self) -> Any:
        """The privacy budget (the base's ``eps`` leaf)."""
        return self.base.eps


def _traced(base: Any) -> bool:
    return not all(_validate.is_concrete(leaf) for leaf in jax.tree_util.tree_leaves(base))


def _base_share(base: Any, s: int, z_rule: str, given: Any) -> Any:
    """The share GLUTF keeps: ``None`` where the base has it in closed form (or z needs none); else read off the
    base's channel, or ``given`` (range-checked) where the channel cannot be read; a traced rebuild keeps it."""
    if not _glutf_base.needs_share(base, z_rule):
        return None
    if _traced(base):
        if given is None:
            return _glutf_base.channel_share(base, s)  # raises: no channel under tracing
        return given
    if int(base.num_outputs) * s <= _glutf_base.MAX_CHANNEL_ENTRIES:
        return _glutf_base.channel_share(base, s)
    if given is None:
        return _glutf_base.channel_share(base, s)  # raises: past the size guard, with what to supply
    return _glutf_base.check_share(base, s, given)


def pure_ldp(base: Any) -> Any:
    """``base.pure()`` when ``base`` is a pure LDP mechanism (a ``Pure`` record without ``z``), else ``None``."""
    pure = base.pure()
    return pure if pure is not None and pure.z is None else None


def check_base(base: Any, s: int, rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"Expected rule={rule!r} in {RULES}.")
    if not isinstance(base, _base.Mechanism):
        raise TypeError(f"Expected base to be a uldp_jax LDP mechanism, got {type(base).__name__}.")
    if getattr(base, "sensitive", None) is not None:  # field probe: privacy_spec() would build an s x s matrix
        raise TypeError(f"Expected base to be an LDP mechanism over the sensitive items, got {type(base).__name__}.")
    if rule == "pure" and pure_ldp(base) is None:
        raise TypeError(
            f"Expected base to be a pure LDP mechanism (pure() with z None, and a support function), got "
            f"{type(base).__name__}; use rule='non_pure' (003 eq 10) for other LDP mechanisms.")
    if base.d != s:
        raise ValueError(f"Expected base.d={base.d} to equal len(sensitive)={s} (the base runs over X_S).")
    if _report_space.num_stats(base) != base.d or (pure_ldp(base) is None and _estimation.affine(base) is None):
        raise TypeError(
            f"Expected base to aggregate to per-item support counts (num_stats == d) with a closed-form "
            f"debiasing, got {type(base).__name__} (num_stats={_report_space.num_stats(base)}); GLUTF's "
            "estimators (003 eqs 21, 30) need them.")


def glutf(base: Any, d: int, sensitive: Any, rule: str = "pure", z_rule: str = "max",
          share: Any = None) -> _base.Mechanism:
    """Transforms a pure LDP mechanism over the sensitive items into a ULDP mechanism (003 Algorithm 1).

    Args:
      base: pure LDP mechanism over ``s = len(sensitive)`` items (e.g. ``ul.SS(s, eps)``, ``ul.OLH(s, eps)``).
      d: domain size.
      sensitive: the sensitive items ``X_S`` (base item ``r`` is ``sorted(sensitive)[r]``).
      rule: ``"pure"`` (003 eq 9) or ``"non_pure"`` (003 eq 10).
      z_rule: ``"max"`` (docs/errata.md#003-theorem-1-glutfs-valid-z largest valid z, default), ``"zero"``, or ``"published_unsafe"``.
      share: the base's share for a base without a closed form whose channel is too large to read (see
        ``GLUTF``); ignored where the channel can be read.

    Returns:
      A ``GLUTF`` mechanism; when ``sensitive`` is the whole domain, ``base`` itself (ULDP reduces to LDP).

    Raises:
      TypeError: ``base`` is not a pure LDP mechanism.
      ValueError: bad ``d``, ``sensitive``, ``rule`` or ``z_rule``, or ``base.d != len(sensitive)``; a base
        without a closed-form share whose channel cannot be read (too large, or inside ``jit``/``vmap``) and no
        ``share``.
    """
    d, sensitive = check_common(d, sensitive, z_rule, allow_full=True)
    if len(sensitive) == d:
        check_base(base, d, rule)
        return base
    return GLUTF(base, d, sensitive, rule, z_rule, share)
