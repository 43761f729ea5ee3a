"""Utility-optimized RAPPOR (001 Def 4), any theta."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _base, _compact, _counts, _family, _fields, _nmse, _optima, _pytree, _records, _reports
from uldp_jax.mechanisms.core import _spec
from uldp_jax.mechanisms.unary import _ue


class URAP(_fields.ULDPFields):
    r"""(X_S, theta, eps)-utility-optimized RAPPOR (001 Def 4).

    Sensitive bits follow the (theta, eps)-generalized RAPPOR: the own bit is 1 w.p. :math:`\theta`, other
    sensitive bits w.p. :math:`d_1 = \theta/((1-\theta)e^\varepsilon+\theta)`. A non-sensitive item sets its own
    bit w.p. :math:`1-d_2 = \theta(1-e^{-\varepsilon})`; all other non-sensitive bits are 0.
    ``theta=None`` is 001's default :math:`e^{\varepsilon/2}/(e^{\varepsilon/2}+1)`.

    Reports are ``bool[d]``. ``Y_P``: all non-sensitive bits 0; ``Y_I``: exactly one non-sensitive bit set
    (reports with two or more have probability 0; see docs/errata.md#001-uraps-output-space).

    Privacy: (X_S, Y_P, eps)-ULDP (001 Prop 3) for any theta in (0, 1), tight. As a pure ULDP protocol its
    support probabilities are ``p* = theta``, ``q* = d_1``.
    """

    theta: Any = None
    default_theta: bool = _pytree.static_field(init=False, repr=False, default=False)

    report_kind = "bits"

    def __post_init__(self):
        super().__post_init__()
        _ue.set_theta(self)

    @property
    def num_outputs(self) -> int:
        return 2**self.d

    def probs(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """(theta, d1, 1 - d2): own sensitive bit, other sensitive bit, own non-sensitive bit."""
        theta, omt = self.keep_pair()
        _, d1 = _ue.ue_probs(theta, self.eps, omt)
        return theta, d1, -theta * jnp.expm1(-jnp.asarray(self.eps))

    def keep_pair(self, xp=jnp):
        """``(theta, 1 - theta)``, exact at large eps for the default theta."""
        return _ue.keep_pair(self.theta, self.eps, self.default_theta, xp)

    def _sensitive_part(self, key: jax.Array, xs: jax.Array):
        theta, d1, keep_n = self.probs()
        items = jnp.asarray(self.sensitive, dtype=xs.dtype)
        k_s, k_n = jax.random.split(key)
        own = xs[..., None] == items
        bits_s = jax.random.uniform(k_s, xs.shape + (self.s,), dtype=jnp.float32) < jnp.where(own, theta, d1)
        nonsens = ~jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive))[xs]
        bit_n = nonsens & (jax.random.uniform(k_n, xs.shape, dtype=jnp.float32) < keep_n)
        return items, bits_s, bit_n

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``bool[..., d]`` (s + 1 uniform draws per user)."""
        items, bits_s, bit_n = self._sensitive_part(key, xs)
        own = xs[..., None] == jnp.arange(self.d, dtype=xs.dtype)
        out = own & bit_n[..., None]
        return out.at[..., items].set(bits_s)

    def revealed_inputs(self, ys: Any) -> jax.Array:
        """``-1`` for a report with no non-sensitive bit set (``Y_P``), else that bit's item, the input it reveals
        (a report with two such bits has probability 0; its first one is named)."""
        bits = jnp.asarray(_compact.to_dense(ys)).astype(bool)
        nonsens = bits & ~jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive))
        return jnp.where(jnp.any(nonsens, axis=-1), jnp.argmax(nonsens, axis=-1), -1).astype(jnp.int32)

    def counts(self) -> _records.Counts:
        """Exact: sensitive bits as UE (theta, d1); a non-sensitive bit j is ``Bin(n_j, 1 - d2)``."""

        def fixed(key: jax.Array, counts: jax.Array) -> jax.Array:
            a, b = self.estimator().affine
            return _counts.independent_bits(key, counts, jnp.asarray(a + b, counts.dtype), jnp.asarray(b, counts.dtype))

        return _records.counts_record(self, fixed)

    def likelihood(self) -> _records.Likelihood:
        """EM: the sensitive bits form the product likelihood; a non-sensitive bit identifies its input. The audit:
        the exact channel in log space (no underflow at large ``d * eps``)."""
        return _records.Likelihood(product=(_spec.sensitive_mask(self.d, self.sensitive), True, self.eps),
                                   log_channel=lambda: self.channel_matrix(log=True))

    def compact(self) -> _records.Compact:
        """Independent bits: own bit w.p. ``theta`` (sensitive) or ``1 - d2`` (non-sensitive); other sensitive bits
        w.p. ``d1``."""
        theta, d1, keep_n = self.probs()
        sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive))
        own = jnp.where(sens, theta, keep_n).astype(jnp.float32)
        return _records.independent_bits(self.d, np.asarray(sorted(self.sensitive)), own, d1)

    def _sample_stats(self, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``reports().sample``: ``aggregate(perturb_batch(...))`` without materialising the ``n x d`` reports."""
        if self.compact().stats:
            return _reports.default_sample_stats(self, key, xs, weights)
        items, bits_s, bit_n = self._sensitive_part(key, xs)
        w = jnp.ones(xs.shape, bool) if weights is None else weights.astype(bool)
        counts_s = jnp.sum(bits_s & w[:, None], axis=0, dtype=jnp.int32)
        counts = jnp.zeros(self.d, jnp.int32).at[xs].add((bit_n & w).astype(jnp.int32))
        return counts.at[items].set(counts_s)

    def estimator(self) -> _records.Estimator:
        _, d1, keep_n = self.probs()
        sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive))
        theta, omt = self.keep_pair()
        return _records.Estimator(affine=(jnp.where(sens, _ue.ue_gap(theta, self.eps, omt), keep_n),
                                          jnp.where(sens, d1, 0.0)))

    def channel_matrix(self, log: bool = False) -> tuple[np.ndarray, np.ndarray]:
        eps, d = _spec.eps_value(self.eps), self.d
        theta, omt = (float(v) for v in self.keep_pair(np))
        sens = _spec.sensitive_mask(d, self.sensitive)
        d1 = _ue._ue_q64(theta, eps, omt)
        probs = np.zeros((d, d))
        probs[:, sens] = d1
        probs[np.arange(d), np.arange(d)] = np.where(sens, theta, -theta * np.expm1(-eps))
        comp = 1.0 - probs
        comp[np.arange(d), np.arange(d)] = np.where(sens, omt, omt + theta * np.exp(-eps))  # 1 - theta(1 - e^-eps)
        return _ue.product_bernoulli_channel(probs, lambda bits: ~np.any(bits[:, ~sens], axis=1), comp=comp, log=log)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.uldp_spec(self.d, self.sensitive, _spec.eps_value(self.eps))


    _closed_form = _family.Family("URAP", "theta", _nmse.urap_nmse, _family.urap_probs, ldp=False,
                                  domain=_family.UNIT, optimum=_optima.optimal_theta)

    def pure(self) -> _records.Pure:
        """Pure ULDP: own sensitive bit, other sensitive bit, own non-sensitive bit (``probs``)."""
        return _records.Pure(*self.probs())

    def reports(self) -> _records.Reports:
        return _records.Reports(sample=self._sample_stats)
