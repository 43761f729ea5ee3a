"""Unary encoding: generalized RAPPOR (001 §2.4), UE (003), and the SUE/OUE presets."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _counts, _fields, _likelihood, _pytree, _records, _reports, _spec
from uldp_jax.mechanisms.core import _family
from uldp_jax.mechanisms.core import _nmse
from uldp_jax.mechanisms.core import _optima
from uldp_jax.mechanisms.core import _pure_uldp as _th


def keep_pair(theta: Any, eps: Any, default: bool, xp=jnp) -> tuple[Any, Any]:
    """``(theta, 1 - theta)``; for 001's default ``theta = sigmoid(eps / 2)`` both come from eps directly,
    so ``1 - theta = sigmoid(-eps / 2)`` keeps full precision at large eps (float32 would round theta to 1)."""
    if default:
        half = xp.asarray(eps) / 2.0
        return 1.0 / (1.0 + xp.exp(-half)), 1.0 / (1.0 + xp.exp(half))
    theta = xp.asarray(theta)
    return theta, 1.0 - theta


def resolve_theta(theta: Any, eps: Any) -> Any:
    """Checks an explicit keep-probability, or derives 001's default ``e^{eps/2}/(e^{eps/2}+1)`` from eps."""
    if theta is not None:
        return _validate.check_keep_probability("theta", theta)
    if not _validate.is_concrete(eps):
        return jax.nn.sigmoid(jnp.asarray(eps) / 2.0)
    # Derived from eps; 1 - theta is computed from eps too (keep_pair), so no float32 check is needed. The leaf
    # stays below 1 in float64 (it rounds to 1 beyond eps ~ 73); keep_pair never reads it for the default.
    theta = np.minimum(1.0 / (1.0 + np.exp(-np.asarray(eps, np.float64) / 2.0)), np.nextafter(1.0, 0.0))
    return _validate.as_param("theta", theta, 0.0, 1.0)


def set_theta(mech: Any) -> None:
    """Sets ``default_theta`` and the checked (or derived) ``theta`` of a RAPPOR-style mechanism (RAPPOR, uRAP).

    ``theta=None`` is eps's default; so is a ``theta`` that ``ul.replace`` carried over from a default-theta
    mechanism while it still equals eps's default (a new eps makes it an explicit theta, kept as it was)."""
    default = mech.theta is None or (mech.default_theta and _is_default(mech.theta, mech.eps))
    _fields.set_fields(mech, default_theta=default, theta=resolve_theta(None if default else mech.theta, mech.eps))


def _is_default(theta: Any, eps: Any) -> bool:
    """``theta`` is exactly the default ``resolve_theta(None, eps)`` (concrete values only)."""
    if not (_validate.is_concrete(theta) and _validate.is_concrete(eps)):
        return False
    return bool(np.array_equal(np.asarray(theta), np.asarray(resolve_theta(None, eps))))


def ue_probs(keep: Any, eps: Any, one_minus_keep: Any = None) -> tuple[jax.Array, jax.Array]:
    r"""(keep, q) of a unary encoding: ``q = keep / ((1 - keep) e^eps + keep)`` (computed with ``e^{-eps}``)."""
    keep = jnp.asarray(keep)
    omk = 1.0 - keep if one_minus_keep is None else one_minus_keep
    t = jnp.exp(-jnp.asarray(eps))
    return keep, keep * t / (omk + keep * t)


def ue_gap(keep: Any, eps: Any, one_minus_keep: Any = None) -> jax.Array:
    r"""``keep - q = keep (1 - keep)(1 - e^{-eps}) / ((1 - keep) + keep e^{-eps})`` without cancellation."""
    keep = jnp.asarray(keep)
    omk = 1.0 - keep if one_minus_keep is None else one_minus_keep
    eps = jnp.asarray(eps)
    return keep * omk * (-jnp.expm1(-eps)) / (omk + keep * jnp.exp(-eps))


