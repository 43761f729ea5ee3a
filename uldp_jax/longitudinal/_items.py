"""Memoized protocols whose reports are single items: L-GRR, L-OLH (LOLOHA) and memoized uRR.

All three are a PRR and an IRR over ``g`` cells (L-GRR and uRR: the domain; L-OLH: the user's hash range), so
they share the sampler, the exact channels and the attack likelihood; they differ in the PRR/IRR matrices and in
how a value maps to its cell.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import logsumexp, xlogy

from uldp_jax import _validate
from uldp_jax.longitudinal import _base, _params


def urr_matrix(d: int, sens: np.ndarray, c1: float, c2: float) -> np.ndarray:
    """``[d, d]`` (X_S, eps)-uRR (001 Def 3): ``c1`` own sensitive, ``c2`` any sensitive output, the rest of a
    non-sensitive input's mass on itself; a sensitive input never outputs a non-sensitive item."""
    s = int(sens.sum())
    q = np.where(sens[None, :], c2, 0.0) * np.ones((d, 1))
    own = np.where(sens, c1, 1.0 - s * c2)
    q[np.arange(d), np.arange(d)] = own
    return q


@dataclasses.dataclass(frozen=True)
class _ItemMemo(_base.Memoized):
    """Shared item machinery: subclasses set ``g`` (cells) and the cell-level PRR/IRR matrices."""

    report_kind = "item"

    def cell_perm(self) -> np.ndarray:  # [g, g] PRR over cells
        raise NotImplementedError

    def cell_irr(self) -> np.ndarray:  # [g, g] IRR over cells
        raise NotImplementedError

    def perm(self, ukey: jax.Array, cell: jax.Array) -> jax.Array:
        """Permanent response of one user for one cell: a function of ``(ukey, cell)`` only, so a value the user
        returns to gets the same response (the memo) without any state."""
        return self._perm_draw(jax.random.fold_in(ukey, cell), cell)

    def _perm_draw(self, key, cell):
        return jax.random.categorical(key, jnp.log(jnp.asarray(self.cell_perm()))[cell]).astype(jnp.int32)

    def irr(self, key: jax.Array, z: jax.Array) -> jax.Array:
        """Instantaneous responses ``int32[n]`` of memos ``z`` (fresh each round)."""
        return jax.random.categorical(key, jnp.log(jnp.asarray(self.cell_irr()))[z]).astype(jnp.int32)

    def support(self, y: jax.Array, hrow) -> jax.Array:
        """``bool[n, d]``: the items a report supports (the item itself)."""
        del hrow
        return y[:, None] == jnp.arange(self.d)

    def perm_channel(self) -> np.ndarray:
        return self.cell_perm()

    def irr_channel(self) -> np.ndarray:
        return self.cell_irr()

    def support_matrix(self) -> np.ndarray:
        return np.eye(self.d)

    def encode(self, y, hrow) -> np.ndarray:
        del hrow
        return np.asarray(y, np.int64)

    def attack_stat(self, y: jax.Array, hrow) -> jax.Array:
        """One round's sufficient statistic for the adversary: the one-hot report over cells."""
        del hrow
        return jax.nn.one_hot(y, self.g, dtype=jnp.float32)

    def seq_loglik(self, stats: jax.Array, t, hrow) -> jax.Array:
        r"""``float[n, d]``: :math:`\ln P(y_1..y_t \mid x)` up to a constant, from the report counts per cell:
        :math:`\mathrm{LSE}_z(\ln Q_1(z|c(x)) + \sum_y c_y \ln Q_2(y|z))` (the memo ``z`` summed out)."""
        del t
        lq2 = jnp.log(jnp.asarray(self.cell_irr(), jnp.float32))
        per_z = jnp.sum(xlogy(stats[:, None, :], jnp.exp(lq2)[None]), axis=-1)  # [n, g]
        lq1 = jnp.log(jnp.asarray(self.cell_perm(), jnp.float32))  # [g, g]
        rows = lq1[self._cells_of_domain(hrow)]  # [n?, d, g]
        return logsumexp(rows + per_z[:, None, :], axis=-1)

    def _cells_of_domain(self, hrow):
        del hrow
        return jnp.arange(self.d)


def _grr_matrix(m: int, p: float, q: float) -> np.ndarray:
    return np.where(np.eye(m, dtype=bool), p, q)


