"""Wrong mechanisms a user could write, each a small ``ul.Mechanism`` subclass defined outside the package, that
``ul.check`` must catch (issue 53, "ul.check passes user mechanisms that are wrong"; issue 54, items 2 and 4).

Each docstring says what is wrong and which row of ``ul.check`` names it (``tests/test_check_mutants.py``).
``CMS`` and ``THE`` are honest mechanisms a researcher writes (Apple's count-mean sketch, thresholded histogram
encoding); their wrong parts are the standard CMS estimator (biased on a finite hash table) and THE's
``Likelihood(product=...)`` (which takes the rate ``exp(-eps)``, not THE's).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.mechanisms.core import _estimation, _records

from tests.outside_mechanisms import Keep


class KeyIgnored(Keep):
    """``perturb_batch`` ignores its key: the same reports for every key, every ``ul.simulate`` repetition equal
    (``keys``)."""

    def perturb_batch(self, key, xs):
        return Keep.perturb_batch(self, jax.random.key(0), xs)


class NumpyRandom(Keep):
    """Keeps with NumPy randomness: frozen into the compiled function, the same reports for every key
    (``keys``)."""

    def perturb_batch(self, key, xs):
        rng = np.random.default_rng()
        keep = jnp.asarray(rng.random(xs.shape), jnp.float32) < self.keep()
        other = jnp.asarray(rng.integers(0, self.d - 1, xs.shape), jnp.int32)
        return jnp.where(keep, xs, other + (other >= xs)).astype(jnp.int32)


class NegativeReports(Keep):
    """Reports shifted by one: report -1 occurs (``reports``)."""

    def perturb_batch(self, key, xs):
        return Keep.perturb_batch(self, key, xs) - 1


class PairReports(Keep):
    """Item reports of shape ``[n, 2]`` (``reports``)."""

    def perturb_batch(self, key, xs):
        ys = Keep.perturb_batch(self, key, xs)
        return jnp.stack([ys, ys], axis=1)


class FractionLeak(Keep):
    """Float reports whose fractional part is the input: ``y + x / 10`` (``reports``)."""

    def perturb_batch(self, key, xs):
        return Keep.perturb_batch(self, key, xs).astype(jnp.float32) + xs.astype(jnp.float32) / 10.0


PAD = 4096  # Padded's outputs per item: at 20,000 draws every cell expects < 5 reports (the chi-square pools all)


class Padded(ul.Mechanism):
    """Keep's report ``y`` widened to ``PAD`` outputs ``y * PAD + u`` (``u`` uniform): an honest channel whose
    every output is rare."""

    d: int = ul.static_field()
    eps: float
    report_kind = "item"

    @property
    def num_outputs(self):
        return self.d * PAD

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        pad = jax.random.randint(k2, xs.shape, 0, PAD, jnp.int32)
        return Keep(self.d, self.eps).perturb_batch(k1, xs) * PAD + pad

    def channel_matrix(self):
        Q, _ = Keep(self.d, self.eps).channel_matrix()
        return jnp.repeat(Q, PAD, axis=1) / PAD, jnp.ones(self.d * PAD, dtype=bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)


class RareLeak(Padded):
    """4% of reports name the input exactly (output ``x * PAD``, one the channel calls rare): hidden from the
    chi-square test by its pooled cells (``leak``)."""

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        tell = jax.random.uniform(k2, xs.shape, jnp.float32) < 0.04
        return jnp.where(tell, xs * PAD, Padded.perturb_batch(self, k1, xs))


class SlightlyLeaky(Keep):
    """The channel of eps, the sampler of ``1.05 eps`` (at d = 8 and eps = 1 the chi-square test of 20,000 draws
    per input sees it for a few keys only; ``leak``)."""

    def perturb_batch(self, key, xs):
        return Keep(self.d, 1.05 * self.eps).perturb_batch(key, xs)


class ClippedDebias(Keep):
    """``debias`` clipped at 0: exact on point masses, but not affine, so biased (``debias``)."""

    def estimator(self):
        return _records.Estimator(debias=lambda stats, n: jnp.maximum(_estimation.default_debias(self, stats, n), 0))


class FixedNDebias(Keep):
    """``debias`` that ignores ``n`` (it assumes 1000 users) (``debias``)."""

    def estimator(self):
        return _records.Estimator(debias=lambda stats, n: _estimation.default_debias(self, stats, 1000.0))


class ShortDebias(Keep):
    """``debias`` that returns ``d - 1`` values (``debias``)."""

    def estimator(self):
        return _records.Estimator(debias=lambda stats, n: _estimation.default_debias(self, stats, n)[:-1])


class Float16Draws(Keep):
    """Keep's law drawn with a float16 uniform: probabilities rounded to multiples of 2^-10, so at d = 2 and
    eps = 1e-3 it keeps w.p. 513/1024 (realized eps 3.9e-3) (``draws``)."""

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        other = jax.random.randint(k2, xs.shape, 0, self.d - 1, jnp.int32)
        keep = jax.random.uniform(k1, xs.shape, jnp.float16) < self.keep()
        return jnp.where(keep, xs, other + (other >= xs)).astype(jnp.int32)


def float16_realized_eps(eps: float) -> float:
    """The eps ``Float16Draws(2, eps)`` realizes, exactly: jax's float16 uniform takes the values ``k / 1024``."""
    keep = 1.0 / (1.0 + math.exp(-eps))
    kept = math.ceil(np.float32(keep) * 1024) / 1024  # P(k / 1024 < keep), k uniform in [0, 1024)
    return math.log(kept / (1.0 - kept))