def _ue_q64(keep: float, eps: float, one_minus_keep: float | None = None) -> float:
    omk = 1.0 - keep if one_minus_keep is None else one_minus_keep
    t = np.exp(-eps)
    return keep * t / (omk + keep * t)


def product_bernoulli_channel(probs: np.ndarray, protected_fn=None, comp: np.ndarray | None = None,
                              log: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Channel of independent bits: ``probs[x, j] = P(bit j = 1 | x)``; columns are bit patterns (bit j of y).

    ``comp`` optionally gives ``P(bit j = 0 | x)`` exactly (for probabilities within 1e-11 of one). With
    ``log=True`` returns ``log Q`` (products of ``d`` small factors underflow float64 at large ``d * eps``;
    the audit reads log ratios from it).
    """
    d, m = probs.shape
    _reports.check_channel_size("channel", d, 2**m)
    bits = _reports.bits_table(m)  # [2^m, m]
    # log Q(y|x) = sum_j log(bits ? p : 1-p); zero-probability factors give exact zeros.
    with np.errstate(divide="ignore"):
        lp1 = np.log(probs)
        lp0 = np.log1p(-probs) if comp is None else np.log(comp)
    # Masked sums (not a matmul) so that zero-probability bits give exact zeros, never 0 * -inf.
    logq = np.zeros((d, 2**m))
    for j in range(m):
        logq += np.where(bits[None, :, j], lp1[:, j : j + 1], lp0[:, j : j + 1])
    protected = np.ones(2**m, dtype=bool) if protected_fn is None else protected_fn(bits)
    return (logq if log else np.exp(logq)), protected


class _UnaryMixin:
    """Behaviour shared by UE and RAPPOR; subclasses define ``keep`` (P(own bit = 1))."""

    report_kind = "bits"

    @property
    def num_outputs(self) -> int:
        return 2**self.d

    def keep_pair(self, xp=jnp) -> tuple[Any, Any]:
        return keep_pair(self.keep, self.eps, getattr(self, "default_theta", False), xp)

    def probs(self) -> tuple[jax.Array, jax.Array]:
        keep, omk = self.keep_pair()
        return ue_probs(keep, self.eps, omk)

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``bool[..., d]`` reports."""
        keep, q = self.probs()
        own = xs[..., None] == jnp.arange(self.d, dtype=xs.dtype)
        u = jax.random.uniform(key, xs.shape + (self.d,), dtype=jnp.float32)
        return u < jnp.where(own, keep, q)

    def counts(self) -> _records.Counts:
        """Exact: ``stats_j = Bin(n_j, keep) + Bin(n - n_j, q)``, independent over j."""

        def fixed(key: jax.Array, counts: jax.Array) -> jax.Array:
            keep, q = self.probs()
            full = lambda v: jnp.full((self.d,), v, counts.dtype)
            return _counts.independent_bits(key, counts, full(keep), full(q))

        return _records.counts_record(self, fixed)

    def likelihood(self) -> _records.Likelihood:
        """EM: every bit is in the product likelihood (no invertible reports); em-pure: the support-ratio
        likelihood ``t + (1 - t) 1[x in S(y)]`` of each report (``core._likelihood``); the audit: the exact channel
        in log space (no underflow at large ``d * eps``)."""
        return _records.Likelihood(product=(np.ones(self.d, bool), False, self.eps),
                                   report=lambda ys: _likelihood.pure_terms(self, ys),
                                   log_channel=lambda: self.channel_matrix(log=True))

    def compact(self) -> _records.Compact:
        """Independent bits: own bit w.p. ``keep``, every other bit w.p. ``q``."""
        keep, q = self.probs()
        return _records.independent_bits(self.d, np.arange(self.d), jnp.full((self.d,), keep, jnp.float32), q)

    def estimator(self) -> _records.Estimator:
        keep, omk = self.keep_pair()
        _, q = ue_probs(keep, self.eps, omk)
        gap = ue_gap(keep, self.eps, omk)
        return _records.Estimator(affine=(jnp.full((self.d,), gap), jnp.full((self.d,), q)))

    def channel_matrix(self, log: bool = False) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        keep, omk = (float(v) for v in self.keep_pair(np))
        q = _ue_q64(keep, eps, omk)
        probs = np.full((self.d, self.d), q)
        np.fill_diagonal(probs, keep)
        comp = 1.0 - probs
        np.fill_diagonal(comp, omk)
        return product_bernoulli_channel(probs, comp=comp, log=log)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))


    def pure(self) -> _records.Pure:
        """Pure LDP (003 §2.3: a report supports its set bits): ``(keep, q)``, with GLUTF's closed forms."""
        keep, q = self.probs()

        def z_max(s: int) -> jax.Array:
            t = jnp.exp(-jnp.asarray(self.eps))
            return self.keep * -jnp.expm1(-jnp.asarray(self.eps)) / (1.0 + (s - 1) * t)

        return _records.Pure(keep, q, share=_th.ratio_share(self.eps, self.d), z_max=z_max)


