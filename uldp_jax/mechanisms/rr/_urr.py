"""Utility-optimized randomized response (001 Def 3)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _counts, _family, _fields, _nmse, _spec, _uniform, _records


TABLE_MAX_D = 2**20  # perturb looks ranks up in an O(d) table up to this d, by binary search in X_S above it


class URR(_fields.ULDPFields):
    r"""(X_S, eps)-utility-optimized RR (001 Def 3): eps-RR on ``X_S``, Mangat-style on ``X_N``.

    With :math:`s=|X_S|`, :math:`c_1 = e^\varepsilon/(s+e^\varepsilon-1)`, :math:`c_2 = 1/(s+e^\varepsilon-1)`,
    :math:`c_3 = (e^\varepsilon-1)/(s+e^\varepsilon-1)`: a sensitive item is kept w.p. :math:`c_1` and replaced by
    each other sensitive item w.p. :math:`c_2`; a non-sensitive item is kept w.p. :math:`c_3` and replaced by each
    sensitive item w.p. :math:`c_2`. Reports are items; ``Y_P = X_S``, ``Y_I = X_N``.

    Privacy: (X_S, X_S, eps)-ULDP (001 Prop 2), tight; reports in ``X_N`` reveal the input.

    Attributes:
      d: domain size (static).
      sensitive: sorted tuple of sensitive item indices (static; any non-empty subset of ``[0, d)``).
      eps: privacy budget (leaf).
    """


    report_kind = "item"

    @property
    def num_outputs(self) -> int:
        return self.d

    def probs(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """(c1, c2, c3) of Def 3, computed with ``e^{-eps}`` (stable for large eps)."""
        eps = jnp.asarray(self.eps)
        t = jnp.exp(-eps)
        denom = 1.0 + (self.s - 1) * t
        return 1.0 / denom, t / denom, -jnp.expm1(-eps) / denom

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        _, c2, _ = self.probs()
        items = jnp.asarray(self.sensitive, dtype=jnp.int32)
        if self.d <= TABLE_MAX_D:  # one gather from a rank table (built once per trace; O(d) is small here)
            table = np.full(self.d, -1, np.int32)
            table[list(self.sensitive)] = np.arange(self.s, dtype=np.int32)
            r = jnp.asarray(table)[xs]
            sens, rank = r >= 0, jnp.maximum(r, 0)
        else:  # O(s) state, no O(d) host array: binary search in the sorted X_S (insertion point = rank)
            rank = jnp.searchsorted(items, xs).astype(jnp.int32)
            sens = items[jnp.clip(rank, 0, self.s - 1)] == xs
        k_keep, k_other = jax.random.split(key)
        # Sensitive x: one of the s - 1 other sensitive items; non-sensitive x: one of the s sensitive items.
        j = _uniform.uniform_ints(k_other, jnp.where(sens, max(self.s - 1, 1), self.s), xs.shape)
        j = jnp.where(sens, j + (j >= rank).astype(jnp.int32), j)
        other = items[jnp.clip(j, 0, self.s - 1)]
        # the flip (prob (s - 1) c2 or s c2, from e^{-eps}) is the thresholded event: accurate down to 2^-32
        flip_p = jnp.where(sens, max(self.s - 1, 0) * c2, self.s * c2)
        flip = _uniform.bernoulli_words(jax.random.bits(k_keep, xs.shape, jnp.uint32), flip_p)
        return jnp.where(flip, other, xs).astype(jnp.int32)

    def revealed_inputs(self, ys: jax.Array) -> jax.Array:
        """``-1`` for a sensitive item (``Y_P``), else the item itself: a non-sensitive report reveals its input."""
        items = jnp.asarray(self.sensitive, dtype=jnp.int32)
        ys = jnp.asarray(ys).astype(jnp.int32)
        sens = items[jnp.clip(jnp.searchsorted(items, ys), 0, self.s - 1)] == ys  # O(s): no O(d) table
        return jnp.where(sens, -1, ys)

    def counts(self) -> _records.Counts:
        """Exact: a row is ``alpha e_x + (1 - alpha) Uniform(X_S)``, ``alpha = c1 - c2 = c3`` for every input;
        iid: one ``Multinomial(n, p Q)``."""

        def fixed(key: jax.Array, counts: jax.Array) -> jax.Array:
            a, _ = self.estimator().affine
            sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive), counts.dtype)
            return _counts.keep_or_common(key, counts, jnp.asarray(a, counts.dtype), sens)

        def iid(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
            a, _ = self.estimator().affine
            sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive), p.dtype)
            return _counts.keep_or_common_iid(key, n, p, jnp.asarray(a, p.dtype), sens)

        return _records.counts_record(self, fixed, iid)

    def estimator(self) -> _records.Estimator:
        _, c2, c3 = self.probs()
        sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive))
        # c1 - c2 = c3: every item's support probability has slope c3; sensitive items add the offset c2.
        return _records.Estimator(affine=(jnp.full((self.d,), c3), jnp.where(sens, c2, 0.0)))

    def _channel_parts(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """``Q = diag(dg) + c2 1 sens^T``: (dg float[d], c2, sens float[d])."""
        a, _ = self.estimator().affine  # c1 - c2 on X_S, c3 on X_N
        _, c2, _ = self.probs()
        sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive), a.dtype)
        return a, c2, sens

    def likelihood(self) -> _records.Likelihood:
        """EM: O(d) channel products on the histogram (``channel_matvec``, ``channel_rmatvec``)."""
        return _records.Likelihood(ops=(self.channel_matvec, self.channel_rmatvec))

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """``p @ Q`` in O(d): ``(p Q)_y = dg_y p_y + c2 [y in X_S] sum(p)``."""
        dg, c2, sens = self._channel_parts()
        return dg * p + c2 * sens * jnp.sum(p, axis=-1, keepdims=True)

    def channel_rmatvec(self, v: jax.Array) -> jax.Array:
        """``Q @ v`` in O(d): ``(Q v)_x = dg_x v_x + c2 sum_{y in X_S} v_y`` (Q is not symmetric)."""
        dg, c2, sens = self._channel_parts()
        return dg * v + c2 * jnp.sum(sens * v, axis=-1, keepdims=True)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, s, d = _spec.eps_value(self.eps), self.s, self.d
        t = np.exp(-eps)
        denom = 1.0 + (s - 1) * t
        c1, c2, c3 = 1.0 / denom, t / denom, -np.expm1(-eps) / denom
        sens = _spec.sensitive_mask(d, self.sensitive)
        Q = np.zeros((d, d))
        Q[:, sens] = c2
        Q[np.arange(d), np.arange(d)] = np.where(sens, c1, c3)
        return Q, sens.copy()

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.uldp_spec(self.d, self.sensitive, _spec.eps_value(self.eps))

    _closed_form = _family.Family("URR", None, lambda e, s, th, _: _nmse.urr_nmse(e, s, th),
                                  _family.urr_probs, ldp=False)

    def pure(self) -> _records.Pure:
        """Pure ULDP (001 Def 3): ``(p*, q*, z*) = (c1, c2, c3)``."""
        return _records.Pure(*self.probs())
