r"""Apple's Hadamard count mean sketch (HCMS; Apple Differential Privacy Team 2017; pure-LDP ``apple_cms``)."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _counts, _records, _report_space, _reports, _spec
from uldp_jax.mechanisms.hashing import _sketch, _sketch_forms as _forms, _walsh


class HCMS(_sketch.CountMeanSketch):
    r"""Apple's Hadamard count mean sketch with ``k`` shared hash functions into ``m`` cells (``m`` a power of 2).

    A user draws a row :math:`j` uniformly from ``[k]`` and a coefficient :math:`l` uniformly from ``[m]``, and
    sends ``(j, l, b)`` with :math:`b = H_m[l, h_j(x)]` (Sylvester's Hadamard matrix, scipy's ``hadamard``) kept
    w.p. :math:`e^\varepsilon/(e^\varepsilon+1)`, flipped otherwise: ``log2 k + log2 m + 1`` bits. The server
    adds :math:`k c b` to Apple's sketch at ``M[j, l]``, :math:`c = \frac{e^\varepsilon+1}{e^\varepsilon-1}`
    (``apple_sketch``), transforms :math:`M H_m^T` and estimates
    :math:`\hat f(x) = \frac{m}{m-1}(\frac1k\sum_i (MH^T)[i, h_i(x)] - \frac nm)` (``apple_estimate``), which
    ``debias`` is on the support counts :math:`T_x = \#\{u: b_u H[l_u, h_{j_u}(x)] = +1\}`, read off the report
    histogram with one fast Walsh-Hadamard transform per row. With ``k = 1`` and an injective hash it is the
    one-bit Hadamard mechanism ``HM`` (whose estimator knows there are no collisions).

    Reports: ``int32`` ``y = 2 (j m + l) + b`` in ``[0, 2 k m)`` (``b = 1``: the sign is -1), also the channel's
    columns. Public coins: the ``k`` hash functions, a fixed function of ``seed`` (``_sketch``; ``hashes()``);
    ``j`` and ``l`` are the user's own randomness, sent in the clear.

    Privacy: ``eps``-LDP for every choice of the hash functions (for fixed ``(j, l)`` the sign is binary RR),
    tight when some row separates two items.

    Not pure (``pure()``); Apple's estimator is unbiased over a random draw of the hashes, biased given them (see
    ``CMS``; ``ul.theory.hcms_item_mse`` is the hash-averaged risk).

    Attributes:
      d, eps, k, m, seed: see ``CountMeanSketch`` (defaults ``k=16``, ``m=1024``, ``seed=0``).

    References:
      Apple Differential Privacy Team, "Learning with privacy at scale", Apple ML Journal 1(8), 2017, Alg. 4-5;
      pure-LDP ``frequency_oracles/apple_cms`` (``CMSClient``/``CMSServer``, ``is_hadamard=True``).
    """

    report_kind = "hcms"

    def __post_init__(self):
        super().__post_init__()
        if self.m & (self.m - 1):
            raise ValueError(f"Expected m={self.m} to be a power of 2 (HCMS sends a coefficient of H_m).")
        if 2 * self.k * self.m > 2**31 - 1:
            raise ValueError(f"Expected 2 k m < 2**31 (int32 reports), got k={self.k}, m={self.m}.")

    @property
    def num_outputs(self) -> int:
        return 2 * self.k * self.m

    def rates(self) -> tuple[jax.Array, jax.Array]:
        return _forms.hcms_rates(self.eps)

    # ---- sampling ----------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports ``2 (j m + l) + b``."""
        xs = jnp.asarray(xs, jnp.int32)
        k_row, k_coef, k_flip = jax.random.split(key, 3)
        row = jax.random.randint(k_row, xs.shape, 0, self.k, dtype=jnp.int32)
        coef = _walsh.uniform_coefficient(k_coef, self.m, xs.shape)
        minus = _walsh.minus(coef, self._cells(row, xs))
        keep, _ = self.rates()
        flip = jax.random.uniform(k_flip, xs.shape, dtype=jnp.float32) >= keep
        return (2 * (row * self.m + coef) + (minus != flip).astype(jnp.int32)).astype(jnp.int32)

    # ---- statistic and estimation ----------------------------------------------------------------------------
    def _signed(self, hist: jax.Array) -> jax.Array:
        """``[..., k, m]``: the sum of the reported signs per row and coefficient, from the report histogram."""
        hist = hist.reshape(hist.shape[:-1] + (self.k, self.m, 2))
        return hist[..., 0] - hist[..., 1]

    def support_counts(self, hist: jax.Array) -> jax.Array:
        """Support counts ``[..., d]`` from a report histogram ``[..., 2 k m]``: ``(n + sum_j (S_j H)[h_j(x)]) / 2``
        (exact integers: twice the supporting reports)."""
        A = _walsh.fwht(self._signed(hist))  # [..., k, m]
        signed = jnp.sum(jnp.take_along_axis(A, self._table(), axis=-1), axis=-2)
        return (jnp.sum(hist, axis=-1, keepdims=True) + signed) // 2

    def aggregate(self, ys: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]``: support counts from the ``2 k m`` report histogram (O(n + k m log m + k d))."""
        return self.support_counts(_reports.bincount(ys, self.num_outputs, weights))

    def support(self, ys: jax.Array) -> jax.Array:
        """``bool[..., d]``: :math:`b H[l, h_j(x)] = +1` for every item (O(n d))."""
        ys = jnp.asarray(ys, jnp.int32)
        cell, b = ys // 2, ys % 2
        cells = self._cells((cell // self.m)[..., None], jnp.arange(self.d, dtype=jnp.int32))
        return _walsh.minus((cell % self.m)[..., None], cells) == (b[..., None] == 1)

    def apple_sketch(self, ys: jax.Array) -> jax.Array:
        """``float[k, m]``: Apple's sketch :math:`M[j, l] = k c \\sum b` (pure-LDP's ``CMSServer.sketch_matrix``),
        before the transform."""
        c = 1.0 / jnp.tanh(jnp.asarray(self.eps) / 2.0)
        return self.k * c * self._signed(_reports.bincount(ys, self.num_outputs)).astype(jnp.float32)

    def apple_estimate(self, sketch: jax.Array, n: Any) -> jax.Array:
        """``float[d]`` counts: :math:`\\frac{m}{m-1}(\\frac1k\\sum_i (MH^T)[i, h_i(x)] - \\frac nm)` (pure-LDP's
        ``CMSServer.estimate``; ``debias`` times ``n``)."""
        transformed = _walsh.fwht(sketch)
        mean = jnp.mean(jnp.take_along_axis(transformed, self._table(), axis=-1), axis=-2)
        return self.m / (self.m - 1.0) * (mean - jnp.asarray(n, mean.dtype) / self.m)

    def reports(self) -> _report_space.Reports:
        """Support counts per item (``d``); ``log2 k + log2 m + 1`` bits; reports checked as ints in
        ``[0, 2 k m)``."""
        return _report_space.Reports(stats=self.d, check=self._check, bits=math.log2(self.k) + math.log2(self.m) + 1)

    def _check(self, ys: Any) -> None:
        _validate.check_items("ys", ys, self.num_outputs, ndim=1)

    def counts(self) -> _records.Counts:
        """Exact, iid model: reports are iid from :math:`pQ`, one ``Multinomial(n, pQ)`` over the ``2 k m`` cells
        (:math:`pQ` by one FWHT per row), then its support counts. Fixed counts: ``None`` (the per-user path)."""

        def iid(key, n, p):
            return self.support_counts(_counts.multinomial(key, n, self.channel_matvec(p)))

        return _records.counts_record(self, iid=iid, draws=lambda iid_model: float(self.d + 2 * self.num_outputs))

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """``p Q`` (``float[2 k m]``): cell ``(j, l, b)`` gets :math:`(\\frac12 + (-1)^b \\frac{t}{2}(H P_j)_l)/(k m)`,
        ``t = tanh(eps/2)``, ``P_j`` the row's cell histogram of ``p``."""
        p = jnp.asarray(p)
        rows = jnp.broadcast_to(jnp.arange(self.k)[:, None], (self.k, self.d))
        P = jnp.zeros((self.k, self.m), p.dtype).at[rows, self._table()].add(jnp.broadcast_to(p, (self.k, self.d)))
        half = jnp.tanh(jnp.asarray(self.eps, p.dtype) / 2.0) * _walsh.fwht(P) / 2.0
        base = jnp.sum(p) / 2.0
        return jnp.stack([base + half, base - half], axis=-1).reshape(-1) / (self.k * self.m)

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _column_support(self) -> np.ndarray:
        """bool ``[2 k m, d]``: column ``(j, l, b)`` supports ``x`` when ``(-1)^b = H[l, h_j(x)]``."""
        _reports.check_channel_size("HCMS", self.d, self.num_outputs)
        signs = _walsh.signs(self.m, self.hashes())  # [m, k, d]: H[l, h_j(x)]
        sup = np.stack([signs > 0, signs < 0], axis=-2)  # [m, k, 2, d]
        return sup.transpose(1, 0, 2, 3).reshape(self.num_outputs, self.d)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        keep, flip = 1.0 / (1.0 + np.exp(-eps)), 1.0 / (1.0 + np.exp(eps))
        Q = np.where(self._column_support().T, keep, flip) / (self.k * self.m)
        return Q, np.ones(self.num_outputs, dtype=bool)

    def _columns(self, ys: Any) -> np.ndarray:
        return np.asarray(ys).astype(np.int64)
