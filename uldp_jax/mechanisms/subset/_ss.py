"""Subset selection (k-subset mechanism; Wang et al. 2016, Ye & Barg 2018; 003 §5.1)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _fields, _likelihood, _pure_uldp as _th, _family, _nmse, _optima, _records
from uldp_jax.mechanisms.core import _pytree, _reports, _spec
from uldp_jax.mechanisms.subset import _ksubset, _ss_counts

# Largest domain for which the exact channel enumerates k-subsets (2**d lookup table for the report columns).
MAX_SS_CHANNEL_D = 20


def default_k(s: int, eps: Any, theta_n: float = 0.0) -> int:
    """The MSE-optimal subset size (003 eq 37; ``s = d``, ``theta_n = 0`` for the LDP SS); needs a concrete eps."""
    return _th.uss_k_opt(s, _fields.concrete_eps(eps, "k"), theta_n)


def check_k(mech: Any, s: int, theta_n: float = 0.0) -> None:
    """Checks and sets the subset size ``k`` in ``[1, s - 1]`` (``None``: ``default_k(s, eps, theta_n)``) of a
    subset mechanism over ``s`` items (SS, uSS)."""
    if s < 2:
        raise ValueError(f"Expected k in [1, s - 1], which is empty for s={s}; use ul.URR for one sensitive item.")
    k = default_k(s, mech.eps, theta_n) if mech.k is None else mech.k
    _fields.set_fields(mech, k=_validate.check_int("k", k, minimum=1, maximum=s - 1))


class SS(_base.Mechanism):
    r"""eps-subset selection over ``d`` items: report a ``k``-subset of ``[0, d)``.

    The report contains the true item w.p. :math:`p^* = ke^\varepsilon/(ke^\varepsilon+d-k)` (then the other
    ``k - 1`` items are a uniform subset of the rest), otherwise it is a uniform ``k``-subset of the other
    items. Every subset containing ``x`` has probability ``e^eps`` times that of every subset avoiding it.
    Reports are ``bool[d]`` indicator vectors with exactly ``k`` ones; the support of a report is its subset, so
    ``aggregate`` (bit sums) gives the per-item support counts. ``k = 1`` is GRR.

    Pure LDP (003 §2.3): :math:`p^*` as above and :math:`q^* = k(ke^\varepsilon+d-k-e^\varepsilon)/
    ((ke^\varepsilon+d-k)(d-1))`.

    Privacy: ``eps``-LDP, tight.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      k: subset size (static int in ``[1, d - 1]``); ``None`` gives the MSE-optimal integer (the better of
        floor/ceil of ``d / (e^eps + 1)``, i.e. 003 eq 37 with ``s = d`` and ``theta_N = 0``); needs a concrete eps.

    Channel columns: the ``C(d, k)`` subsets in ``itertools.combinations(range(d), k)`` order
    (``likelihood().index`` maps reports to them).

    References:
      Wang et al. (2016) arXiv:1607.08025; Ye & Barg (IEEE T-IT 2018); He et al. (GLUTF) §5.1.
    """

    d: int = _pytree.static_field()
    eps: Any
    k: Any = _pytree.static_field(default=None)

    report_kind = "bits"

    def __post_init__(self):
        check_k(self, _fields.check_domain(self))

    @property
    def num_outputs(self) -> int:
        return math.comb(self.d, self.k)

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        return _th.ss_probs(self.d, self.eps, self.k)

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``bool[..., d]`` with ``k`` ones.

        Own item w.p. ``p*`` (one float32 uniform), then the rest by Floyd's algorithm
        (``min(k, d - k) + 2`` exact uniform integers per user; see ``uldp_jax.mechanisms.subset._ksubset``).
        """
        p, _ = self._pq()
        k_in, k_u = jax.random.split(key)
        include = jax.random.uniform(k_in, xs.shape, dtype=jnp.float32) < p
        flat = jnp.reshape(xs, (-1,))
        bits = _ksubset.subset_bits(k_u, flat, jnp.reshape(include, (-1,)), self.d, self.k)
        return bits.reshape(xs.shape + (self.d,))

    def counts(self) -> _records.Counts:
        """iid model only: one scan over the ``d`` items (``mechanisms.subset._ss_counts``).

        Also takes ``P`` populations (``n float[P]``, ``p float[P, d]``) in one scan. Given fixed counts the
        moves would be multivariate hypergeometric (not implemented), so ``fixed`` stays ``None``. Cost: the
        scan's binomials (``d`` steps of ``3`` draws per occupied bin, ``_ss_counts.scan_draws``), holding O(k)
        bins at once whatever the number of draws (``_ss_counts.scan_bytes``).
        """

        def iid(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
            if jnp.ndim(n) == 0:
                return _ss_counts.ss_counts_iid(key, self, n, p)
            return _ss_counts.ss_counts_mixed(key, self, n, p)

        return _records.counts_record(self, iid=iid, draws=lambda iid: _ss_counts.scan_draws(self.d, self.k),
                                      memory=lambda iid: _ss_counts.scan_bytes(self.d, self.k))

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the support-ratio likelihood ``t + (1 - t) 1[x in S(y)]`` of each report (``core._likelihood``);
        the channel's columns are the k-subsets (``_columns``, ``_column_support``)."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys), index=self._columns,
                                   support=self._column_support)

    def estimator(self) -> _records.Estimator:
        t = jnp.exp(-jnp.asarray(self.eps))
        d, k = self.d, self.k
        gap = k * (d - k) * -jnp.expm1(-jnp.asarray(self.eps)) / ((k + (d - k) * t) * (d - 1))
        _, q = self._pq()
        return _records.Estimator(affine=(jnp.full((d,), gap), jnp.full((d,), q)))

    def _subsets(self) -> np.ndarray:
        if self.d > MAX_SS_CHANNEL_D:
            raise ValueError(f"SS: exact channels need d <= {MAX_SS_CHANNEL_D}, got d={self.d}.")
        _reports.check_channel_size("SS", self.d, math.comb(self.d, self.k))
        combos = np.array(list(itertools.combinations(range(self.d), self.k)), dtype=np.int64)
        bits = np.zeros((combos.shape[0], self.d), dtype=bool)
        bits[np.arange(combos.shape[0])[:, None], combos] = True
        return bits

    def _column_support(self) -> np.ndarray:
        """bool ``[C(d, k), d]``: the items each channel column (subset) supports."""
        return self._subsets()

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, d, k = _spec.eps_value(self.eps), self.d, self.k
        bits = self._subsets()
        t = np.exp(-eps)
        norm = math.comb(d - 1, k - 1) + math.comb(d - 1, k) * t
        Q = np.where(bits.T, 1.0, t) / norm
        return Q, np.ones(bits.shape[0], dtype=bool)

    def _columns(self, ys: Any) -> np.ndarray:
        """Channel column of each report ``bool[..., d]`` (its rank among the k-subsets)."""
        bits = self._subsets()
        table = np.full(2**self.d, -1, dtype=np.int64)
        table[(bits.astype(np.int64) << np.arange(self.d)).sum(axis=1)] = np.arange(bits.shape[0])
        ys = np.asarray(ys)
        idx = table[(ys.astype(np.int64) << np.arange(self.d)).sum(axis=-1)]
        if np.any(idx < 0):
            raise ValueError(f"Expected reports with exactly k={self.k} items set.")
        return idx

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))


    _closed_form = _family.Family(
        "SS", "k", lambda e, s, th, k: _nmse.ss_nmse(e, s, k), _family.uss_probs, ldp=True, integer=True,
        domain=lambda s: (1, s - 1), optimum=lambda e, s, th: _optima.optimal_k(e, s, 0.0))

    def pure(self) -> _records.Pure:
        r"""Pure LDP (``ss_probs``); the share :math:`e/(ke+d-k)` (any subset containing ``i``)."""
        p, q = self._pq()
        return _records.Pure(p, q, share=_th.ss_share(self.d, self.eps, self.k),
                             z_max=lambda s: _th.uss_z_max(s, self.eps, self.k))
