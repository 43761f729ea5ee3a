"""Memoized protocols whose reports are bit vectors: the L-UE family, memoized uRAP, and dBitFlipPM.

A unary protocol memoizes a PRR bit vector per (user, value) and flips its bits afresh every round. Each bit's
law depends only on whether it is the user's own item, so one per-coordinate description (``own``, ``other``:
the PRR's one-probabilities; ``p2``, ``q2``: the IRR's) covers SUE/OUE pairings and uRAP alike.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import xlogy

from uldp_jax import _validate
from uldp_jax.longitudinal import _base, _params

_PRR = {"sue": _params.sue_keep, "oue": _params.oue_keep}


@dataclasses.dataclass(frozen=True)
class _BitMemo(_base.Memoized):
    """Per-coordinate PRR/IRR one-probabilities, set by subclasses as ``vec = (own, other, p2, q2)``."""

    report_kind = "bits"

    def perm(self, ukey, cell):
        own, other, _, _ = (jnp.asarray(v, jnp.float32) for v in self.vec)
        u = jax.random.uniform(jax.random.fold_in(ukey, cell), (self.d,))
        return u < jnp.where(jnp.arange(self.d) == cell, own, other)

    def irr(self, key, z):
        p2, q2 = (jnp.asarray(v, jnp.float32) for v in self.vec[2:])
        return jax.random.uniform(key, z.shape) < jnp.where(z, p2, q2)

    def support(self, y, hrow):
        del hrow
        return y

    def perm_channel(self):
        own, other, _, _ = self.vec
        one = np.where(np.eye(self.d, dtype=bool), own[None, :], other[None, :])
        return _base.bit_channel(one)

    def irr_channel(self):
        _, _, p2, q2 = self.vec
        return _base.bit_channel(np.where(_base.bit_table(self.d) == 1, p2[None, :], q2[None, :]))

    def support_matrix(self):
        return _base.bit_table(self.d).astype(np.float64)

    def encode(self, y, hrow):
        del hrow
        return np.asarray(y, np.int64) @ (2 ** np.arange(self.d))

    def pstar_qstar(self):
        own, other, p2, q2 = self.vec
        return q2 + own * (p2 - q2), q2 + other * (p2 - q2)

    def attack_stat(self, y, hrow):
        del hrow
        return y.astype(jnp.float32)

    def seq_loglik(self, stats, t, hrow):
        """``float[n, d]``: log-likelihood of each value from the per-bit one-counts ``stats`` after ``t`` rounds
        (bits are independent given the value; each bit's memo is summed out)."""
        del hrow
        own, other, p2, q2 = (jnp.asarray(v, jnp.float32) for v in self.vec)

        def lp(a):
            on = jnp.log(a) + xlogy(stats, p2) + xlogy(t - stats, 1 - p2)
            off = jnp.log1p(-a) + xlogy(stats, q2) + xlogy(t - stats, 1 - q2)
            return jnp.logaddexp(on, off)  # [n, d]

        eye = jnp.eye(self.d, dtype=bool)
        return jnp.sum(jnp.where(eye[None], lp(own)[:, None, :], lp(other)[:, None, :]), axis=-1)


@dataclasses.dataclass(frozen=True)
class LUE(_BitMemo):
    r"""Longitudinal unary encoding (Arcolezi et al. 2023): PRR ``prr`` in {"sue", "oue"} at ``eps_perm``, IRR
    ``irr`` in {"sym" (``p2 = 1 - q2``), "half" (``p2 = 1/2``)} solved so one report is ``eps_1``-LDP.
    L-SUE = (sue, sym), L-OUE = (oue, half), L-OSUE = (oue, sym), L-SOUE = (sue, half) (``l_sue`` etc.).

    Privacy: ``tau`` reports of one value cost
    :math:`\phi((p_2/q_2)^\tau) - \phi(((1-p_2)/(1-q_2))^\tau)`, :math:`\phi(u) = \ln\frac{p_1u+1-p_1}{q_1u+1-q_1}`
    (the two items' bits: one all ones, the other all zeros), rising to ``eps_perm``; ``k`` distinct values
    cost at most ``k * eps_perm``.
    """

    d: int
    eps_perm: float
    eps_1: float
    prr: str = "oue"
    irr_kind: str = "sym"
    naive_eps: float | None = None
    p: tuple = dataclasses.field(init=False)  # (p1, q1, p2, q2)

    def __post_init__(self):
        d = _validate.check_int("d", self.d, minimum=2)
        eps_perm, eps_1 = _params.check_pair(self.eps_perm, self.eps_1)
        if self.prr not in _PRR:
            raise ValueError(f"Expected prr={self.prr!r} in {sorted(_PRR)}.")
        if self.irr_kind not in ("sym", "half"):
            raise ValueError(f"Expected irr_kind={self.irr_kind!r} in ['half', 'sym'].")
        if self.naive_eps is None:
            p1, q1 = _PRR[self.prr](eps_perm)
            p2, q2 = _params.ue_irr(p1, q1, eps_1, self.irr_kind)
        else:
            (p1, q1), (p2, q2) = (1.0, 0.0), _PRR[self.prr](_params.concrete_eps(self.naive_eps, "eps"))
        for k, v in dict(d=d, eps_perm=eps_perm, eps_1=eps_1, p=(p1, q1, p2, q2)).items():
            object.__setattr__(self, k, v)

    @property
    def vec(self):
        return tuple(np.full(self.d, v) for v in self.p)

    def naive(self, eps):
        return dataclasses.replace(self, naive_eps=eps)

    def closed_form_eps(self, tau):
        p1, q1, p2, q2 = self.p
        tau = np.asarray(tau, np.float64)
        return _base.logphi(p1, q1, tau * math.log(p2 / q2)) - _base.logphi(p1, q1, tau * math.log((1 - p2) / (1 - q2)))


def l_sue(d, eps_perm, eps_1):
    """L-SUE: symmetric UE (basic RAPPOR) in both rounds."""
    return LUE(d, eps_perm, eps_1, "sue", "sym")


def l_oue(d, eps_perm, eps_1):
    """L-OUE: optimized UE in both rounds (``p2 = 1/2``)."""
    return LUE(d, eps_perm, eps_1, "oue", "half")


def l_osue(d, eps_perm, eps_1):
    """L-OSUE: OUE memoized, symmetric IRR (Arcolezi et al.'s recommended unary pairing)."""
    return LUE(d, eps_perm, eps_1, "oue", "sym")


def l_soue(d, eps_perm, eps_1):
    """L-SOUE: SUE memoized, OUE-style IRR (``p2 = 1/2``)."""
    return LUE(d, eps_perm, eps_1, "sue", "half")


@dataclasses.dataclass(frozen=True)
class LURAP(_BitMemo):
    r"""Memoized utility-optimized RAPPOR: a (X_S, eps_perm)-uRAP (001 Def 4, default theta) memoized; each round
    the sensitive bits flip symmetrically (``p2 = 1 - q2``) and a non-sensitive bit keeps a one w.p. ``k2`` (a
    zero stays zero), solved so one report is exactly a (X_S, theta', eps_1)-uRAP with ``theta' = P*``.

    Privacy: one report is (X_S, eps_1)-ULDP. A sequence with a non-sensitive one reveals that (non-sensitive)
    item; protected sequences cost at most ``eps_perm`` over any ``tau`` (``closed_form_eps``: the larger of the
    sensitive-vs-sensitive unary form and the sensitive-vs-non-sensitive form; one of them when only one applies).
    """

    d: int
    sensitive: tuple
    eps_perm: float
    eps_1: float
    p: tuple = dataclasses.field(init=False)  # (theta, d1, c1, p2, q2, k2)

    def __post_init__(self):
        d = _validate.check_int("d", self.d, minimum=2)
        sens = _validate.check_index_set("sensitive", self.sensitive, d)
        eps_perm, eps_1 = _params.check_pair(self.eps_perm, self.eps_1)
        theta = 1.0 / (1.0 + math.exp(-eps_perm / 2))
        d1 = theta / ((1 - theta) * math.exp(eps_perm) + theta)
        c1 = -theta * math.expm1(-eps_perm)
        p2, q2 = _params.ue_irr(theta, d1, eps_1, "sym")
        k2 = (q2 + theta * (p2 - q2)) * -math.expm1(-eps_1) / c1
        if not k2 <= 1.0:
            raise ValueError(f"Expected eps_1={eps_1!r} reachable by memoized uRAP at eps_perm={eps_perm!r}.")
        for k, v in dict(d=d, sensitive=sens, eps_perm=eps_perm, eps_1=eps_1, p=(theta, d1, c1, p2, q2, k2)).items():
            object.__setattr__(self, k, v)

    def sensitive_set(self):
        return self.sensitive

    @property
    def vec(self):
        theta, d1, c1, p2, q2, k2 = self.p
        sens = np.zeros(self.d, bool)
        sens[list(self.sensitive)] = True
        return (np.where(sens, theta, c1), np.where(sens, d1, 0.0), np.where(sens, p2, k2), np.where(sens, q2, 0.0))

    def closed_form_eps(self, tau):
        theta, d1, c1, p2, q2, k2 = self.p
        tau = np.asarray(tau, np.float64)
        top = _base.logphi(theta, d1, tau * math.log(p2 / q2))
        ss = top - _base.logphi(theta, d1, tau * math.log((1 - p2) / (1 - q2)))
        sn = top - np.log1p(-c1 + c1 * (1 - k2) ** tau)
        s = len(self.sensitive)
        return ss if s == self.d else sn if s == 1 else np.maximum(ss, sn)


@dataclasses.dataclass(frozen=True)
class DBitFlipPM(_base.Memoized):
    r"""dBitFlipPM (Ding, Kulkarni, Yekhanin, NeurIPS 2017): values bucketised into ``b`` buckets
    (``floor(x b / d)``); each user samples ``d_bits`` buckets once and reports, for each, a SUE bit at
    ``eps_perm`` memoized per bucket value. No instantaneous round: every report of one bucket is the same.

    Reports are ``int8[b]``: 1/0 on the sampled buckets, -1 elsewhere. Estimates are bucket frequencies.

    Privacy: ``eps_perm`` (``eps_perm / 2`` when ``d_bits = 1``) for any number of reports of one bucket; a
    change of bucket costs ``eps_perm`` again (Ding et al.'s memoization without output perturbation).
    """

    d: int
    eps_perm: float
    b: int | None = None
    d_bits: int = 1
    p: tuple = dataclasses.field(init=False)

    report_kind = "signed_bits"

    def __post_init__(self):
        d = _validate.check_int("d", self.d, minimum=2)
        b = _validate.check_int("b", d if self.b is None else self.b, minimum=2, maximum=d)
        db = _validate.check_int("d_bits", self.d_bits, minimum=1, maximum=b)
        eps = _params.concrete_eps(self.eps_perm, "eps_perm")
        for k, v in dict(d=d, b=b, d_bits=db, eps_perm=eps, p=_params.sue_keep(eps)).items():
            object.__setattr__(self, k, v)

    @property
    def m(self):
        return self.b

    def cell(self, hrow, x):
        return (x * self.b) // self.d

    def perm(self, ukey, cell):
        k_mask, k_bits = jax.random.split(ukey)
        rank = jnp.argsort(jnp.argsort(jax.random.uniform(k_mask, (self.b,))))
        u = jax.random.uniform(jax.random.fold_in(k_bits, cell), (self.b,))
        bit = u < jnp.where(jnp.arange(self.b) == cell, self.p[0], self.p[1])
        return jnp.where(rank < self.d_bits, bit.astype(jnp.int8), jnp.int8(-1))

    def irr(self, key, z):
        del key
        return z

    def support(self, y, hrow):
        del hrow
        return y == 1

    def _outputs(self):
        return ((np.arange(3**self.b)[:, None] // 3 ** np.arange(self.b)) % 3 - 1).astype(np.int64)  # [3^b, b]

    def perm_channel(self):
        v = self._outputs()
        ok = (v != -1).sum(1) == self.d_bits
        own = np.eye(self.b, dtype=bool)[(np.arange(self.d) * self.b) // self.d]  # [d, b]
        one = np.where(own, self.p[0], self.p[1])[:, None, :]  # [d, 1, b]
        per = np.where(v[None] == 1, one, np.where(v[None] == 0, 1 - one, 1.0))
        return np.prod(per, -1) * ok[None] / math.comb(self.b, self.d_bits)

    def irr_channel(self):
        return np.eye(3**self.b)

    def support_matrix(self):
        return (self._outputs() == 1).astype(np.float64)

    def encode(self, y, hrow):
        del hrow
        return (np.asarray(y, np.int64) + 1) @ (3 ** np.arange(self.b))

    def pstar_qstar(self):
        frac = self.d_bits / self.b
        return np.full(self.b, frac * self.p[0]), np.full(self.b, frac * self.p[1])

    def closed_form_eps(self, tau):
        eps = self.eps_perm if self.d_bits >= 2 else self.eps_perm / 2
        return np.full(np.shape(tau), eps)
