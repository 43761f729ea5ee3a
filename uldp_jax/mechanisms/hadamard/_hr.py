r"""Hadamard response for eps-LDP (Acharya, Sun, Zhang 2019; the LDP baseline of 004 §7)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _base, _family, _fields, _pytree, _reports, _spec
from uldp_jax.mechanisms.hadamard import _hadamard, _histogram, _forms as _hr_forms


def hr_gap(eps: Any) -> jax.Array:
    r""":math:`c = (e^\varepsilon - 1)/(e^\varepsilon + 1) = \tanh(\varepsilon/2)`; ``R = 1/c`` scales the estimators."""
    return jnp.tanh(jnp.asarray(eps) / 2.0)


def hr_plus_prob(eps: Any) -> jax.Array:
    r"""Probability :math:`e^\varepsilon/(e^\varepsilon+1)` of reporting from the +1 set (stable sigmoid)."""
    return jax.nn.sigmoid(jnp.asarray(eps))


def hr_cells64(K: int, eps: float) -> tuple[float, float]:
    """Float64 channel entries ``(2e/(K(e+1)), 2/(K(e+1)))`` on the +1 and -1 sets of a size-``K`` block."""
    t = np.exp(-eps)
    return 2.0 / (K * (1.0 + t)), 2.0 * t / (K * (1.0 + t))


class HR(_histogram.HadamardCounts, _base.Mechanism):
    r"""Hadamard response: item ``x`` reports one index of ``[0, K)``, ``K`` the smallest power of two ``> d``.

    Item ``x`` owns row ``x + 1`` of the Sylvester-Hadamard matrix :math:`H_K` (0-indexed,
    :math:`H[i, j] = (-1)^{\mathrm{popcount}(i \& j)}`). With prob. :math:`e^\varepsilon/(e^\varepsilon+1)` the
    report is uniform on the row's +1 set, else uniform on its -1 set, so

    .. math:: Q(y|x) = \frac{1}{K}\Big(1 + \frac{e^\varepsilon - 1}{e^\varepsilon + 1} H[x+1, y]\Big).

    Statistics are the report histogram ``int32[K]``. The unbiased estimator is
    :math:`\hat p_x = R\, (H c)[x + 1] / n` with :math:`R = (e^\varepsilon+1)/(e^\varepsilon-1)`, computed for all
    items with one fast Walsh-Hadamard transform (``O(K log K)``, the matrix is never built). Communication:
    ``log2 K`` bits.

    Privacy: ``eps``-LDP, tight (every output has ratio exactly :math:`e^\varepsilon` between some two inputs).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf, > 0).

    References:
      Acharya, Sun, Zhang, "Hadamard response", AISTATS 2019; Acharya et al., context-aware LDP (seed 004) §2, §7.
    """

    d: int = _pytree.static_field()
    eps: Any

    report_kind = "item"

    def __post_init__(self):
        _hadamard.hadamard_size(_fields.check_domain(self))

    @property
    def K(self) -> int:
        """Hadamard size: the smallest power of two larger than ``d``."""
        return _hadamard.hadamard_size(self.d)

    @property
    def num_outputs(self) -> int:
        return self.K

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports in ``[0, K)`` of the same shape."""
        xs = jnp.asarray(xs, jnp.int32)
        return _hadamard.sample_signed_index(key, xs + 1, self.K, hr_plus_prob(self.eps), xs.shape)

    def decode(self, stats: jax.Array, n: Any) -> jax.Array:
        r"""Unbiased estimate :math:`\hat p_x = R (H c)[x+1] / n` from the histogram ``stats: int[K]`` (FWHT)."""
        W = _hadamard.fwht(stats)
        scale = 1.0 / (hr_gap(self.eps) * jnp.asarray(n))
        return W[..., 1 : self.d + 1] * scale

    def item_variance(self, p: jax.Array, n: Any) -> jax.Array:
        r"""Per-item variance of ``decode`` (iid model): :math:`(R^2 - p_x^2)/n`."""
        R = 1.0 / hr_gap(self.eps)
        return (R**2 - jnp.asarray(p) ** 2) / jnp.asarray(n)

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """Output distribution ``p Q`` (``float[K]``) of an input distribution ``p: float[d]``, by FWHT."""
        p = jnp.asarray(p)
        emb = jnp.zeros(p.shape[:-1] + (self.K,), p.dtype).at[..., 1 : self.d + 1].set(p)
        return (jnp.sum(p, -1, keepdims=True) + hr_gap(self.eps) * _hadamard.fwht(emb)) / self.K

    def channel_rmatvec(self, w: jax.Array) -> jax.Array:
        """``Q w`` (``float[d]``) for ``w: float[K]`` (the EM E-step's transpose product), by FWHT."""
        w = jnp.asarray(w)
        W = _hadamard.fwht(w)
        return (jnp.sum(w, -1, keepdims=True) + hr_gap(self.eps) * W[..., 1 : self.d + 1]) / self.K

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, K = _spec.eps_value(self.eps), self.K
        _reports.check_channel_size("HR", self.d, K)
        plus, minus = hr_cells64(K, eps)
        H = _hadamard.hadamard_matrix(K, rows=np.arange(1, self.d + 1))
        return np.where(H > 0, plus, minus), np.ones(K, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))


    _closed_form = _family.Family("HR", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: _hr_forms.hr_item_nvar(m.eps, p))
