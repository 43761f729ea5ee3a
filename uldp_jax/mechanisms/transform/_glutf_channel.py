"""GLUTF's exact channel (float64 NumPy): column order, log channel, per-column support and report columns, as a
mixin of ``GLUTFMixin``, plus the helpers that read a base's channel."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _pure_uldp as _th, _records, _reports


def base_support(base: Any) -> np.ndarray:
    """bool ``[m_b, s]``: items supported by each channel column of a pure base."""
    S = _records.likelihood_of(base).support()
    if S is None:
        raise TypeError(f"Expected a base with a support function, got {type(base).__name__}.")
    return np.asarray(S, dtype=bool)


def base_index(base: Any, ys: Any) -> np.ndarray:
    """Channel column of each base report."""
    return np.asarray(_records.likelihood_of(base).index(ys)).astype(np.int64)


def share_from_channel(base: Any) -> float:
    r""":math:`\max_{i,m} p_{im}/\sum_t p_{tm}` over the base's actual outputs (exact channel, float64)."""
    _reports.check_channel_size(type(base).__name__, int(base.d), int(base.num_outputs))
    Q, _ = base.channel_matrix()
    tot = Q.sum(axis=0)
    keep = tot > 0
    return float((Q[:, keep] / tot[keep]).max())



class GLUTFChannel:
    """The exact channel of a GLUTF mechanism; ``GLUTFMixin`` supplies ``base``, ``d``, ``s``, ``_masks``, ``f``
    and ``f_protected``."""

    def _fz64(self) -> tuple[float, float]:
        with _th.x64():
            mech = jax.tree_util.tree_map(lambda v: jnp.asarray(np.asarray(v, np.float64)), self)
            return float(mech.f()), float(mech.f_protected())

    def _check_size(self) -> None:
        """The size guard, before the base's channel is built (a large base is refused, never allocated)."""
        m_b, dn = int(self.base.num_outputs), self.d - self.s
        _reports.check_channel_size(type(self).__name__, self.d, m_b * (1 + dn) + dn)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """Columns: ``[0, m_b)`` base outputs (``Y_P``, base order); ``m_b + j``: non-sensitive item of rank ``j``
        alone; ``m_b + d_N + j m_b + c``: the pair (base column ``c``, non-sensitive item of rank ``j``)."""
        self._check_size()
        Qb, _ = self.base.channel_matrix()
        m_b, dn = Qb.shape[1], self.d - self.s
        f, f1z = self._fz64()
        sens, rank_s, rank_n = self._masks()
        Q = np.zeros((self.d, m_b * (1 + dn) + dn))
        Q[sens, :m_b] = Qb[rank_s[sens]]
        mean = Qb.mean(axis=0)
        for x in np.flatnonzero(~sens):
            j = rank_n[x]
            Q[x, :m_b] = f1z * mean
            Q[x, m_b + j] = 1.0 - f
            start = m_b + dn + j * m_b
            Q[x, start:start + m_b] = (f - f1z) * mean
        protected = np.zeros(Q.shape[1], dtype=bool)
        protected[:m_b] = True
        return Q, protected

    def _log_channel(self) -> tuple[np.ndarray, np.ndarray]:
        """``(log Q, protected)`` in the column order of ``channel_matrix`` (``likelihood().log_channel``), from the
        base's log channel when it has one (bit-product bases underflow float64 at large ``s * eps``)."""
        self._check_size()
        base_log_channel = _records.likelihood_of(self.base).log_channel
        base_log = None if base_log_channel is None else base_log_channel()
        if base_log is None:
            Q, protected = self.channel_matrix()
            with np.errstate(divide="ignore"):
                return np.log(Q), protected
        logQb, _ = base_log
        m_b, dn = logQb.shape[1], self.d - self.s
        f, f1z = self._fz64()
        sens, rank_s, rank_n = self._masks()
        logmean = np.logaddexp.reduce(logQb, axis=0) - np.log(logQb.shape[0])
        with np.errstate(divide="ignore"):
            lf1z, l1mf, lrest = np.log(f1z), np.log1p(-f), np.log(f - f1z)
        logQ = np.full((self.d, m_b * (1 + dn) + dn), -np.inf)
        logQ[sens, :m_b] = logQb[rank_s[sens]]
        for x in np.flatnonzero(~sens):
            j = rank_n[x]
            logQ[x, :m_b] = lf1z + logmean
            logQ[x, m_b + j] = l1mf
            start = m_b + dn + j * m_b
            logQ[x, start:start + m_b] = lrest + logmean
        protected = np.zeros(logQ.shape[1], dtype=bool)
        protected[:m_b] = True
        return logQ, protected

    def _column_support(self) -> np.ndarray:
        """bool ``[m, d]``: items supported by each channel column (003 eq 29)."""
        self._check_size()
        Sb = base_support(self.base)
        m_b, dn = Sb.shape[0], self.d - self.s
        sens, _, _ = self._masks()
        nonsens = np.flatnonzero(~sens)
        S = np.zeros((m_b * (1 + dn) + dn, self.d), dtype=bool)
        S[:m_b, sens] = Sb
        S[m_b + np.arange(dn), nonsens] = True
        for j, x in enumerate(nonsens):
            start = m_b + dn + j * m_b
            S[start:start + m_b, sens] = Sb
            S[start:start + m_b, x] = True
        return S

    def _columns(self, ys: GLUTFReport) -> np.ndarray:
        m_b = int(self.base.num_outputs)
        dn = self.d - self.s
        _, _, rank_n = self._masks()
        has_base, item = np.asarray(ys.has_base), np.asarray(ys.item).astype(np.int64)
        bi = base_index(self.base, ys.base)
        j = rank_n[np.maximum(item, 0)].astype(np.int64)
        return np.where(~has_base, m_b + j, np.where(item < 0, bi, m_b + dn + j * m_b + bi))
