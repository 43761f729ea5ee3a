r"""The one-bit Hadamard mechanism (Cormode, Kulkarni, Srivastava 2018; Apple's HCMS; pure-LDP ``hadamard_mechanism``).

A user samples one Hadamard coefficient ``j`` uniformly from ``[0, K)`` (``K`` the smallest power of two
``>= d``) and sends it with the sign :math:`H[x, j]` randomized by binary randomized response (kept w.p.
:math:`e^\varepsilon/(e^\varepsilon+1)`). The server sums the signs per coefficient and inverts the transform:
each coefficient :math:`\theta_j = \sum_x p_x H[x, j]` is estimated unbiasedly, and
:math:`p_x = \frac1K \sum_j H[x, j]\theta_j` (the rows of :math:`H_K` are orthogonal).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _counts, _family, _fields, _likelihood, _pytree, _records, _reports
from uldp_jax.mechanisms.core import _spec
from uldp_jax.mechanisms.hadamard import _hadamard, _forms as _hr_forms


def coefficient_size(d: int) -> int:
    """``K``: the smallest power of two ``>= d`` (item ``x`` owns row ``x`` of :math:`H_K`, as in pure-LDP)."""
    K = 1 << (int(d) - 1).bit_length()
    if K > _hadamard.MAX_HADAMARD_SIZE:
        raise ValueError(f"Expected d={d} <= {_hadamard.MAX_HADAMARD_SIZE} (Hadamard size {K} too large).")
    return K


class HM(_base.Mechanism):
    r"""One-bit Hadamard mechanism: report a uniform coefficient ``j`` and the sign :math:`H[x, j]`, kept w.p.
    :math:`e^\varepsilon/(e^\varepsilon+1)`, flipped otherwise.

    Reports are ``y = 2 j + b`` in ``[0, 2K)`` (``b = 1``: the reported sign is -1), so

    .. math:: Q(2j + b \mid x) = \frac1K\Big(\frac12 + \frac{c}{2}(-1)^b H[x, j]\Big),
              \qquad c = \frac{e^\varepsilon - 1}{e^\varepsilon + 1} = \tanh(\varepsilon/2).

    A report supports the items whose coefficient has the reported sign, so the mechanism is pure with
    :math:`p^* = e^\varepsilon/(e^\varepsilon+1)`, :math:`q^* = 1/2` (OLH with ``g = 2`` in the Hadamard basis).
    The statistic is the support count of every item, :math:`C = (n + H A)/2` with :math:`A_j = h_{2j} - h_{2j+1}`
    the signed sums of the report histogram ``h`` (one fast Walsh-Hadamard transform), so the estimate
    :math:`\hat p_x = (2C_x/n - 1)/c = (HA)_x/(nc)` is pure-LDP's and GLUTF (003) takes HM as a base. Its iid
    per-item variance is :math:`(1/c^2 - p_x^2)/n`, the same as ``HR``'s. Report: ``log2 K + 1`` bits.

    Privacy: ``eps``-LDP, tight (for fixed ``j`` the sign is binary RR; every ``x != x'`` differ at some ``j``).
    Public coins: none; the coefficient index is the user's own randomness, sent in the clear.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).

    References:
      Cormode, Kulkarni, Srivastava, "Marginal release under local differential privacy", SIGMOD 2018 (the
      Hadamard mechanism); Apple Differential Privacy Team (2017), HCMS; pure-LDP ``HadamardMechClient/Server``
      with ``t=1``.
    """

    d: int = _pytree.static_field()
    eps: Any

    report_kind = "coefficient"  # (j, sign) as one int; the statistic is support counts, not the histogram

    def __post_init__(self):
        coefficient_size(_fields.check_domain(self))

    @property
    def K(self) -> int:
        """The number of Hadamard coefficients: the smallest power of two ``>= d``."""
        return coefficient_size(self.d)

    @property
    def num_outputs(self) -> int:
        return 2 * self.K

    def keep(self) -> jax.Array:
        """P(the sign is kept) ``= e/(e+1)``."""
        return jax.nn.sigmoid(jnp.asarray(self.eps))

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports ``2 j + b`` in ``[0, 2K)``."""
        xs = jnp.asarray(xs, jnp.int32)
        k_j, k_flip = jax.random.split(key)
        j = _hadamard.uniform_index(k_j, self.K, xs.shape)
        minus = _hadamard.parity(xs & j) == 1  # H[x, j] = -1
        flip = jax.random.uniform(k_flip, xs.shape, dtype=jnp.float32) >= self.keep()
        return (2 * j + (minus != flip).astype(jnp.int32)).astype(jnp.int32)

    def support(self, ys: jax.Array) -> jax.Array:
        """``bool[..., d]``: the items each report supports (``H[x, j]`` equals the reported sign)."""
        ys = jnp.asarray(ys, jnp.int32)
        j, b = ys // 2, ys % 2
        return (_hadamard.parity(jnp.arange(self.d, dtype=jnp.int32) & j[..., None]) == b[..., None])

    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]`` support counts ``(n + H A)/2`` from the report histogram (exact integers: ``n + (HA)_x`` is
        twice the number of reports supporting ``x``)."""
        return self.support_counts(_reports.bincount(ys, 2 * self.K, weights))

    def support_counts(self, hist: jax.Array) -> jax.Array:
        """Support counts ``int[..., d]`` from a report histogram ``int[..., 2K]`` (one FWHT)."""
        signed = _hadamard.fwht(hist[..., 0::2] - hist[..., 1::2])[..., : self.d]
        return (jnp.sum(hist, axis=-1, keepdims=True) + signed) // 2

    def reports(self) -> _records.Reports:
        """Support counts per item (``d``); ``log2(2K)`` bits a report; reports checked as ints in ``[0, 2K)``."""
        return _records.Reports(stats=self.d, check=self._check)

    def _check(self, ys: Any) -> None:
        _validate.check_items("ys", ys, 2 * self.K, ndim=1)

    def estimator(self) -> _records.Estimator:
        """``E[C_x]/n = (c/2) p_x + 1/2``: the affine form, and its Bernoulli variance is exact (each user
        supports ``x`` independently w.p. ``1/2 + c p_x / 2`` in the iid model)."""
        c = jnp.tanh(jnp.asarray(self.eps) / 2.0)
        return _records.Estimator(affine=(jnp.full((self.d,), c / 2.0), jnp.full((self.d,), 0.5, c.dtype)))

    def counts(self) -> _records.Counts:
        """Exact: the report histogram (``sum_x Multinomial(n_x, Q[x])``, or one ``Multinomial(n, p Q)`` iid, ``p Q``
        by FWHT), then its support counts."""
        return _records.counts_record(
            self,
            fixed=lambda key, counts: self.support_counts(_counts.histogram_counts(key, self, counts)),
            iid=lambda key, n, p: self.support_counts(_counts.histogram_iid(key, self, n, p)),
            draws=lambda iid: float(self.d + 2 * self.K) if iid else float(self.d * 2 * self.K))

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """``p Q`` (``float[2K]``) by one FWHT: cell ``2j + b`` gets ``(sum p / 2 + (-1)^b c (H p)_j / 2) / K``."""
        p = jnp.asarray(p)
        emb = jnp.zeros(p.shape[:-1] + (self.K,), p.dtype).at[..., : self.d].set(p)
        half = jnp.tanh(jnp.asarray(self.eps) / 2.0) * _hadamard.fwht(emb) / 2.0
        base = jnp.sum(p, -1, keepdims=True) / 2.0
        return jnp.stack([base + half, base - half], axis=-1).reshape(p.shape[:-1] + (2 * self.K,)) / self.K

    def channel_rmatvec(self, w: jax.Array) -> jax.Array:
        """``Q w`` (``float[d]``) for ``w: float[2K]``: ``(sum w + c (H (w_+ - w_-))_x) / (2K)``."""
        w = jnp.asarray(w)
        signed = _hadamard.fwht(w[..., 0::2] - w[..., 1::2])[..., : self.d]
        return (jnp.sum(w, -1, keepdims=True) + jnp.tanh(jnp.asarray(self.eps) / 2.0) * signed) / (2 * self.K)

    def likelihood(self) -> _records.Likelihood:
        """EM on the reports: the support-ratio factors ``t + (1 - t) 1[x in S(y)]``, ``t = e^{-eps}``; the
        channel's columns are the reports themselves."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys),
                                   index=lambda ys: np.asarray(ys).astype(np.int64), support=self._column_support)

    def _column_support(self) -> np.ndarray:
        """float64 ``[2K, d]``: 1 where column ``2j + b`` supports item ``x``."""
        H = _hadamard.hadamard_matrix(self.K, rows=np.arange(self.d))  # [d, K]
        return np.stack([H > 0, H < 0], axis=-1).reshape(self.d, 2 * self.K).T.astype(np.float64)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, K = _spec.eps_value(self.eps), self.K
        _reports.check_channel_size("HM", self.d, 2 * K)
        keep, flip = 1.0 / (1.0 + np.exp(-eps)), 1.0 / (1.0 + np.exp(eps))
        H = _hadamard.hadamard_matrix(K, rows=np.arange(self.d))  # [d, K]
        Q = np.stack([np.where(H > 0, keep, flip), np.where(H < 0, keep, flip)], axis=-1) / K
        return Q.reshape(self.d, 2 * K), np.ones(2 * K, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    def pure(self) -> _records.Pure:
        """Pure LDP: ``p* = e/(e+1)``, ``q* = 1/2`` (two distinct rows agree on half the coefficients). GLUTF
        reads the largest share of one report off the channel (it depends on ``d``'s rows)."""
        keep = self.keep()
        return _records.Pure(keep, jnp.full_like(keep, 0.5))

    _closed_form = _family.Family("HM", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: _hr_forms.hr_item_nvar(m.eps, p))

    def item_variance(self, p: jax.Array, n: Any) -> jax.Array:
        """iid per-item variance of the estimate: ``(1/c^2 - p^2)/n``."""
        return _hr_forms.hr_item_nvar(self.eps, p) / jnp.asarray(n)
