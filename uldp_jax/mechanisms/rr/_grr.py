"""Generalized randomized response (k-ary RR, 001 eq 2)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _base, _counts, _fields, _likelihood, _pytree, _spec, _uniform, _records
from uldp_jax.mechanisms.core import _family
from uldp_jax.mechanisms.core import _nmse
from uldp_jax.mechanisms.core import _pure_uldp as _th


class GRR(_base.Mechanism):
    r"""eps-randomized response over ``d`` items (also called k-RR or direct encoding).

    Keeps the true item w.p. :math:`e^\varepsilon/(e^\varepsilon+d-1)`, otherwise reports one of the other
    :math:`d-1` items uniformly.

    Privacy: ``eps``-LDP, tight (every output has likelihood ratio exactly :math:`e^\varepsilon`).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf, > 0; may be a batch of values for a vmapped grid).

    References:
      Kairouz, Bonawitz, Ramage (2016); Murakami & Kawamoto (USENIX Security 2019), eq (2).
    """

    d: int = _pytree.static_field()
    eps: Any

    report_kind = "item"

    def __post_init__(self):
        _fields.check_domain(self)

    @property
    def num_outputs(self) -> int:
        return self.d

    def probs(self) -> tuple[jax.Array, jax.Array]:
        """(keep, other): probability of the true item and of each other item; stable for large eps."""
        t = jnp.exp(-jnp.asarray(self.eps))
        denom = 1.0 + (self.d - 1) * t
        return 1.0 / denom, t / denom

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns reports of the same shape."""
        _, other_p = self.probs()
        k_keep, k_other = jax.random.split(key)
        r = _uniform.uniform_ints(k_other, self.d - 1, xs.shape)
        other = r + (r >= xs).astype(jnp.int32)
        # the flip (prob (d - 1) q, from e^{-eps}) is the thresholded event: accurate down to 2^-32 at large eps
        flip = _uniform.bernoulli_words(jax.random.bits(k_keep, xs.shape, jnp.uint32), (self.d - 1) * other_p)
        return jnp.where(flip, other, xs).astype(jnp.int32)

    def counts(self) -> _records.Counts:
        """Exact: a row is ``alpha e_x + (1 - alpha) Uniform([d])``, ``alpha = keep - other >= 0`` (keep or
        redraw); iid: one ``Multinomial(n, p Q)``."""

        def fixed(key: jax.Array, counts: jax.Array) -> jax.Array:
            keep, other = self.probs()
            alpha = jnp.full((self.d,), keep - other, counts.dtype)
            return _counts.keep_or_common(key, counts, alpha, jnp.ones((self.d,), counts.dtype))

        def iid(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
            keep, other = self.probs()
            alpha = jnp.full((self.d,), keep - other, p.dtype)
            return _counts.keep_or_common_iid(key, n, p, alpha, jnp.ones((self.d,), p.dtype))

        return _records.counts_record(self, fixed, iid)


    def estimator(self) -> _records.Estimator:
        _, other = self.probs()
        a = -jnp.expm1(-jnp.asarray(self.eps)) / (1.0 + (self.d - 1) * jnp.exp(-jnp.asarray(self.eps)))
        return _records.Estimator(affine=(jnp.full((self.d,), a), jnp.full((self.d,), other)))

    def likelihood(self) -> _records.Likelihood:
        """EM: O(d) channel products on the histogram (``channel_matvec``, ``channel_rmatvec``); the support-ratio
        likelihood ``t + (1 - t) 1[x in S(y)]`` of each report (``core._likelihood``) for em-pure."""
        return _records.Likelihood(ops=(self.channel_matvec, self.channel_rmatvec),
                                   report=lambda ys: _likelihood.pure_terms(self, ys))

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """``p @ Q`` in O(d): ``Q = (keep - other) I + other 11^T`` (a keep-or-uniform mixture)."""
        gap, other = self.estimator().affine
        return gap[0] * p + other[0] * jnp.sum(p, axis=-1, keepdims=True)

    def channel_rmatvec(self, v: jax.Array) -> jax.Array:
        """``Q @ v`` in O(d) (``Q`` is symmetric for GRR)."""
        return self.channel_matvec(v)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        t = np.exp(-eps)
        keep, other = 1.0 / (1.0 + (self.d - 1) * t), t / (1.0 + (self.d - 1) * t)
        Q = np.full((self.d, self.d), other)
        np.fill_diagonal(Q, keep)
        return Q, np.ones(self.d, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))


    _closed_form = _family.Family("GRR", None, lambda e, s, th, _: _nmse.grr_nmse(e, s), _family.urr_probs,
                                  ldp=True)

    def pure(self) -> _records.Pure:
        """Pure LDP: ``p* = e/(e+d-1)``, ``q* = 1/(e+d-1)``; as a GLUTF base, every non-sensitive input needs
        ``z = 0``."""
        p, q = self.probs()
        return _records.Pure(p, q, share=_th.ratio_share(self.eps, self.d),
                             z_max=lambda s: jnp.zeros_like(jnp.asarray(self.eps, dtype=float)))