@dataclasses.dataclass(frozen=True)
class LGRR(_ItemMemo):
    r"""Longitudinal GRR (L-GRR, Arcolezi et al. 2023): GRR at ``eps_perm`` memoized, then GRR each round.

    Privacy: one report is ``eps_1``-LDP; ``tau`` reports of one value cost
    :math:`\ln\frac{p_1 u + 1 - p_1}{q_1 u + 1 - q_1}`, :math:`u = (p_2/q_2)^\tau`, rising to ``eps_perm``
    (``closed_form_eps``); a value change starts a new memo, so ``k`` distinct values cost at most
    ``k * eps_perm``. ``naive_eps`` (set by ``naive``) replaces the memo by the identity: fresh GRR at that eps.
    """

    d: int
    eps_perm: float
    eps_1: float
    naive_eps: float | None = None
    p1: float = dataclasses.field(init=False)
    q1: float = dataclasses.field(init=False)
    p2: float = dataclasses.field(init=False)
    q2: float = dataclasses.field(init=False)

    def __post_init__(self):
        d = _validate.check_int("d", self.d, minimum=2)
        eps_perm, eps_1 = _params.check_pair(self.eps_perm, self.eps_1)
        if self.naive_eps is None:
            p1, q1 = _params.grr_keep(eps_perm, d)
            p2, q2 = _params.grr_irr(p1, q1, eps_1, d)
        else:
            (p1, q1), (p2, q2) = (1.0, 0.0), _params.grr_keep(_params.concrete_eps(self.naive_eps, "eps"), d)
        for k, v in dict(d=d, eps_perm=eps_perm, eps_1=eps_1, p1=p1, q1=q1, p2=p2, q2=q2).items():
            object.__setattr__(self, k, v)

    @property
    def g(self) -> int:
        return self.d

    def naive(self, eps: float) -> "LGRR":
        """The memo-free version: fresh GRR at ``eps`` every round (the attack's baseline)."""
        return dataclasses.replace(self, naive_eps=eps)

    def cell_perm(self):
        return _grr_matrix(self.g, self.p1, self.q1)

    def cell_irr(self):
        return _grr_matrix(self.g, self.p2, self.q2)

    def _perm_draw(self, key, cell):
        return _base.grr_draw(key, cell, self.p1, self.g)

    def irr(self, key, z):
        return _base.grr_draw(key, z, self.p2, self.g)

    def pstar_qstar(self):
        ps, qs = self.q2 + self.p1 * (self.p2 - self.q2), self.q2 + self.q1 * (self.p2 - self.q2)
        return np.full(self.d, ps), np.full(self.d, qs)

    def closed_form_eps(self, tau):
        return _base.logphi(self.p1, self.q1, np.asarray(tau) * math.log(self.p2 / self.q2))


@dataclasses.dataclass(frozen=True)
class LOLH(LGRR):
    r"""LOLOHA / L-OLH (Arcolezi et al. 2023): each user hashes ``[0, d)`` to ``[0, g)`` with a public random
    function fixed for the whole run, then L-GRR over the ``g`` cells; ``hash_range=None`` takes LOLOHA's optimal ``g``.

    The hash is an ideal random function (``hash_row``: ``g`` uniform per item), the model under which the
    estimator's ``Q* = 1/g`` is exact. The memo is per (user, cell): values sharing a cell share the memo, so a
    changing user spends at most ``min(k, g) * eps_perm`` over ``k`` distinct values (LOLOHA's point).

    Privacy: per sequence of one value, L-GRR's over ``g`` cells (``closed_form_eps``), ``eps_1`` for one report.
    """

    hash_range: int | None = None

    def __post_init__(self):
        _params.check_pair(self.eps_perm, self.eps_1)
        g = self.hash_range if self.hash_range is not None else _params.loloha_g(float(self.eps_perm), float(self.eps_1))
        g = _validate.check_int("g", g, minimum=2)
        d = _validate.check_int("d", self.d, minimum=2)
        eps_perm, eps_1 = _params.check_pair(self.eps_perm, self.eps_1)
        p1, q1 = _params.grr_keep(eps_perm, g)
        p2, q2 = _params.grr_irr(p1, q1, eps_1, g)
        for k, v in dict(d=d, eps_perm=eps_perm, eps_1=eps_1, hash_range=g, p1=p1, q1=q1, p2=p2, q2=q2).items():
            object.__setattr__(self, k, v)

    @property
    def g(self) -> int:
        return self.hash_range

    def naive(self, eps):
        raise ValueError("Expected a protocol with a memo-free version (L-GRR, L-UE, L-uRR); L-OLH has none here.")

    def hash_row(self, key):
        return jax.random.randint(key, (self.d,), 0, self.g).astype(jnp.int32)

    def cell(self, hrow, x):
        return hrow[x]

    def support(self, y, hrow):
        return hrow == y[:, None]

    def _cells_of_domain(self, hrow):
        return hrow  # [n, d]

    def pstar_qstar(self):
        ps = self.q2 + self.p1 * (self.p2 - self.q2)
        return np.full(self.d, ps), np.full(self.d, 1.0 / self.g)

    def _hashes(self) -> np.ndarray:
        return np.stack(np.unravel_index(np.arange(self.g**self.d), (self.g,) * self.d, order="F"), -1)

    def perm_channel(self):
        """``[d, g^d * g]``: output ``(h, z)`` at column ``index(h) * g + z``, every function ``h`` equally likely."""
        hs, q = self._hashes(), self.cell_perm()
        out = q[hs.T[:, :, None], np.arange(self.g)] / hs.shape[0]  # [d, H, g]
        return out.reshape(self.d, -1)

    def irr_channel(self):
        return np.kron(np.eye(self.g**self.d), self.cell_irr())

    def support_matrix(self):
        hs = self._hashes()
        return (hs[:, None, :] == np.arange(self.g)[None, :, None]).reshape(-1, self.d).astype(np.float64)

    def encode(self, y, hrow):
        idx = np.asarray(hrow, np.int64) @ (self.g ** np.arange(self.d))
        return idx * self.g + np.asarray(y, np.int64)


