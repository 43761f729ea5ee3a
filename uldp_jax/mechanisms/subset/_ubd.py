"""Utility-optimized block design uBD (Yoon, Park, Nam, Lee 2025): a mixture of uSS channels over subset sizes."""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _family, _fields, _likelihood, _pytree, _records, _report_space, _spec, _uniform
from uldp_jax.mechanisms.subset import _ksubset, _ubd_forms, _ubd_weights

MAX_UBD_CHANNEL_S = 16  # exact channels enumerate the subsets of X_S (a 2**s lookup table for report columns)


class UBDReport(NamedTuple):
    """A uBD report: a subset of ``X_S`` (``Y_P``) or a disclosed non-sensitive item (``Y_I``).

    Attributes:
      subset: ``bool[..., s]``: the reported subset (sensitive items in rank order); all False for ``Y_I``.
      item: ``int32[...]``: the disclosed non-sensitive item, ``-1`` for a subset report.
    """

    subset: jax.Array
    item: jax.Array


@functools.partial(jax.jit, static_argnums=(3, 4))  # eager callers (tests, host statistics) compile it once
def _aggregate(subset: jax.Array, item: jax.Array, wt: jax.Array, sizes: tuple[int, ...], dn: int,
               rank_n: jax.Array) -> jax.Array:
    sub = jnp.reshape(subset, (-1, subset.shape[-1]))
    item = jnp.reshape(item, (-1,))
    wt = jnp.reshape(wt, (-1,)).astype(jnp.int32)
    size = jnp.sum(sub, axis=1, dtype=jnp.int32)
    blocks = [jnp.sum(jnp.where(((size == k) & (item < 0))[:, None], sub, False) * wt[:, None], axis=0,
                      dtype=jnp.int32) for k in sizes]
    disclosed = jnp.zeros(dn, jnp.int32).at[rank_n[jnp.maximum(item, 0)]].add(jnp.where(item >= 0, wt, 0))
    return jnp.concatenate(blocks + [disclosed])


