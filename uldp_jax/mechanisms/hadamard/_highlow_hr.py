r"""High-low Hadamard response for (A, eps)-HLLDP (004 §5.1, eqs 13-16, with docs/errata.md#004-eq-13-the-hadamard-row row ``x + 1`` fix)."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _base, _delegate, _family, _fields, _pytree, _reports, _spec
from uldp_jax.mechanisms.hadamard import _hadamard, _histogram, _forms as _hr_forms, _matrices
from uldp_jax.mechanisms.hadamard._hr import hr_cells64, hr_gap, hr_plus_prob


@functools.lru_cache(maxsize=32)
def _tables(d: int, sensitive: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(sens bool[d], row int32[d], out int32[d], pos int32[d]) for items of ``[0, d)``.

    ``row``: Hadamard row (rank in ``A`` + 1) of a sensitive item; ``out``: report ``S + rank in B`` of a
    non-sensitive item; ``pos``: the item's index in ``concat(sensitive estimates, non-sensitive estimates)``.
    """
    sens = _spec.sensitive_mask(d, sensitive)
    s = len(sensitive)
    S = _hadamard.hadamard_size(s, "len(sensitive)")
    rank_a = np.cumsum(sens) - 1
    rank_b = np.cumsum(~sens) - 1
    row = np.where(sens, rank_a + 1, 1).astype(np.int32)
    out = np.where(sens, 0, S + rank_b).astype(np.int32)
    pos = np.where(sens, rank_a, s + rank_b).astype(np.int32)
    return sens, row, out, pos


class _SpecView(_delegate.ReportsOf, _base.Mechanism):
    """A mechanism seen under another guarantee: same channel and sampler, another ``privacy_spec``."""

    mech: Any
    spec: _spec.PrivacySpec = _pytree.static_field()

    @property
    def d(self) -> int:
        return self.mech.d

    @property
    def reporter(self) -> Any:
        return self.mech

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        return self.mech.perturb_batch(key, xs)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mech.channel_matrix()

    def privacy_spec(self) -> _spec.PrivacySpec:
        return self.spec


