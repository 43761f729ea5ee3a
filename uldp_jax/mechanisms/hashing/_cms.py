r"""Apple's count mean sketch (CMS; Apple Differential Privacy Team 2017; pure-LDP ``apple_cms``)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _counts, _records, _report_space, _reports, _spec
from uldp_jax.mechanisms.hashing import _sketch, _sketch_forms as _forms

MAX_CHANNEL_WIDTH = 16  # m: an exact channel enumerates the k * 2**m bit vectors


class CMSReport(NamedTuple):
    """A CMS report: the user's hash row and its privatized one-hot vector.

    Attributes:
      row: ``int32[...]`` hash row ``j`` in ``[0, k)``.
      bits: ``bool[..., m]``; ``True`` is ``+1``, ``False`` is ``-1``.
    """

    row: jax.Array
    bits: jax.Array


class CMS(_sketch.CountMeanSketch):
    r"""Apple's count mean sketch with ``k`` shared hash functions into ``m`` cells.

    A user draws a row :math:`j` uniformly from ``[k]``, encodes :math:`h_j(x)` as the vector in
    :math:`\{-1, +1\}^m` that is ``+1`` only there, flips every coordinate independently w.p.
    :math:`1/(e^{\varepsilon/2}+1)` and sends ``(j, v)``: ``log2 k + m`` bits. The server keeps Apple's sketch
    :math:`M[j] \mathrel{+}= k(\frac{c}{2} v + \frac12)`, :math:`c = \frac{e^{\varepsilon/2}+1}{e^{\varepsilon/2}-1}`
    (``apple_sketch``), and estimates :math:`\hat f(x) = \frac{m}{m-1}(\frac1k\sum_i M[i, h_i(x)] - \frac nm)`
    (``apple_estimate``), which ``debias`` is on the support counts :math:`T_x = \#\{u: v_u[h_{j_u}(x)] = +1\}`.

    Public coins: the ``k`` hash functions, a fixed function of ``seed`` (``_sketch``; ``hashes()``); the row
    ``j`` is each user's own randomness, sent in the clear.

    Privacy: ``eps``-LDP for every choice of the hash functions, tight when some row separates two items: for a
    fixed ``j`` two inputs' one-hot vectors differ in at most two coordinates, each flipped at ``eps/2``.

    Not pure (``pure()``): the support rate of another item depends on its collisions with ``x``. Apple's
    estimator is unbiased over a random draw of the hashes, biased given them (``estimator().exact`` is False;
    ``ul.theory.mse`` is the instance's risk with that bias, ``ul.theory.cms_item_mse`` the hash-averaged one).

    Attributes:
      d, eps, k, m, seed: see ``CountMeanSketch`` (defaults ``k=16``, ``m=1024``, ``seed=0``).

    Channel columns: ``j * 2**m + sum_l bits_l 2**l`` (``m <= 16``).

    References:
      Apple Differential Privacy Team, "Learning with privacy at scale", Apple ML Journal 1(8), 2017, Alg. 1-3;
      pure-LDP ``frequency_oracles/apple_cms`` (``CMSClient``/``CMSServer``, ``is_hadamard=False``).
    """

    report_kind = "cms"

    @property
    def num_outputs(self) -> int:
        return self.k * 2**self.m

    def rates(self) -> tuple[jax.Array, jax.Array]:
        return _forms.cms_rates(self.eps)

    # ---- sampling ----------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> CMSReport:
        """Randomizes ``xs: int32[...]``; returns ``CMSReport`` (``row`` of shape ``xs.shape``, ``bits`` with a
        trailing ``m``)."""
        xs = jnp.asarray(xs, jnp.int32)
        k_row, k_flip = jax.random.split(key)
        row = jax.random.randint(k_row, xs.shape, 0, self.k, dtype=jnp.int32)
        cell = self._cells(row, xs)
        _, flip = self.rates()
        flipped = jax.random.uniform(k_flip, xs.shape + (self.m,), dtype=jnp.float32) < flip
        return CMSReport(row, (jnp.arange(self.m, dtype=jnp.int32) == cell[..., None]) != flipped)

    def _sample(self, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """The support counts of ``perturb_batch``'s reports in law, without the ``n x m`` bits: per sketch cell,
        ``Binomial(users whose one-hot is there, keep) + Binomial(the row's other users, flip)``."""
        xs = jnp.reshape(jnp.asarray(xs, jnp.int32), (-1,))
        k_row, k_bits = jax.random.split(key)
        row = jax.random.randint(k_row, xs.shape, 0, self.k, dtype=jnp.int32)
        w = jnp.ones(xs.shape, jnp.float32) if weights is None else jnp.reshape(weights, (-1,)).astype(jnp.float32)
        hot = jnp.zeros(self.k * self.m, jnp.float32).at[row * self.m + self._cells(row, xs)].add(w)
        return self._from_hot_cells(k_bits, hot.reshape(self.k, self.m)).astype(jnp.int32)

    def _from_hot_cells(self, key: jax.Array, hot: jax.Array) -> jax.Array:
        """Support counts from ``hot[j, l]``, the users of row ``j`` whose one-hot is at ``l`` (exact law)."""
        keep, flip = self.rates()
        cold = jnp.sum(hot, axis=1, keepdims=True) - hot
        ones = _counts.binomial(key, jnp.stack([hot, cold]),
                                jnp.stack([jnp.full(hot.shape, keep, hot.dtype), jnp.full(hot.shape, flip, hot.dtype)]))
        return self.support_counts(ones[0] + ones[1])

    # ---- statistic and estimation ----------------------------------------------------------------------------
    def sketch_counts(self, ys: CMSReport, weights: jax.Array | None = None) -> jax.Array:
        """``int32[k, m]``: the ``+1`` bits per row and cell (weights: 0/1 per user)."""
        row = jnp.reshape(ys.row, (-1,))
        bits = jnp.reshape(ys.bits, (-1, self.m)).astype(jnp.int32)
        if weights is not None:
            bits = bits * jnp.reshape(weights, (-1, 1)).astype(jnp.int32)
        return jnp.zeros((self.k, self.m), jnp.int32).at[row].add(bits)

    def support_counts(self, ones: jax.Array) -> jax.Array:
        """``T[..., d]``: :math:`\\sum_j \\mathrm{ones}[j, h_j(x)]`, the reports supporting each item."""
        return jnp.sum(jnp.take_along_axis(ones, self._table(), axis=-1), axis=-2)

    def aggregate(self, ys: CMSReport, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]``: support counts, read off the ``k x m`` sketch (O(n m + k d))."""
        return self.support_counts(self.sketch_counts(ys, weights))

    def support(self, ys: CMSReport) -> jax.Array:
        """``bool[..., d]``: ``v[h_j(x)] = +1`` for every item (O(n d))."""
        cells = self._cells(jnp.asarray(ys.row)[..., None], jnp.arange(self.d, dtype=jnp.int32))
        return jnp.take_along_axis(jnp.asarray(ys.bits), cells, axis=-1)

    def apple_sketch(self, ys: CMSReport) -> jax.Array:
        """``float[k, m]``: Apple's sketch :math:`M[j] = \\sum_{u: j_u = j} k(\\frac c2 v_u + \\frac12)` (pure-LDP's
        ``CMSServer.sketch_matrix``)."""
        ones = self.sketch_counts(ys).astype(jnp.float32)
        users = jnp.zeros(self.k, jnp.float32).at[jnp.reshape(ys.row, (-1,))].add(1.0)[:, None]
        c = 1.0 / jnp.tanh(jnp.asarray(self.eps) / 4.0)
        return self.k * (c * ones - (c - 1.0) * users / 2.0)

    def apple_estimate(self, sketch: jax.Array, n: Any) -> jax.Array:
        """``float[d]`` counts :math:`\\frac{m}{m-1}(\\frac1k\\sum_i M[i, h_i(x)] - \\frac nm)` (pure-LDP's
        ``CMSServer.estimate``; ``debias`` times ``n``)."""
        mean = jnp.mean(jnp.take_along_axis(sketch, self._table(), axis=-1), axis=-2)
        return self.m / (self.m - 1.0) * (mean - jnp.asarray(n, mean.dtype) / self.m)

    def reports(self) -> _report_space.Reports:
        """Support counts per item (``d``); ``log2 k + m`` bits; reports drawn as sketch counts (``_sample``)."""
        return _report_space.Reports(stats=self.d, check=self._check, bits=math.log2(self.k) + self.m,
                                     sample=self._sample)

    def _check(self, ys: Any) -> None:
        _reports.default_check(self, ys)
        row = ys.row
        if _validate.is_concrete(row) and np.size(row) and (np.min(row) < 0 or np.max(row) >= self.k):
            raise ValueError(f"Expected ys.row in [0, k={self.k}), got values in [{np.min(row)}, {np.max(row)}].")

    def counts(self) -> _records.Counts:
        """Exact: the users per (row, one-hot cell), then two binomials per cell. Fixed counts: each item's users
        split over the rows by ``Multinomial(n_x, 1/k)``; iid: one ``Multinomial(n, P_j[l] / k)`` over the ``k m``
        cells (``P_j``: the row's cell histogram of ``p``)."""

        def fixed(key, counts):
            k_split, k_bits = jax.random.split(key)
            per_row = _counts.multinomial_rows(k_split, counts, jnp.full(self.k, 1.0 / self.k, counts.dtype))
            rows = jnp.broadcast_to(jnp.arange(self.k)[:, None], (self.k, self.d))
            hot = jnp.zeros((self.k, self.m), counts.dtype).at[rows, self._table()].add(per_row.T)
            return self._from_hot_cells(k_bits, hot)

        def iid(key, n, p):
            k_cells, k_bits = jax.random.split(key)
            hot = _counts.multinomial(k_cells, n, self._cell_probs(p).reshape(-1))
            return self._from_hot_cells(k_bits, hot.reshape(self.k, self.m))

        cells = float(self.k * self.m)
        return _records.counts_record(self, fixed=fixed, iid=iid,
                                      draws=lambda iid_model: 3 * cells + (0.0 if iid_model else self.d * self.k))

    def _cell_probs(self, p: jax.Array) -> jax.Array:
        """``float[k, m]``: P(row ``j``, one-hot at ``l``) ``= P_j[l] / k`` for ``x ~ p``."""
        rows = jnp.broadcast_to(jnp.arange(self.k)[:, None], (self.k, self.d))
        mass = jnp.zeros((self.k, self.m), p.dtype).at[rows, self._table()].add(jnp.broadcast_to(p, (self.k, self.d)))
        return mass / self.k

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _bits(self) -> np.ndarray:
        if self.m > MAX_CHANNEL_WIDTH:
            raise ValueError(f"CMS: the exact channel enumerates k * 2**m bit vectors; m={self.m} is above "
                             f"{MAX_CHANNEL_WIDTH}. Use a small m for exact channels and audits.")
        _reports.check_channel_size("CMS", self.d, self.num_outputs)
        return _reports.bits_table(self.m)  # [2**m, m]

    def _column_support(self) -> np.ndarray:
        """bool ``[k 2**m, d]``: column ``(j, v)`` supports ``x`` when ``v[h_j(x)] = +1``."""
        bits, H = self._bits(), self.hashes()
        return np.concatenate([bits[:, H[j]] for j in range(self.k)], axis=0)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """``exp`` of ``_log_channel`` (whose bit products ``ul.audit`` reads in log space at large ``m eps``)."""
        logQ, protected = self._log_channel()
        return np.exp(logQ), protected

    def _log_channel(self) -> tuple[np.ndarray, np.ndarray]:
        """:math:`\\log Q(j, v \\mid x) = -\\log k + (m-N)\\log P + N\\log(1-P) + (\\varepsilon/2)(2 v_{h_j(x)} - 1)`,
        ``P`` the keep rate, ``N`` the ``+1`` count of ``v`` (the all-``-1`` truth's probability, corrected at
        ``h_j(x)``)."""
        eps = _spec.eps_value(self.eps)
        bits = self._bits()
        N = bits.sum(axis=1)
        log_keep, log_flip = -np.logaddexp(0.0, -eps / 2.0), -np.logaddexp(0.0, eps / 2.0)
        base = -np.log(self.k) + (self.m - N) * log_keep + N * log_flip  # [2**m]
        sup = self._column_support().T  # [d, k 2**m]
        logQ = np.tile(base, self.k)[None, :] + (eps / 2.0) * (2.0 * sup - 1.0)
        return logQ, np.ones(self.num_outputs, dtype=bool)

    def likelihood(self) -> _records.Likelihood:
        """The sketch's support-ratio likelihood (``CountMeanSketch.likelihood``) and the exact log channel."""
        return super().likelihood()._replace(log_channel=self._log_channel)

    def _columns(self, ys: CMSReport) -> np.ndarray:
        if self.m > MAX_CHANNEL_WIDTH:
            raise ValueError(f"CMS: channel columns need m <= {MAX_CHANNEL_WIDTH}, got m={self.m}.")
        bits = np.asarray(ys.bits).astype(np.int64)
        return np.asarray(ys.row).astype(np.int64) * 2**self.m + (bits << np.arange(self.m)).sum(axis=-1)