class CMSReport(NamedTuple):
    """One CMS report: the hash row ``j`` and the ``k`` perturbed bits."""

    j: jax.Array  # int32[n]
    bits: jax.Array  # bool[n, k]


class CMS(ul.Mechanism):
    """Apple's count-mean sketch (one-hot of ``h_j(x)`` over ``k`` cells, each bit flipped w.p.
    ``1 / (1 + e^{eps / 2})``, ``j`` uniform over ``h`` hash rows) with its standard estimator, which assumes ideal
    hashes: on this fixed table it is biased (up to 2/3 here); ``ul.check`` sees it with ``statistic=``."""

    d: int = ul.static_field()
    eps: float
    k: int = ul.static_field(default=4)
    h: int = ul.static_field(default=4)
    report_kind = "cms"

    def table(self):
        return np.random.default_rng(7).integers(0, self.k, size=(self.h, self.d))  # h_j(x): a fixed table

    def flip(self):
        return 1.0 / (1.0 + jnp.exp(self.eps / 2.0))

    @property
    def num_outputs(self):
        return self.h * 2**self.k

    def perturb_batch(self, key, xs):
        kj, kb = jax.random.split(key)
        j = jax.random.randint(kj, xs.shape, 0, self.h, jnp.int32)
        onehot = jnp.asarray(self.table())[j, xs][:, None] == jnp.arange(self.k)
        flip = jax.random.uniform(kb, (xs.shape[0], self.k), jnp.float32) < self.flip()
        return CMSReport(j, onehot ^ flip)

    def aggregate(self, ys, weights=None):
        w = jnp.ones(ys.j.shape, jnp.int32) if weights is None else weights.astype(jnp.int32)
        rows = jax.nn.one_hot(ys.j, self.h, dtype=jnp.int32) * w[:, None]  # [n, h]
        sums = rows.T @ ys.bits.astype(jnp.int32)  # [h, k]: bit sums per hash row
        return jnp.concatenate([sums.reshape(-1), rows.sum(0)])

    def reports(self):
        return _records.Reports(stats=self.h * self.k + self.h, bits=math.log2(self.h) + self.k)

    def estimator(self):
        def debias(stats, n):
            f = self.flip()
            sums, rows = stats[: self.h * self.k].reshape(self.h, self.k), stats[self.h * self.k:]
            M = self.h * (sums - f * rows[:, None]) / (1.0 - 2.0 * f)  # unbiased one-hot counts, scaled by h
            hit = M[jnp.arange(self.h)[:, None], jnp.asarray(self.table())]  # [h, d]
            return self.k / (self.k - 1.0) * (hit.mean(0) / n - 1.0 / self.k)

        return _records.Estimator(debias=debias)

    def _bits(self):
        return (np.arange(2**self.k)[:, None] >> np.arange(self.k)) & 1  # [2^k, k]

    def likelihood(self):
        index = lambda ys: np.asarray(ys.j).astype(np.int64) * 2**self.k + (  # noqa: E731
            np.asarray(ys.bits).astype(np.int64) << np.arange(self.k)).sum(-1)
        return _records.Likelihood(index=index)

    def channel_matrix(self):
        f = self.flip()
        onehot = self.table()[:, :, None] == np.arange(self.k)  # [h, d, k]
        bits = self._bits()[None, None]  # [1, 1, 2^k, k]
        probs = jnp.where(bits == onehot[:, :, None, :], 1.0 - f, f).prod(-1) / self.h  # [h, d, 2^k]
        return jnp.transpose(probs, (1, 0, 2)).reshape(self.d, -1), jnp.ones(self.num_outputs, dtype=bool)

    def statistic(self):
        """``float[h 2^k, h k + h]``: what one report of each channel column adds to ``aggregate``."""
        S = np.zeros((self.h, 2**self.k, self.h * self.k + self.h))
        for j in range(self.h):
            S[j, :, j * self.k:(j + 1) * self.k] = self._bits()
            S[j, :, self.h * self.k + j] = 1.0
        return S.reshape(self.num_outputs, -1)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)


