"""``Family``: a mechanism's closed-form description (risk, pure probabilities, tunable parameter, optimum).

A mechanism answers ``closed_form()`` with one of these records (``Mechanism.closed_form``; default: its class's
``_closed_form``, ``None`` unless set: no closed form, so ``ul.theory`` uses the exact channel moments). The record holds pure functions of
``(eps, s, theta_n, param)``, so ``ul.tune`` and ``ul.tuning.optimize`` can relax and differentiate the
parameter without rebuilding mechanisms. LDP families use ``s = d`` and ``theta_n = 0``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax.numpy as jnp

from uldp_jax.mechanisms.core import _pytree

UNIT = lambda s: (0.0, 1.0)  # noqa: E731


def _exp_terms(eps):
    eps = jnp.asarray(eps)
    return jnp.exp(-eps), -jnp.expm1(-eps)


def ue_probs(eps, s, keep):
    t, _ = _exp_terms(eps)
    return keep, keep * t / ((1.0 - keep) + keep * t), None


def uue_probs(eps, s, keep):
    t, u = _exp_terms(eps)
    P, Q, _ = ue_probs(eps, s, keep)
    return P, Q, u / (1.0 + (s - 1.0) * t)


def urap_probs(eps, s, theta):
    t, u = _exp_terms(eps)
    P, Q, _ = ue_probs(eps, s, theta)
    return P, Q, theta * u


def urr_probs(eps, s, _unused=None):
    t, u = _exp_terms(eps)
    den = 1.0 + (s - 1.0) * t
    return 1.0 / den, t / den, u / den


def uss_probs(eps, s, k):
    t, u = _exp_terms(eps)
    den = k + (s - k) * t  # (k e + s - k) / e
    P = k / den
    Q = k * (k - 1.0 + (s - k) * t) / (den * (s - 1.0))
    Z = k * u / (k * u + s * t)
    return P, Q, Z


def ulh_probs(eps, s, g):
    t, u = _exp_terms(eps)
    return 1.0 / (1.0 + (g - 1.0) * t), 1.0 / g, u / (1.0 + (s - 1.0) * t)


def uwheel_probs(eps, s, l):  # noqa: E741
    t, u = _exp_terms(eps)
    return l / (l + (1.0 - l) * t), l, u / (1.0 + (s - 1.0) * t)


@dataclasses.dataclass(frozen=True)
class Family:
    """Closed-form description of one mechanism class.

    The contract ``ul.tune`` and ``ul.tuning.optimize`` rely on: ``risk``/``probs`` are pure JAX functions,
    differentiable in ``param`` over the whole relaxed domain; ``domain(s)`` is the set of valid values of
    ``param`` (open ``(lo, hi)`` by default, closed ``[lo, hi]`` with ``closed=True``, the integers of ``[lo, hi]``
    with ``integer=True``; ``hi = inf`` or ``hi >= 2**31 - 1`` is unbounded above); the tuner searches only
    there and checks its result against it (a ``ValueError`` otherwise). ``domain=None`` means ``(0, 1)``.

    Attributes:
      name: a label (the mechanism class name); also the static key under which ``ul.tune`` compiles.
      param: name of the tunable field (``None``: nothing to tune).
      risk: ``(eps, s, theta_n, param) -> n * MSE_fixed`` (``None`` with ``generic`` or ``item_nvar``): what
        ``ul.tune`` optimizes, a function of the parameters only.
      probs: ``(eps, s, param) -> (p*, q*, z*)`` (003 Def 6).
      ldp: True for LDP mechanisms (``s = d``, ``theta_n = 0``); False: the mechanism has ``sensitive``.
      integer: the parameter is an integer (static field).
      domain: ``s -> (lo, hi)``: open interval for continuous parameters (closed with ``closed``), inclusive
        range for integers.
      optimum: ``(eps, s, theta_n) -> param``: closed-form optimum (integer for integer parameters).
      generic: the risk comes from the instance's own ``pure()`` (003 eq 28), e.g. GLUTF.
      item_nvar: ``(mech, p) -> float[d]`` per-item ``n Var`` in the iid model, or ``None``: a risk that may
        depend on ``p`` and on the instance (the HR family; a user's sketch with hash collisions). Given, it is
        what ``ul.theory.mse`` / ``item_variance`` / ``l1`` and ``ul.study``'s theory column use (the fixed
        model subtracts ``p (1 - p)``, exact for an unbiased linear estimator); ``risk`` may then be ``None``.
      item_risk: ``(mech, p, n, model) -> float[d]`` per-item ``E (p_hat_x - p_x)^2`` (variance plus squared
        bias), for an estimator that is biased given the instance or whose risk is not ``n Var / n`` (a sketch
        whose shared hashes collide: ``CMS``, ``HCMS``). Given, ``ul.theory.item_variance`` and ``mse`` return it.
      closed: a continuous ``domain`` includes its end points.
      rebuild: ``(mech, value, theta_n) -> mech``: the tuned copy where setting ``param`` is not enough (hashing:
        the ``"full"`` family follows ``g``); ``None``: ``tuned``'s default.
    """

    name: str
    param: str | None
    risk: Callable | None
    probs: Callable | None
    ldp: bool
    integer: bool = False
    domain: Callable | None = None
    optimum: Callable | None = None
    generic: bool = False
    item_nvar: Callable | None = None
    item_risk: Callable | None = None
    closed: bool = False
    rebuild: Callable | None = None

    def tuned(self, mech: Any, value: Any, theta_n: Any = None) -> Any:
        """A copy of ``mech`` with ``param`` set to ``value`` (``ul.tune``'s result); ``theta_n``, the
        non-sensitive mass the tuning assumed, is recorded by a mechanism with a ``theta_n`` field (GLUTF)."""
        if self.rebuild is not None:
            return self.rebuild(mech, value, theta_n)
        changes = {self.param: value}
        if theta_n is not None and "theta_n" in {f.name for f in dataclasses.fields(mech)}:
            changes["theta_n"] = theta_n
        return _pytree.replace(mech, **changes)


def of_class(cls: type) -> Family | None:
    """The closed form a mechanism class declares for all its instances (``_closed_form``), or ``None``."""
    return getattr(cls, "_closed_form", None)
