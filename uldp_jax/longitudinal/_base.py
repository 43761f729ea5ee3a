"""The shared shape of a memoized (PRR then IRR) protocol and the host helpers its subclasses use.

A memoized protocol is a frozen dataclass (hashable: the jitted drivers take it as a static argument, since its
probabilities are host float64 design values solved at construction, not traced leaves). Each subclass answers:

* sampling (jnp, vmappable): ``cell(hrow, x)`` the memo index of a value, ``perm(key, cell)`` the permanent
  response of one (user, cell), ``irr(key, z)`` a batch of instantaneous responses, ``support(y, hrow)`` the
  ``bool[n, m]`` support indicators a report gives, ``hash_row(key)`` the user's public hash (or ``None``);
* exact laws (NumPy float64, small d): ``perm_channel()`` ``[d, Mz]``, ``irr_channel()`` ``[Mz, My]``,
  ``support_matrix()`` ``[My, m]``, ``encode(y, hrow)`` report -> column index;
* closed forms: ``pstar_qstar()`` (support probabilities of one report), ``closed_form_eps(tau)``;
* the attack: ``attack_stat(y, hrow)`` (one round's sufficient statistic) and ``seq_loglik(stats, t, hrow)``.

Only the ``mechanisms`` layer's conventions are used here; nothing from theory, estimation or the engine.
"""

from __future__ import annotations

import dataclasses
import itertools

import jax
import jax.numpy as jnp
import numpy as np


def logphi(p1, q1, log_u):
    r""":math:`\ln\frac{p_1 u + 1 - p_1}{q_1 u + 1 - q_1}` in log space (``u`` may be huge or tiny).

    It is the log-ratio between a value whose PRR kept it (prob ``p1``) and one that did not (``q1``), after
    evidence of likelihood ratio ``u`` for the memo: ``u = 1`` gives 0, ``u -> inf`` gives ``ln(p1/q1)``."""
    log_u = np.asarray(log_u, np.float64)
    with np.errstate(divide="ignore"):  # p1 = 1 (a deterministic memo) gives log1p(-1) = -inf, which is exact
        return _logphi(p1, q1, log_u)


def _logphi(p1, q1, log_u):
    num = np.logaddexp(np.log(p1) + log_u, np.log1p(-p1))
    den = np.logaddexp(np.log(q1) + log_u, np.log1p(-q1))
    return num - den


def bit_table(d: int) -> np.ndarray:
    """``int8[2^d, d]``: row ``i`` is the bit vector with index ``sum_j bit_j 2^j``."""
    return ((np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1).astype(np.int8)


def bit_channel(one_prob: np.ndarray) -> np.ndarray:
    """``[R, 2^d]`` law of independent bits: row ``r`` sets bit ``j`` w.p. ``one_prob[r, j]``."""
    bits = bit_table(one_prob.shape[1]).astype(np.float64)
    return np.prod(np.where(bits[None] == 1, one_prob[:, None, :], 1.0 - one_prob[:, None, :]), axis=-1)


def grr_draw(key: jax.Array, x: jax.Array, p, m: int) -> jax.Array:
    """GRR over ``m`` values, batched: keeps ``x`` w.p. ``p``, else a uniform other value (one key, one draw)."""
    k_keep, k_other = jax.random.split(key)
    keep = jax.random.uniform(k_keep, x.shape) < p
    other = (x + 1 + jax.random.randint(k_other, x.shape, 0, m - 1)) % m
    return jnp.where(keep, x, other).astype(jnp.int32)


def compositions(total: int, parts: int) -> np.ndarray:
    """``int64[K, parts]``: every vector of ``parts`` non-negative counts summing to ``total`` (stars and bars),
    the sufficient statistic of ``total`` iid reports over ``parts`` outputs."""
    rows = []
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1,) + bars + (total + parts - 1,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(parts)])
    return np.asarray(rows, np.int64).reshape(-1, parts)


@dataclasses.dataclass(frozen=True)
class Memoized:
    """Base of the memoized protocols (see the module docstring for the members a subclass provides)."""

    def sensitive_set(self) -> tuple:
        """``X_S``: the whole domain for LDP protocols; uRR/uRAP override with their ``sensitive``."""
        return tuple(range(self.d))

    def hash_row(self, key: jax.Array):
        """The user's public hash table ``int32[d]``; ``None`` for protocols without hashing."""
        del key
        return None

    def cell(self, hrow, x: jax.Array) -> jax.Array:
        """The memo index of value ``x``: the value itself unless the protocol hashes."""
        del hrow
        return x

    @property
    def m(self) -> int:
        """Number of estimated frequencies (the domain; dBitFlipPM: its buckets)."""
        return self.d

    def estimate(self, counts, n):
        r"""Unbiased frequency estimate of one round: :math:`(C_j/n - Q^*_j)/(P^*_j - Q^*_j)` (no clipping: the
        linear estimator is what Variance_LONG_PURE describes; clip/normalise afterwards if wanted)."""
        ps, qs = (jnp.asarray(v) for v in self.pstar_qstar())
        return (jnp.asarray(counts) / n - qs) / (ps - qs)

    def variance(self, f, n, iid: bool = False):
        r"""Closed-form variance of ``estimate`` per item.

        Fixed population with true frequencies ``f``: :math:`(f P^*(1-P^*) + (1-f) Q^*(1-Q^*))/(n (P^*-Q^*)^2)`.
        ``iid=True`` (users drawn iid from ``f``): :math:`\sigma(1-\sigma)/(n (P^*-Q^*)^2)` with
        :math:`\sigma = Q^* + f (P^* - Q^*)`, Arcolezi's ``VAR_Long_Pure`` in the case it covers (see docs)."""
        ps, qs = self.pstar_qstar()
        f = np.asarray(f, np.float64)
        if iid:
            sig = qs + f * (ps - qs)
            return sig * (1 - sig) / (n * (ps - qs) ** 2)
        return (f * ps * (1 - ps) + (1 - f) * qs * (1 - qs)) / (n * (ps - qs) ** 2)

    def round_channel(self) -> np.ndarray:
        """``[d, My]`` law of one report (PRR then IRR): the composite every round's marginal follows."""
        return self.perm_channel() @ self.irr_channel()