class THE(ul.Mechanism):
    """Thresholded histogram encoding (Wang et al. 2017): bit ``j`` is ``1[x == j] + Laplace(2 / eps) > theta``,
    so the own bit is 1 w.p. ``p``, every other w.p. ``q``, and the bits' rate ``(1-p) q / (p (1-q))`` is not
    ``exp(-eps)``. Honest everywhere except ``Likelihood(product=...)``, which gives EM the log-odds ``eps``
    (``t = exp(-eps)``, the unary encodings' rate) (``likelihood``)."""

    d: int = ul.static_field()
    eps: float
    theta: float = ul.static_field(default=0.75)
    report_kind = "bits"

    @property
    def num_outputs(self):
        return 2**self.d

    def rates(self):
        b = 2.0 / self.eps
        return 1.0 - 0.5 * jnp.exp(-(1.0 - self.theta) / b), 0.5 * jnp.exp(-self.theta / b)

    def perturb_batch(self, key, xs):
        p, q = self.rates()
        u = jax.random.uniform(key, (xs.shape[0], self.d), jnp.float32)
        return u < jnp.where(xs[:, None] == jnp.arange(self.d), p, q)

    def channel_matrix(self):
        p, q = self.rates()
        bits = (np.arange(2**self.d)[:, None] >> np.arange(self.d)) & 1  # [m, d]
        own = np.eye(self.d, dtype=bool)[:, None, :]  # [d, 1, d]
        probs = jnp.where(own, jnp.where(bits == 1, p, 1 - p), jnp.where(bits == 1, q, 1 - q))
        return probs.prod(-1), jnp.ones(2**self.d, dtype=bool)

    def likelihood(self):
        return _records.Likelihood(product=(np.ones(self.d, bool), False, self.eps))

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)


class THERightRates(THE):
    """THE with the likelihood EM should use: per-report factors with THE's own rate (passes ``likelihood``)."""

    def likelihood(self):
        def report(ys):
            p, q = self.rates()
            t = (1 - p) * q / (p * (1 - q))
            bits = jnp.asarray(ys, bool)
            L = jnp.where(bits, 1.0, t)
            return L, jnp.ones(bits.shape[0]), jnp.zeros(self.d)

        return _records.Likelihood(report=report)