class UBD(_fields.ULDPFields):
    r"""(X_S, eps)-utility-optimized block design (uBD): the ULDP mechanism that attains the minimax l2 risk.

    A user draws a subset size ``k`` from ``weights`` over ``sizes``. A sensitive input reports a ``k``-subset of
    ``X_S`` by subset selection (every subset containing it ``e^eps`` times as likely as every other); a
    non-sensitive input reports a uniform ``k``-subset w.p. :math:`1 - z_k = s/(ke^\varepsilon+s-k)`, else itself,
    so each size is uSS(k)'s channel and uBD their mixture. ``sizes=None`` takes the paper's optimal mixture
    (``ubd_weights``, the saddle point of the minimax risk: one size, i.e. uSS, except at intermediate
    :math:`e^\varepsilon`; at most three sizes). ``debias`` is the paper's score estimator at the least
    favourable prior (``alpha``; ``_ubd_forms``), unbiased for any weights.

    Privacy: (X_S, Y_P, eps)-ULDP, tight; ``Y_P`` = the subsets of ``X_S`` of the drawn sizes, ``Y_I`` = the
    disclosed non-sensitive items. Reports: ``UBDReport``; ``log2(sum_k C(s, k) + d - s)`` bits.

    Attributes:
      d: domain size (static).
      sensitive: sensitive items (static; ``2 <= s < d``).
      eps: privacy budget (leaf).
      sizes: increasing subset sizes in ``[1, s]`` (static); ``None``: the optimum (needs a concrete eps).
      weights: ``float[len(sizes)]`` their probabilities, positive, sum 1 (leaf).
      alpha: the estimator's prior mass on ``X_S``, in ``[0, 1]`` (leaf; the optimum's with ``sizes=None``).

    References:
      Yoon, Park, Nam, Lee, "Optimal discrete distribution estimation under utility-optimized local differential
      privacy", arXiv:2509.24173 (2025); reference code phy811/uBD.
    """

    sizes: Any = _pytree.static_field(default=None)
    weights: Any = None
    alpha: Any = None

    report_kind = "ubd"

    def __post_init__(self):
        super().__post_init__()
        if self.s < 2 or self.s >= self.d:
            raise ValueError(f"Expected 2 <= len(sensitive) < d for UBD, got s={self.s}, d={self.d} "
                             "(one sensitive item: ul.URR; no non-sensitive item: ul.SS).")
        if self.sizes is None:
            if self.weights is not None or self.alpha is not None:
                raise ValueError("Expected sizes with weights and alpha (or none of them: the optimum).")
            opt = _ubd_weights.ubd_weights(self.d, self.s, _fields.concrete_eps(self.eps, "sizes"))
            _fields.set_fields(self, sizes=opt.sizes, weights=opt.weights, alpha=float(opt.alpha))
            return
        sizes = tuple(_validate.check_int("sizes", k, minimum=1, maximum=self.s) for k in np.ravel(self.sizes))
        if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ValueError(f"Expected sizes={self.sizes!r} to be increasing subset sizes in [1, {self.s}].")
        if sizes == (self.s,):
            raise ValueError(f"Expected sizes={sizes!r} to hold a size below s={self.s} (the whole X_S says nothing).")
        if self.weights is None or self.alpha is None:
            raise ValueError("Expected weights and alpha with sizes.")
        _fields.set_fields(self, sizes=sizes)
        if _validate.is_concrete(self.weights):
            w = np.asarray(self.weights, np.float64)
            _fields.set_fields(self, weights=w)
            if w.shape != (len(sizes),) or not np.all(w > 0) or abs(w.sum() - 1.0) > 1e-6:
                raise ValueError(f"Expected weights={self.weights!r}: {len(sizes)} positive probabilities summing to 1.")
        if _validate.is_concrete(self.alpha):
            if np.ndim(self.alpha) != 0 or not 0.0 <= float(np.asarray(self.alpha)) <= 1.0:
                raise ValueError(f"Expected alpha={self.alpha!r} in [0, 1].")
            _fields.set_fields(self, alpha=float(np.asarray(self.alpha)))

    # ---- sizes and tables ------------------------------------------------------------------------------------
    @property
    def num_outputs(self) -> int:
        return sum(math.comb(self.s, k) for k in self.sizes) + self.d - self.s

    def _ranks(self) -> tuple[np.ndarray, np.ndarray]:
        """(rank among sensitive int32[d] (-1 elsewhere), rank among non-sensitive int32[d] (-1 elsewhere))."""
        sens = _spec.sensitive_mask(self.d, self.sensitive)
        return (np.where(sens, np.cumsum(sens) - 1, -1).astype(np.int32),
                np.where(~sens, np.cumsum(~sens) - 1, -1).astype(np.int32))

    def _probs(self) -> tuple[jax.Array, jax.Array]:
        """(``p_in float[m]``: own item in the subset, ``nz float[m]``: a non-sensitive input sends a subset)."""
        T = _ubd_forms._terms(self.eps, self.s, self.d, self.sizes, self.weights, self.alpha)
        return T["p_in"], T["nz"]

    # ---- sampling -------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> UBDReport:
        """``UBDReport`` per user: one uniform picks the size (or the disclosure), then Floyd's exact subset
        sampler (``_ksubset``) for each drawn size, kept where it is the user's (one pass per size)."""
        s, m = self.s, len(self.sizes)
        rank_s, _ = self._ranks()
        shape = xs.shape
        xs = jnp.reshape(xs, (-1,))
        r = jnp.asarray(rank_s)[xs]
        sens = r >= 0
        p_in, nz = self._probs()
        w = jnp.asarray(self.weights, p_in.dtype)
        k_size, k_own, k_pick, *k_sub = jax.random.split(key, 3 + m)
        # size j w.p. w_j (sensitive) or w_j (1 - z_j) (non-sensitive; the rest: disclose), as cumulative cuts
        cut = jnp.cumsum(jnp.where(sens[:, None], w, w * nz), axis=1)
        u = jax.random.uniform(k_size, xs.shape, dtype=jnp.float32)
        j = jnp.sum(u[:, None] >= cut, axis=1)  # == m: disclose (non-sensitive only: sensitive cuts end at 1)
        j = jnp.where(sens, jnp.minimum(j, m - 1), j)
        # a non-sensitive user's uniform k-subset: subset selection around a uniform item, kept w.p. k / s
        own = jnp.where(sens, r, _uniform.uniform_ints(k_pick, s, xs.shape))
        v = jax.random.uniform(k_own, xs.shape, dtype=jnp.float32)
        subset = jnp.zeros(xs.shape + (s,), bool)
        for i, k in enumerate(self.sizes):
            keep = v < jnp.where(sens, p_in[i], k / s)
            bits = (jnp.ones(xs.shape + (s,), bool) if k == s
                    else _ksubset.subset_bits(k_sub[i], own, keep, s, k))
            subset = jnp.where((j == i)[:, None], bits, subset)
        item = jnp.where(j == m, xs, -1).astype(jnp.int32)
        return UBDReport(subset.reshape(shape + (s,)), item.reshape(shape))

    # ---- statistics and estimation --------------------------------------------------------------------------
    def aggregate(self, ys: UBDReport, weights: jax.Array | None = None) -> jax.Array:
        """``int32[len(sizes) * s + d - s]``: per drawn size, the sensitive items' counts over that size's subset
        reports; then the disclosed non-sensitive items' counts (``_ubd_forms``)."""
        _, rank_n = self._ranks()
        wt = jnp.ones(jnp.shape(ys.item), jnp.int32) if weights is None else weights
        return _aggregate(ys.subset, ys.item, wt, self.sizes, self.d - self.s, jnp.asarray(rank_n))

    def revealed_inputs(self, ys: UBDReport) -> jax.Array:
        """``-1`` for a subset report (``Y_P``), else the disclosed non-sensitive item (``Y_I``)."""
        return jnp.where(ys.item < 0, -1, ys.item).astype(jnp.int32)

    def _support(self, ys: UBDReport) -> jax.Array:
        """``reports().support``: ``bool[n, d]``, the reported subset's items (at their item indices), or the
        disclosed item (``aggregate``'s statistic is per subset size, not per item)."""
        sub = jnp.reshape(ys.subset, (-1, self.s))
        item = jnp.reshape(ys.item, (-1,))
        out = jnp.zeros((item.shape[0], self.d + 1), bool).at[:, jnp.asarray(self.sensitive, jnp.int32)].set(sub)
        out = out.at[jnp.arange(item.shape[0]), jnp.where(item >= 0, item, self.d)].set(item >= 0)
        return out[:, :self.d]

    def reports(self) -> _report_space.Reports:
        return _report_space.Reports(stats=len(self.sizes) * self.s + self.d - self.s, check=self._check,
                                     bits=math.log2(self.num_outputs), columns=self._column_stats,
                                     support=self._support)

    def _check(self, ys: Any) -> None:
        if not isinstance(ys, UBDReport):
            raise TypeError(f"Expected ys to be a UBDReport (ul.perturb of UBD), got {type(ys).__name__}.")
        if ys.subset.shape[-1:] != (self.s,) or ys.subset.shape[:-1] != ys.item.shape:
            raise ValueError(f"Expected ys.subset of shape [..., {self.s}] matching ys.item, got "
                             f"{ys.subset.shape} and {ys.item.shape}.")

    def estimator(self) -> _records.Estimator:
        rank_s, rank_n = self._ranks()
        sens = jnp.asarray(rank_s >= 0)
        idx_s, idx_n = jnp.asarray(np.maximum(rank_s, 0)), jnp.asarray(np.maximum(rank_n, 0))

        def scatter(p_s, p_n):  # rank order -> items
            return jnp.where(sens, p_s[..., idx_s], p_n[..., idx_n])

        def debias(stats, n):
            return scatter(*_ubd_forms.debias(self.eps, self.s, self.d, self.sizes, self.weights, self.alpha,
                                              stats, n))

        def variance(p, n):
            p = jnp.asarray(p)
            order_s, order_n = np.flatnonzero(rank_s >= 0), np.flatnonzero(rank_n >= 0)
            v = _ubd_forms.item_nvar(self.eps, self.s, self.d, self.sizes, self.weights, self.alpha,
                                     p[..., order_s], p[..., order_n])
            return scatter(*v) / n

        return _records.Estimator(debias=debias, variance=variance)

    _closed_form = _family.Family("UBD", None, None, None, ldp=False,
                                  item_nvar=lambda m, p: m.estimator().variance(p, 1.0))

    def likelihood(self) -> _records.Likelihood:
        """EM on per-report factors: a subset report has likelihood ``e^eps`` on its items, 1 on every other item
        (sensitive or not), so a ``SupportRatio`` with ``low = other = e^{-eps}``; a disclosed item is invertible."""

        def report(ys: UBDReport) -> _likelihood.SupportRatio:
            t = jnp.exp(-jnp.asarray(self.eps))
            sub = jnp.reshape(ys.subset, (-1, self.s))
            item = jnp.reshape(ys.item, (-1,))
            n = item.shape[0]
            low = jnp.full(n, t)
            N = jnp.zeros(self.d, t.dtype).at[jnp.maximum(item, 0)].add((item >= 0).astype(t.dtype))
            return _likelihood.SupportRatio(sub, jnp.asarray(self.sensitive, jnp.int32), low, jnp.ones(n, t.dtype),
                                            low, (item < 0).astype(t.dtype), N)

        return _records.Likelihood(report=report, index=self._columns, support=self._column_support)

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _subsets(self) -> list[np.ndarray]:
        """Per drawn size, ``bool[C(s, k), s]``: its subsets in ``itertools.combinations`` order."""
        if self.s > MAX_UBD_CHANNEL_S:
            raise ValueError(f"UBD: exact channels need len(sensitive) <= {MAX_UBD_CHANNEL_S}, got s={self.s}.")
        out = []
        for k in self.sizes:
            combos = np.array(list(itertools.combinations(range(self.s), k)), dtype=np.int64)
            bits = np.zeros((combos.shape[0], self.s), bool)
            bits[np.arange(combos.shape[0])[:, None], combos] = True
            out.append(bits)
        return out

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        t = np.exp(-eps)
        w = np.asarray(self.weights, np.float64)
        w = w / w.sum()  # float32 leaves (a grid) sum to 1 only to 1e-7; the channel's rows sum to 1 exactly
        rank_s, rank_n = self._ranks()
        sens = rank_s >= 0
        cols, z = [], 0.0
        for wk, k, bits in zip(w, self.sizes, self._subsets()):
            norm = math.comb(self.s - 1, k - 1) + math.comb(self.s - 1, k) * t
            inside = np.where(sens[:, None], bits.T[np.maximum(rank_s, 0)], False)  # [d, C(s, k)]
            cols.append(wk * np.where(inside, 1.0, t) / norm)
            z += wk * k * -np.expm1(-eps) / (k + (self.s - k) * t)
        disclosed = np.zeros((self.d, self.d - self.s))
        disclosed[np.flatnonzero(~sens), rank_n[~sens]] = z
        Q = np.concatenate(cols + [disclosed], axis=1)
        protected = np.r_[np.ones(Q.shape[1] - (self.d - self.s), bool), np.zeros(self.d - self.s, bool)]
        return Q, protected

    def _columns(self, ys: UBDReport) -> np.ndarray:
        """Channel column of each report: its subset's rank among its size's subsets (after the smaller sizes'),
        or the subsets' total plus the disclosed item's non-sensitive rank."""
        table = np.full(2**self.s, -1, np.int64)
        start = 0
        for bits in self._subsets():
            table[(bits.astype(np.int64) << np.arange(self.s)).sum(axis=1)] = start + np.arange(bits.shape[0])
            start += bits.shape[0]
        sub, item = np.asarray(ys.subset), np.asarray(ys.item)
        _, rank_n = self._ranks()
        idx = np.where(item >= 0, start + rank_n[np.maximum(item, 0)],
                       table[(sub.astype(np.int64) << np.arange(self.s)).sum(axis=-1)])
        if np.any(idx < 0):
            raise ValueError(f"Expected UBD reports with a subset of size in {self.sizes} or a disclosed item.")
        return idx

    def _column_support(self) -> np.ndarray:
        """float64 ``[num_outputs, d]``: the items each column supports (its subset, or its disclosed item)."""
        rank_s, rank_n = self._ranks()
        rows = [np.where(rank_s >= 0, bits[:, np.maximum(rank_s, 0)], False) for bits in self._subsets()]
        rows.append((rank_n[None, :] == np.arange(self.d - self.s)[:, None]))
        return np.concatenate(rows).astype(np.float64)

    def _column_stats(self) -> np.ndarray:
        """float64 ``[num_outputs, num_stats]``: the statistic one report of each column adds (``aggregate``)."""
        m, s, dn = len(self.sizes), self.s, self.d - self.s
        rows = []
        for j, bits in enumerate(self._subsets()):
            block = np.zeros((bits.shape[0], m * s + dn))
            block[:, j * s:(j + 1) * s] = bits
            rows.append(block)
        disclosed = np.zeros((dn, m * s + dn))
        disclosed[:, m * s:] = np.eye(dn)
        return np.concatenate(rows + [disclosed])

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.uldp_spec(self.d, self.sensitive, _spec.eps_value(self.eps))