class RAPPOR(_UnaryMixin, _base.Mechanism):
    r"""(theta, eps)-generalized RAPPOR (001 §2.4): one-hot encode, keep the own bit 1 w.p. ``theta``.

    Every other bit is 1 w.p. :math:`q = \theta/((1-\theta)e^\varepsilon+\theta)`. ``theta=None`` gives basic
    RAPPOR (SUE), :math:`\theta = e^{\varepsilon/2}/(e^{\varepsilon/2}+1)`; ``theta=1/2`` is OUE.

    Privacy: ``eps``-LDP for any ``theta`` in (0, 1), tight.

    References:
      Erlingsson et al. (CCS 2014); Wang et al. (USENIX Security 2017); Murakami & Kawamoto (2019) §2.4.
    """

    d: int = _pytree.static_field()
    eps: Any
    theta: Any = None
    default_theta: bool = _pytree.static_field(init=False, repr=False, default=False)

    _closed_form = _family.Family(
        "RAPPOR", "theta", lambda e, s, th, p: _nmse.ue_nmse(e, s, p), _family.ue_probs, ldp=True,
        domain=_family.UNIT, optimum=lambda e, s, th: _optima.optimal_theta(e, s, 0.0))

    def __post_init__(self):
        _fields.check_domain(self)
        set_theta(self)

    @property
    def keep(self) -> Any:
        return self.theta


class UE(_UnaryMixin, _base.Mechanism):
    r"""Unary encoding with keep-probability ``p`` (003 §4.2): own bit 1 w.p. ``p``, others w.p. ``q*``.

    :math:`q^* = p/(e^\varepsilon(1-p)+p)`. ``p=None`` defaults to the MSE-optimal ``p = 1/2`` (OUE).

    Privacy: ``eps``-LDP, tight.

    References:
      Wang et al. (USENIX Security 2017); He et al. (GLUTF) §4.2.
    """

    d: int = _pytree.static_field()
    eps: Any
    p: Any = None

    _closed_form = _family.Family(
        "UE", "p", lambda e, s, th, p: _nmse.ue_nmse(e, s, p), _family.ue_probs, ldp=True, domain=_family.UNIT,
        optimum=lambda e, s, th: _optima.optimal_theta(e, s, 0.0))

    def __post_init__(self):
        _fields.check_domain(self)
        _fields.set_fields(self, p=_validate.check_keep_probability("p", 0.5 if self.p is None else self.p))

    @property
    def keep(self) -> Any:
        return self.p


def OUE(d: int, eps: Any) -> UE:
    """Optimized unary encoding (Wang et al. 2017): ``UE`` with ``p = 1/2``."""
    return UE(d, eps, p=0.5)


def SUE(d: int, eps: Any) -> RAPPOR:
    """Symmetric unary encoding = basic RAPPOR: ``RAPPOR`` with ``theta = e^{eps/2}/(e^{eps/2}+1)``."""
    return RAPPOR(d, eps)