@dataclasses.dataclass(frozen=True)
class LURR(_ItemMemo):
    r"""Memoized utility-optimized RR: a (X_S, eps_perm)-uRR memoized, then a (X_S, eps')-uRR each round with
    ``eps'`` solved so that one report is exactly a (X_S, eps_1)-uRR (two uRRs with one X_S compose to a uRR).

    Privacy: one report is (X_S, Y_P = X_S, eps_1)-ULDP. A sequence with any report in X_N reveals that item,
    which is non-sensitive (the only input that reaches it); sequences inside X_S are protected, with log-ratio
    at most ``eps_perm`` whatever ``tau`` (``closed_form_eps``: L-GRR's form with ``c1, c2``, for ``|X_S| >= 2``).
    """

    d: int
    sensitive: tuple
    eps_perm: float
    eps_1: float
    naive_eps: float | None = None
    c: tuple = dataclasses.field(init=False)  # (c1, c2, c1', c2')

    def __post_init__(self):
        d = _validate.check_int("d", self.d, minimum=2)
        sens = _validate.check_index_set("sensitive", self.sensitive, d)
        eps_perm, eps_1 = _params.check_pair(self.eps_perm, self.eps_1)
        s = len(sens)
        if self.naive_eps is None:
            c2 = 1.0 / (s + math.expm1(eps_perm))
            c1 = math.exp(eps_perm) * c2
            k1, k2 = _params.grr_irr(c1, c2, eps_1, s)
            rr = k1 / k2
        else:
            c1, c2, rr = 1.0, 0.0, math.exp(_params.concrete_eps(self.naive_eps, "eps"))
        for k, v in dict(d=d, sensitive=sens, eps_perm=eps_perm, eps_1=eps_1,
                         c=(c1, c2, rr / (s + rr - 1), 1.0 / (s + rr - 1))).items():
            object.__setattr__(self, k, v)

    @property
    def g(self) -> int:
        return self.d

    def sensitive_set(self):
        return self.sensitive

    def naive(self, eps):
        return dataclasses.replace(self, naive_eps=eps)

    def _mask(self):
        m = np.zeros(self.d, bool)
        m[list(self.sensitive)] = True
        return m

    def cell_perm(self):
        if self.naive_eps is not None:
            return np.eye(self.d)
        return urr_matrix(self.d, self._mask(), self.c[0], self.c[1])

    def cell_irr(self):
        return urr_matrix(self.d, self._mask(), self.c[2], self.c[3])

    def pstar_qstar(self):
        w = self.round_channel()
        return np.diag(w).copy(), w[(np.arange(self.d) + 1) % self.d, np.arange(self.d)] * self._mask()

    def closed_form_eps(self, tau):
        c1, c2, d1, d2 = self.c
        return _base.logphi(c1, c2, np.asarray(tau) * math.log(d1 / d2))
