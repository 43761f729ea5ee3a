r"""Thresholding with histogram encoding (THE; Wang, Blocki, Li, Jha, USENIX Security 2017 §4.3).

A user one-hot encodes ``x``, adds independent :math:`\mathrm{Lap}(2/\varepsilon)` noise to every coordinate (HE,
eps-LDP: the encoding has L1 sensitivity 2) and the aggregator keeps bit ``j`` iff the noisy coordinate exceeds the
threshold :math:`\theta`. Thresholding is post-processing, so a user may as well send the bits: bit ``j`` is 1 w.p.

.. math:: p = P(1 + L > \theta) = 1 - \tfrac12 e^{-\varepsilon(1-\theta)/2}\ (j = x), \qquad
          q = P(L > \theta) = \tfrac12 e^{-\varepsilon\theta/2}\ (j \ne x),

independently over ``j`` (``theta`` in ``[0, 1]``; the paper's range of interest is ``(1/2, 1)``). The channel is a
unary encoding with these ``(p, q)``; its exact worst log-ratio is
:math:`\log\big((2e^{\varepsilon(1-\theta)/2}-1)(2e^{\varepsilon\theta/2}-1)\big) \le \varepsilon` (strictly,
``the_exact_eps``): THE keeps HE's eps-LDP claim but never attains it (the audit reports ``tight=False``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _counts, _family, _fields, _likelihood, _pytree, _records, _spec
from uldp_jax.mechanisms.core import _pure_uldp as _th
from uldp_jax.mechanisms.unary._ue import product_bernoulli_channel

def the_probs(eps: Any, theta: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""``(p, 1 - p, q)`` of THE: ``1 - p = e^{-eps (1-theta)/2} / 2`` and ``q = e^{-eps theta/2} / 2``, each
    computed directly (no cancellation at large eps)."""
    eps, theta = jnp.asarray(eps), jnp.asarray(theta)
    omp = 0.5 * jnp.exp(-eps * (1.0 - theta) / 2.0)
    return 1.0 - omp, omp, 0.5 * jnp.exp(-eps * theta / 2.0)


def the_nvar(eps: Any, theta: Any) -> jax.Array:
    r"""Wang et al.'s :math:`n \mathrm{Var}^*` of THE (the variance of a zero-frequency item, times ``n``):

    .. math:: \frac{q(1-q)}{(p-q)^2} = \frac{2e^{\varepsilon\theta/2}-1}
              {(1+e^{\varepsilon(\theta-1/2)}-2e^{\varepsilon\theta/2})^2}.
    """
    p, _, q = the_probs(eps, theta)
    return q * (1.0 - q) / (p - q) ** 2


def the_nmse(eps: Any, d: Any, theta: Any) -> jax.Array:
    r""":math:`n \cdot` MSE (fixed counts, summed over items) of THE's unbiased estimator:
    :math:`(p(1-p) + (d-1) q (1-q)) / (p-q)^2`, whatever the true distribution."""
    p, omp, q = the_probs(eps, theta)
    return (p * omp + (d - 1.0) * q * (1.0 - q)) / (p - q) ** 2


def optimal_theta(eps: Any) -> jax.Array:
    r"""The threshold minimising ``the_nvar`` (Wang et al. §4.3 solve it numerically; pure-LDP and multi-freq-ldpy
    call SciPy's bounded search on ``[1/2, 1]``). In closed form: with :math:`u = e^{arepsilon	heta/2}` and
    :math:`c = e^{-arepsilon/2}`, ``d Var*/du = 0`` is :math:`3cu^2 - 2(1+c)u + 1 = 0`, whose larger root gives

    .. math:: 	heta^* = rac{2}{arepsilon}\log u, \qquad u = rac{1 + c + \sqrt{1 - c + c^2}}{3c},

    in ``(1/2, 1)`` for every eps (1/2 as eps -> 0). ``u - 1`` is computed without cancellation (``w = 1 - c``
    from ``expm1``), so the optimum holds full precision in float32 and at eps = 1e-3 or 50. Traceable."""
    eps = jnp.asarray(eps)
    w = -jnp.expm1(-eps / 2.0)  # 1 - c
    root = jnp.sqrt(1.0 - w + w * w)
    small = w < 0.5  # u - 1 = w / (root + 1 - 2w); for w >= 1/2 the same value as (root + 2w - 1) / (3 (1 - w))
    u_minus_1 = jnp.where(small, w / (root + 1.0 - 2.0 * jnp.where(small, w, 0.0)),
                          (root + 2.0 * w - 1.0) / (3.0 * jnp.where(small, 1.0, 1.0 - w)))
    return jnp.clip(2.0 / eps * jnp.log1p(u_minus_1), 0.5, 1.0)