class HighLowHR(_histogram.HadamardCounts, _fields.ULDPFields):
    r"""High-low Hadamard response (004 eqs 13-14): Hadamard response on ``A``, Mangat-style on ``B = X \ A``.

    With :math:`s = |A|`, :math:`S` the smallest power of two :math:`> s` and :math:`t = d - s`, reports lie in
    ``[0, S + t)``. The ``r``-th sensitive item (sorted order) owns Hadamard row ``r + 1`` of :math:`H_S` and reports
    like ``HR`` inside ``[0, S)``: :math:`2e^\varepsilon/(S(e^\varepsilon+1))` on its +1 set, :math:`2/(S(e^\varepsilon+1))`
    on its -1 set. The ``j``-th non-sensitive item reports ``S + j`` w.p. :math:`(e^\varepsilon-1)/(e^\varepsilon+1)`,
    else a uniform index of ``[0, S)``. Channel columns: ``[0, S)`` Hadamard outputs, then ``S + j`` for the ``j``-th
    non-sensitive item.

    Estimators (eqs 15-16, unbiased): with :math:`R = (e^\varepsilon+1)/(e^\varepsilon-1)` and histogram ``c``,
    eq 15 :math:`\hat p_i = 2R(\widehat{p(S_i)} - 1/(e^\varepsilon+1)) - \widehat{p(A)}`, with
    :math:`\widehat{p(A)} = R(\widehat{p([S])} - 2/(e^\varepsilon+1))`, simplifies to
    :math:`\hat p_i = R\,(H_S c_{[S]})[r+1]/n` (one FWHT of size ``S``); eq 16 is
    :math:`\hat p_x = R\, c_{S+j}/n`. Communication: ``log2(S + t)`` bits.

    Privacy: (A, eps)-HLLDP (kind ``"hlldp"``, E from ``hlldp_matrix``), tight; also (A, [S], eps)-ULDP
    (docs/errata.md#004-eq-13-the-hadamard-row; audit with ``ul.audit(mech.uldp_view())``): outputs ``S + j`` reveal a non-sensitive input.

    Attributes:
      d: domain size (static, >= 2).
      sensitive: sorted tuple of the sensitive items ``A`` (static; non-empty subset of ``[0, d)``).
      eps: privacy budget (leaf, > 0).

    References:
      Acharya, Bonawitz, Kairouz, Ramage, Sun, "Context-aware local differential privacy" (seed 004), §5.1, App. C.1.
    """


    report_kind = "item"

    def __post_init__(self):
        super().__post_init__()
        _hadamard.hadamard_size(len(self.sensitive), "len(sensitive)")

    @property
    def S(self) -> int:
        """Hadamard size of the sensitive part: smallest power of two larger than ``s``."""
        return _hadamard.hadamard_size(self.s, "len(sensitive)")

    @property
    def t(self) -> int:
        """Number of non-sensitive items."""
        return self.d - self.s

    @property
    def num_outputs(self) -> int:
        return self.S + self.t

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports in ``[0, S + t)``."""
        xs = jnp.asarray(xs, jnp.int32)
        sens, row, out, _ = (jnp.asarray(a) for a in _tables(self.d, self.sensitive))
        k_idx, k_u = jax.random.split(key)
        y = _hadamard.uniform_index(k_idx, self.S, xs.shape)
        u = jax.random.uniform(k_u, xs.shape, dtype=jnp.float32)
        y_sens = _hadamard.to_sign(y, row[xs], u < hr_plus_prob(self.eps))
        y_non = jnp.where(u < hr_gap(self.eps), out[xs], y)
        return jnp.where(sens[xs], y_sens, y_non).astype(jnp.int32)

    def decode(self, stats: jax.Array, n: Any) -> jax.Array:
        """Eqs 15-16 (unbiased) from the histogram ``stats: int[S + t]``; returns ``float[d]``."""
        stats = jnp.asarray(stats)
        W = _hadamard.fwht(stats[..., : self.S])
        est = jnp.concatenate([W[..., 1 : self.s + 1], stats[..., self.S :]], axis=-1)
        pos = jnp.asarray(_tables(self.d, self.sensitive)[3])
        return est[..., pos] / (hr_gap(self.eps) * jnp.asarray(n))

    def item_variance(self, p: jax.Array, n: Any) -> jax.Array:
        r"""Per-item variance of ``decode`` (iid): :math:`(R^2 p([S]) - p_i^2)/n` on A, :math:`(R p_x - p_x^2)/n`
        on B."""
        p = jnp.asarray(p)
        c = hr_gap(self.eps)
        sens = jnp.asarray(_tables(self.d, self.sensitive)[0])
        p_a = jnp.sum(jnp.where(sens, p, 0.0), axis=-1, keepdims=True)
        p_hadamard = (1.0 - c) + c * p_a  # p([S]) = 2/(e+1) + (e-1)/(e+1) p(A)
        return (jnp.where(sens, p_hadamard / c**2, p / c) - p**2) / jnp.asarray(n)

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """Output distribution ``p Q`` (``float[S + t]``) of ``p: float[d]``, with one FWHT of size ``S``."""
        p = jnp.asarray(p)
        sens = _tables(self.d, self.sensitive)[0]
        a_items, b_items = jnp.asarray(np.flatnonzero(sens)), jnp.asarray(np.flatnonzero(~sens))
        c = hr_gap(self.eps)
        emb = jnp.zeros(p.shape[:-1] + (self.S,), p.dtype).at[..., 1 : self.s + 1].set(p[..., a_items])
        p_a = jnp.sum(p[..., a_items], -1, keepdims=True)
        p_b = jnp.sum(p[..., b_items], -1, keepdims=True)
        q_s = (p_a + (1.0 - c) * p_b + c * _hadamard.fwht(emb)) / self.S
        return jnp.concatenate([q_s, c * p[..., b_items]], axis=-1)

    def channel_rmatvec(self, w: jax.Array) -> jax.Array:
        """``Q w`` (``float[d]``) for ``w: float[S + t]`` (the EM E-step's transpose product)."""
        w = jnp.asarray(w)
        c = hr_gap(self.eps)
        w_s = w[..., : self.S]
        tot = jnp.sum(w_s, -1, keepdims=True)
        est_a = (tot + c * _hadamard.fwht(w_s)[..., 1 : self.s + 1]) / self.S
        est_b = (1.0 - c) * tot / self.S + c * w[..., self.S :]
        pos = jnp.asarray(_tables(self.d, self.sensitive)[3])
        return jnp.concatenate([est_a, est_b], axis=-1)[..., pos]

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, d, S = _spec.eps_value(self.eps), self.d, self.S
        _reports.check_channel_size("HighLowHR", d, self.num_outputs)
        sens, row, out, _ = _tables(d, self.sensitive)
        plus, minus = hr_cells64(S, eps)
        Q = np.zeros((d, self.num_outputs))
        H = _hadamard.hadamard_matrix(S, rows=row[sens])
        Q[sens, :S] = np.where(H > 0, plus, minus)
        Q[~sens, :S] = minus  # 2 / (S (e + 1))
        Q[np.flatnonzero(~sens), out[~sens]] = np.tanh(eps / 2.0)
        protected = np.zeros(self.num_outputs, dtype=bool)
        protected[:S] = True
        return Q, protected

    def privacy_spec(self) -> _spec.PrivacySpec:
        eps = _spec.eps_value(self.eps)
        return _spec.PrivacySpec("hlldp", _matrices.hlldp_matrix(self.d, self.sensitive, eps), eps, None)


    _closed_form = _family.Family(
        "HighLowHR", None, None, None, ldp=False,
        item_nvar=lambda m, p: _hr_forms.highlow_hr_item_nvar(m.eps, p, m.sensitive))

    def uldp_spec(self) -> _spec.PrivacySpec:
        """The (A, [S], eps)-ULDP guarantee (docs/errata.md#004-eq-13-the-hadamard-row): protected outputs ``[0, S)``, invertible from ``B``."""
        return _spec.uldp_spec(self.d, self.sensitive, _spec.eps_value(self.eps))

    def uldp_view(self) -> _SpecView:
        """This mechanism with ``uldp_spec`` as its claimed guarantee, for ``ul.audit``."""
        return _SpecView(self, self.uldp_spec())
