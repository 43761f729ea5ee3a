"""Optimal binary context-aware mechanism (004 Theorem 2, eq 9) and its Warner / Mangat special cases."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _counts, _records, _spec


def _binary_q(eps12, eps21, xp):
    """Q of eq 9 in the stable form (divide by e^{eps21}); eps12 = inf is Mangat's RR."""
    A = xp.exp(-eps21)
    b = xp.exp(-eps12)
    den = -xp.expm1(-(eps12 + eps21))
    one_minus_a, one_minus_b = -xp.expm1(-eps21), -xp.expm1(-eps12)
    q00 = one_minus_a / den
    q11 = one_minus_b / den
    # Off-diagonal entries computed directly (not 1 - q) so that tiny probabilities keep full precision.
    q01 = one_minus_b * A / den
    q10 = b * one_minus_a / den
    return q00, q01, q10, q11, one_minus_a * one_minus_b / den


class BinaryCA(_base.Mechanism):
    r"""The universally optimal (E-LDP) mechanism on a binary domain (004 eq 9).

    Inputs and reports are items 0 and 1 (004's symbols 1 and 2). With :math:`E = [[0, \varepsilon_{12}],
    [\varepsilon_{21}, 0]]` it satisfies :math:`Q(y|0) \le e^{\varepsilon_{12}} Q(y|1)` and
    :math:`Q(y|1) \le e^{\varepsilon_{21}} Q(y|0)`, both tight, and dominates every other E-LDP binary
    mechanism for any utility obeying data processing. ``eps12 = eps21`` is Warner's RR (eq 10);
    ``eps12 = inf`` is Mangat's RR with :math:`p = e^{-\varepsilon_{21}}` (eq 11).

    Privacy: E-LDP with the E above (kind ``"eldp"``).
    """

    eps12: Any
    eps21: Any

    report_kind = "item"
    d = 2

    def __post_init__(self):
        e12 = _validate.as_param("eps12", self.eps12, lower=0.0, allow_inf=True)
        e21 = _validate.as_param("eps21", self.eps21, lower=0.0, allow_inf=True)
        for name, v in (("eps12", e12), ("eps21", e21)):  # finite values: the library's exact eps range
            if _validate.is_concrete(v) and np.any(np.isfinite(v)):
                _validate.check_eps(np.where(np.isfinite(v), v, 1.0), name)
        if _validate.is_concrete(e12) and _validate.is_concrete(e21) and np.any(np.isinf(e12) & np.isinf(e21)):
            raise ValueError(f"Expected at most one of eps12={self.eps12!r}, eps21={self.eps21!r} to be inf "
                             "(both inf is the identity channel: no privacy).")
        object.__setattr__(self, "eps12", e12)
        object.__setattr__(self, "eps21", e21)

    @property
    def num_outputs(self) -> int:
        return 2

    @property
    def eps(self) -> Any:
        """The binding (smallest) epsilon of the two constraints."""
        return jnp.minimum(jnp.asarray(self.eps12), jnp.asarray(self.eps21))

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        q00, _, q10, _, _ = _binary_q(jnp.asarray(self.eps12), jnp.asarray(self.eps21), jnp)
        u = jax.random.uniform(key, xs.shape, dtype=jnp.float32)
        return jnp.where(u < jnp.where(xs == 0, q00, q10), 0, 1).astype(jnp.int32)

    def counts(self) -> _records.Counts:
        """Exact: ``stats_0 = Bin(n_0, Q00) + Bin(n_1, Q10)``, ``stats_1 = n - stats_0``; iid:
        ``stats_0 ~ Bin(n, p_0 Q00 + p_1 Q10)``."""

        def fixed(key: jax.Array, counts: jax.Array) -> jax.Array:
            q00, _, q10, _, _ = _binary_q(jnp.asarray(self.eps12), jnp.asarray(self.eps21), jnp)
            zeros = _counts.binomial(key, counts, jnp.stack([q00, q10]).astype(counts.dtype))
            s0 = jnp.sum(zeros)
            return jnp.stack([s0, jnp.sum(counts) - s0])

        def iid(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
            q00, _, q10, _, _ = _binary_q(jnp.asarray(self.eps12), jnp.asarray(self.eps21), jnp)
            s0 = _counts.binomial(key, jnp.asarray(n, p.dtype), (p[0] * q00 + p[1] * q10).astype(p.dtype))
            return jnp.stack([s0, n - s0])

        return _records.counts_record(self, fixed, iid)

    def estimator(self) -> _records.Estimator:
        _, q01, q10, _, gap = _binary_q(jnp.asarray(self.eps12), jnp.asarray(self.eps21), jnp)
        return _records.Estimator(affine=(jnp.stack([gap, gap]), jnp.stack([q10, q01])))

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        e12 = float(np.asarray(self.eps12, np.float64))
        e21 = float(np.asarray(self.eps21, np.float64))
        q00, q01, q10, q11, _ = _binary_q(np.float64(e12), np.float64(e21), np)
        return np.array([[q00, q01], [q10, q11]], dtype=np.float64), np.ones(2, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        e12 = float(np.asarray(self.eps12, np.float64))
        e21 = float(np.asarray(self.eps21, np.float64))
        return _spec.PrivacySpec("eldp", np.array([[0.0, e12], [e21, 0.0]]), min(e12, e21), None)


def Warner(eps: Any) -> BinaryCA:
    """Warner's randomized response (004 eq 10): ``BinaryCA(eps, eps)``; eps-LDP."""
    eps = _validate.check_eps(eps)
    return BinaryCA(eps, eps)


def Mangat(eps: Any) -> BinaryCA:
    """Mangat's randomized response (004 eq 11): ``BinaryCA(inf, eps)``; item 0 is non-sensitive.

    Item 1 is always reported as 1; item 0 is reported as 1 w.p. ``e^{-eps}``. It is also
    ({1}, {1}, eps)-ULDP in 001's sense.
    """
    eps = _validate.check_eps(eps)
    return BinaryCA(np.inf, eps)