def the_exact_eps(eps: Any, theta: Any) -> Any:
    r"""THE's exact LDP level :math:`\log\frac{p(1-q)}{(1-p)q} = \log\big((2e^{\varepsilon(1-\theta)/2}-1)
    (2e^{\varepsilon\theta/2}-1)\big)`, at most ``eps`` (NumPy or JAX values)."""
    p, omp, q = the_probs(eps, theta)
    return jnp.log(p) - jnp.log(omp) + jnp.log1p(-q) - jnp.log(q)


class THE(_base.Mechanism):
    r"""Thresholding with histogram encoding over ``d`` items: the bits of HE's noisy one-hot vector above ``theta``.

    Bit ``j`` is 1 w.p. :math:`p = 1 - \frac12 e^{-\varepsilon(1-\theta)/2}` for the user's own item, else
    :math:`q = \frac12 e^{-\varepsilon\theta/2}`, independently (the law of thresholding
    ``e_x + Lap(2/eps)^d``; the sampler draws the bits directly). Unbiased estimate
    :math:`\hat p_j = (C_j/n - q)/(p - q)`; :math:`n \mathrm{Var}^* = q(1-q)/(p-q)^2`. Report: ``d`` bits.

    Privacy: ``eps``-LDP (HE is, thresholding is post-processing); not tight: the exact level of the bits is
    ``the_exact_eps(eps, theta) < eps`` (what ``ul.audit`` finds).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget of HE's Laplace noise (leaf).
      theta: threshold in ``[0, 1]`` (leaf). ``None``: the variance-optimal threshold in ``[1/2, 1]``
        (``optimal_theta(eps)``, Wang et al. §4.3; pure-LDP and multi-freq-ldpy minimise the same objective).

    References:
      Wang, Blocki, Li, Jha, "Locally differentially private protocols for frequency estimation", USENIX
      Security 2017, §4.3 (THE); pure-LDP ``HEServer(use_the=True)``; multi-freq-ldpy ``HE_Aggregator_MI``.
    """

    d: int = _pytree.static_field()
    eps: Any
    theta: Any = None

    report_kind = "bits"

    _closed_form = _family.Family(
        "THE", "theta", lambda e, s, th, theta: the_nmse(e, s, theta),
        lambda e, s, theta: (the_probs(e, theta)[0], the_probs(e, theta)[2], None), ldp=True,
        domain=_family.UNIT, closed=True)  # ul.tune minimises this total risk; optimal_theta, the paper's Var*

    def __post_init__(self):
        _fields.check_domain(self)
        if self.theta is None and _validate.is_concrete(self.eps):
            with _th.x64():  # the default threshold to float64 precision (float32 would move it by ~1e-4)
                theta = np.asarray(optimal_theta(jnp.asarray(np.asarray(self.eps, np.float64))), np.float64)
        elif self.theta is None:
            theta = optimal_theta(self.eps)
        else:
            theta = self.theta
        theta = _validate.as_param("theta", theta, lower=0.0, upper=1.0, lower_open=False, upper_open=False)
        _fields.set_fields(self, theta=theta)

    @property
    def num_outputs(self) -> int:
        return 2**self.d

    def probs(self) -> tuple[jax.Array, jax.Array]:
        """``(p, q)``: P(own bit = 1), P(other bit = 1)."""
        p, _, q = the_probs(self.eps, self.theta)
        return p, q

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``bool[..., d]`` reports (the thresholded bits)."""
        p, q = self.probs()
        own = xs[..., None] == jnp.arange(self.d, dtype=xs.dtype)
        u = jax.random.uniform(key, xs.shape + (self.d,), dtype=jnp.float32)
        return u < jnp.where(own, p, q)

    def counts(self) -> _records.Counts:
        """Exact: ``stats_j = Bin(n_j, p) + Bin(n - n_j, q)``, independent over ``j``."""

        def fixed(key: jax.Array, counts: jax.Array) -> jax.Array:
            p, q = self.probs()
            full = lambda v: jnp.full((self.d,), v, counts.dtype)  # noqa: E731
            return _counts.independent_bits(key, counts, full(p), full(q))

        return _records.counts_record(self, fixed)

    def compact(self) -> _records.Compact:
        """Independent bits: own bit w.p. ``p``, every other bit w.p. ``q``."""
        p, q = self.probs()
        return _records.independent_bits(self.d, np.arange(self.d), jnp.full((self.d,), p, jnp.float32), q)

    def estimator(self) -> _records.Estimator:
        p, q = self.probs()
        return _records.Estimator(affine=(jnp.full((self.d,), p - q), jnp.full((self.d,), q)))

    def likelihood(self) -> _records.Likelihood:
        r"""EM: a report ``y`` has :math:`P(y|x) \propto t + (1-t) y_x` with THE's own ratio
        :math:`t = (1-p)q/(p(1-q)) = e^{-\text{the\_exact\_eps}}` (not ``e^{-eps}``: the library's product form
        assumes a tight UE, so THE gives per-report support-ratio factors instead); the audit: the log channel."""
        return _records.Likelihood(report=self._report_terms, log_channel=lambda: self.channel_matrix(log=True))

    def _report_terms(self, ys: Any) -> _likelihood.SupportRatio:
        t = self.pure().ratio
        sup = _likelihood.report_support(self, ys)
        n = sup.shape[0]
        empty = ~jnp.any(sup, axis=1)  # t on every item: a row scale, stored as 1 (t may underflow)
        low = jnp.where(empty, 1.0, t).astype(t.dtype)
        ones = jnp.ones(n, t.dtype)
        return _likelihood.SupportRatio(sup, jnp.arange(self.d, dtype=jnp.int32), low, ones, jnp.zeros(n, t.dtype),
                                        ones, jnp.zeros(self.d, t.dtype))

    def channel_matrix(self, log: bool = False) -> tuple[np.ndarray, np.ndarray]:
        eps, theta = _spec.eps_value(self.eps), float(np.asarray(self.theta, np.float64))
        omp, q = 0.5 * np.exp(-eps * (1.0 - theta) / 2.0), 0.5 * np.exp(-eps * theta / 2.0)
        probs = np.full((self.d, self.d), q)
        np.fill_diagonal(probs, 1.0 - omp)
        comp = 1.0 - probs
        np.fill_diagonal(comp, omp)
        return product_bernoulli_channel(probs, comp=comp, log=log)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    def pure(self) -> _records.Pure:
        """Pure LDP (a report supports its set bits): ``(p, q)``. The largest share of one report,
        ``max_{i,y} P(y|i) / sum_t P(y|t)``, is at a single set bit: ``r / (r + s - 1)`` with THE's own ratio
        ``r = e^{the_exact_eps}``; GLUTF's ``z`` then follows from its general rule (003 Theorem 1). ``ratio``:
        the support ratio ``1/r`` of THE's likelihood, which GLUTF's EM uses in place of ``e^{-eps}``."""
        p, q = self.probs()
        return _records.Pure(p, q, share=_th.ratio_share(the_exact_eps(self.eps, self.theta), self.d),
                             ratio=jnp.exp(-the_exact_eps(self.eps, self.theta)))
