r"""Recursive Hadamard response RHR (Chen, Kairouz, Özgür 2020): ``b`` bits a report, a block index and one
Hadamard sign sent through ``2^b``-ary randomized response; minilek/private_frequency_oracles'
``recursive_hadamard_response.cc``."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _fields, _pytree, _records, _report_space, _reports, _spec
from uldp_jax.mechanisms.hadamard import _hadamard, _histogram
from uldp_jax.mechanisms.hadamard._hm import coefficient_size


def default_bits(d: int, eps: float) -> int:
    r"""minilek's choice, the paper's regime :math:`2^b \approx e^\varepsilon`: :math:`b = \min(\log_2 K,
    \lceil \varepsilon \log_2 e\rceil)`, at or next to the ``b`` of least variance (``F`` grows like
    :math:`2^b/(e^\varepsilon - 1)` while the block mass shrinks like :math:`2^{1-b}`)."""
    return max(1, min(coefficient_size(d).bit_length() - 1, math.ceil(min(eps, 64.0) / math.log(2.0))))


def rhr_factor(eps: Any, b: int) -> jax.Array:
    r""":math:`1/(p - q) = (e^\varepsilon + 2^b - 1)/(e^\varepsilon - 1)` of ``2^b``-ary RR (written with
    :math:`e^{-\varepsilon}` so large eps does not overflow)."""
    t = jnp.exp(-jnp.asarray(eps))
    return (1.0 + (2.0**b - 1.0) * t) / -jnp.expm1(-jnp.asarray(eps))


def rhr_item_nvar(eps: Any, p: Any, b: int, K: int) -> jax.Array:
    r"""Per-item :math:`n\mathrm{Var}(\hat p_x)` of RHR (iid model); ``p: float[d]``, ``K`` the power of two
    ``>= d``, ``b`` the bits.

    One report adds :math:`F\,\sigma\, H_B[x \bmod B, r]` to :math:`\hat p_x` when its RR output lies in
    item ``x``'s block (:math:`\sigma = \pm 1` its sign), else 0, with :math:`F = 1/(p - q)`; that happens
    w.p. :math:`2q + (p - q) P_{m(x)}`, :math:`P_m` the mass of block ``m``, so

    .. math:: n\mathrm{Var}(\hat p_x) = F\Big(\frac{2}{e^\varepsilon - 1} + P_{m(x)}\Big) - p_x^2.
    """
    p = jnp.asarray(p)
    d = p.shape[-1]
    _check_sizes(d, b, K)
    blocks = 2 ** (b - 1)
    padded = jnp.zeros(p.shape[:-1] + (K,), p.dtype).at[..., :d].set(p)
    mass = jnp.repeat(jnp.sum(padded.reshape(p.shape[:-1] + (blocks, K // blocks)), -1), K // blocks, -1)
    eps = jnp.asarray(eps)[..., None]
    F = rhr_factor(eps, b)
    return F * (2.0 * jnp.exp(-eps) / -jnp.expm1(-eps) + mass[..., :d]) - p**2


def _check_sizes(d: int, b: Any, K: Any) -> None:
    """Refuses a ``K`` that is not a power of two ``>= d`` or ``b`` outside ``[1, log2 K]``."""
    K = _validate.check_int("K", K, minimum=2)
    if K & (K - 1) or K < d:
        raise ValueError(f"Expected K={K} to be a power of two >= d={d}.")
    b = _validate.check_int("b", b, minimum=1)
    if (1 << b) > K:  # at least two positions a block (B >= 2)
        raise ValueError(f"Expected b={b} <= log2 K = {K.bit_length() - 1} (K={K}, the power of two >= "
                         f"d={d}): b - 1 bits index a block of B = K / 2^(b-1) >= 2 items.")


class RHR(_histogram.HadamardCounts, _base.Mechanism):
    r"""Recursive Hadamard response over ``d`` items with ``b`` bits a report (Chen, Kairouz, Özgür 2020).

    Items are the first ``d`` of ``[0, K)``, ``K`` the smallest power of two ``>= d``, cut into
    ``2^(b-1)`` blocks of ``B = K / 2^(b-1)`` consecutive items (item ``x``: block ``x // B``, position
    ``x % B``). A user gets a uniform coefficient ``r`` of :math:`H_B` (public coin: the paper's user groups),
    encodes :math:`v = 2 (x // B) + 1[H_B[x \bmod B, r] = +1]` in ``b`` bits and sends it through
    ``2^b``-ary randomized response (kept w.p. :math:`p = e^\varepsilon/(e^\varepsilon + 2^b - 1)`, else one
    of the others, each w.p. ``q = p e^{-eps}``). A report is ``y = u B + r`` in ``[0, 2K)`` (minilek's
    numbering), so

    .. math:: Q(uB + r \mid x) = \frac1B\big(q + (p - q)\, 1[u = v(x, r)]\big).

    The statistic is the report histogram; the unbiased estimate is minilek's, written as one length-``B``
    transform per block: :math:`\hat p_{mB+i} = F (S H_B)[m, i] / n` with :math:`S[m, r] = h[(2m+1)B + r] -
    h[2mB + r]`, :math:`F = 1/(p - q)` (minilek transforms over the blocks and then over all ``K`` items,
    which is the same since :math:`H_K = H_{2^{b-1}} \otimes H_B`). Its variance: ``rhr_item_nvar``.

    Communication: ``b`` bits (the RR output ``u``); the coefficient ``r`` is public (shared randomness or the
    user's group, as in the paper), drawn here with the user's key and carried in the report for the server.
    Sent privately it would cost ``log2(2K)`` bits. ``b = 1`` is the one-bit Hadamard mechanism (``ul.HM``,
    the same channel up to the numbering of reports).

    Privacy: ``eps``-LDP, tight (``r`` does not depend on ``x``; given ``r`` the report is ``2^b``-ary RR).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      b: bits a report (static, in ``[1, log2 K]``); ``None``: ``default_bits`` (needs a concrete eps).

    References:
      Chen, Kairouz, Özgür, "Breaking the communication-privacy-accuracy trilemma", NeurIPS 2020;
      minilek/private_frequency_oracles ``oracles/recursive_hadamard_response.cc``.
    """

    d: int = _pytree.static_field()
    eps: Any
    b: Any = _pytree.static_field(default=None)

    report_kind = "item"

    def __post_init__(self):
        d = _fields.check_domain(self)
        K = coefficient_size(d)
        b = default_bits(d, _fields.concrete_eps(self.eps, "b")) if self.b is None else self.b
        _check_sizes(d, b, K)
        _fields.set_fields(self, b=int(b))

    # ---- sizes -----------------------------------------------------------------------------------------------
    @property
    def K(self) -> int:
        """Items padded to a power of two, ``K >= d``."""
        return coefficient_size(self.d)

    @property
    def B(self) -> int:
        """Items a block (the Hadamard size of a block): ``K / 2^(b-1)``."""
        return self.K >> (self.b - 1)

    @property
    def num_outputs(self) -> int:
        return 2 * self.K  # 2^b RR outputs times B coefficients

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        """``(p, q)`` of ``2^b``-ary RR."""
        t = jnp.exp(-jnp.asarray(self.eps))
        p = 1.0 / (1.0 + (2.0**self.b - 1.0) * t)
        return p, p * t

    # ---- sampling --------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports ``u B + r`` in ``[0, 2K)``."""
        xs = jnp.asarray(xs, jnp.int32)
        k_r, k_keep, k_other = jax.random.split(key, 3)
        B, m = self.B, 1 << self.b
        r = _hadamard.uniform_index(k_r, B, xs.shape)
        v = 2 * (xs // B) + (_hadamard.parity(r & (xs % B)) == 0).astype(jnp.int32)
        keep = jax.random.uniform(k_keep, xs.shape, dtype=jnp.float32) < self._pq()[0]
        other = (v + 1 + jax.random.randint(k_other, xs.shape, 0, m - 1, dtype=jnp.int32)) % m
        return (jnp.where(keep, v, other) * B + r).astype(jnp.int32)

    # ---- estimation ------------------------------------------------------------------------------------------
    def decode(self, stats: jax.Array, n: Any) -> jax.Array:
        r"""Unbiased :math:`\hat p` (``float[..., d]``) from the report histogram ``stats: int[..., 2K]``: the
        signed counts of each block's two RR outputs, one FWHT over the coefficients, times ``F / n``."""
        stats = jnp.asarray(stats)
        h = stats.reshape(stats.shape[:-1] + (1 << (self.b - 1), 2, self.B))
        W = _hadamard.fwht(h[..., 1, :] - h[..., 0, :])  # [..., blocks, B]
        scale = rhr_factor(self.eps, self.b) / jnp.asarray(n)
        return W.reshape(stats.shape[:-1] + (self.K,))[..., : self.d] * scale

    def item_variance(self, p: jax.Array, n: Any) -> jax.Array:
        """iid per-item variance of ``decode``: ``rhr_item_nvar / n``."""
        return rhr_item_nvar(self.eps, p, self.b, self.K) / jnp.asarray(n)

    # ---- the channel's products (EM, count sampler) ----------------------------------------------------------
    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """``p Q`` (``float[..., 2K]``): cell ``(2m + s) B + r`` gets ``(q sum p + (p - q) (P_m + (-1)^(1-s)
        (H P)_{m,r}) / 2) / B`` (one FWHT per block)."""
        p = jnp.asarray(p)
        P, Qp = self._pq()
        batch, blocks = p.shape[:-1], 1 << (self.b - 1)
        emb = jnp.zeros(batch + (self.K,), p.dtype).at[..., : self.d].set(p).reshape(batch + (blocks, self.B))
        W = _hadamard.fwht(emb)  # [..., blocks, B]; W[..., 0] is the block's mass
        mass = W[..., :1]
        cells = jnp.stack([(mass - W) / 2.0, (mass + W) / 2.0], axis=-2)  # [..., blocks, 2, B]
        total = jnp.sum(p, -1)[..., None, None, None]
        return ((Qp * total + (P - Qp) * cells) / self.B).reshape(batch + (2 * self.K,))

    def channel_rmatvec(self, w: jax.Array) -> jax.Array:
        """``Q w`` (``float[..., d]``) for ``w: float[..., 2K]``: ``(q sum w + (p - q) sum_r w[v(x, r) B + r])
        / B``, the inner sum by one FWHT of ``w_+ - w_-`` per block."""
        w = jnp.asarray(w)
        P, Qp = self._pq()
        h = w.reshape(w.shape[:-1] + (1 << (self.b - 1), 2, self.B))
        own = (jnp.sum(h, axis=(-2, -1))[..., None] + _hadamard.fwht(h[..., 1, :] - h[..., 0, :])) / 2.0
        own = own.reshape(w.shape[:-1] + (self.K,))[..., : self.d]
        return (Qp * jnp.sum(w, -1, keepdims=True) + (P - Qp) * own) / self.B

    def likelihood(self) -> _records.Likelihood:
        """EM on the histogram by FWHT (``channel_matvec`` / ``channel_rmatvec``); report ``u B + r`` supports
        the items ``x`` with ``v(x, r) = u`` (``_column_support``)."""
        return _records.Likelihood(ops=(self.channel_matvec, self.channel_rmatvec), support=self._column_support)

    def reports(self) -> _report_space.Reports:
        """The report histogram (``2K`` cells); ``b`` bits sent a report (the coefficient is public)."""
        return _report_space.Reports(bits=float(self.b))

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _codes(self) -> np.ndarray:
        """int64 ``[d, B]``: ``v(x, r)``, the ``b``-bit code of item ``x`` under coefficient ``r``."""
        x = np.arange(self.d)
        H = _hadamard.hadamard_matrix(self.B, rows=x % self.B)  # [d, B]
        return 2 * (x // self.B)[:, None] + (H > 0).astype(np.int64)

    def _column_support(self) -> np.ndarray:
        """float64 ``[2K, d]``: 1 where report ``u B + r`` carries item ``x``'s code (``u = v(x, r)``)."""
        _reports.check_channel_size("RHR", self.d, 2 * self.K)
        S = np.zeros((self.d, 2 * self.K))
        rows = np.repeat(np.arange(self.d), self.B)
        S[rows, (self._codes() * self.B + np.arange(self.B)).reshape(-1)] = 1.0
        return S.T

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        t = np.exp(-eps)
        p = 1.0 / (1.0 + (2.0**self.b - 1.0) * t)
        Q = np.where(self._column_support().T > 0, p, p * t) / self.B
        return Q, np.ones(2 * self.K, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    def pure(self) -> None:
        r"""Not pure, so not a GLUTF base (003's conditions): an item ``x'`` in ``x``'s block shares its code
        for half the coefficients and is supported w.p. :math:`(p + q)/2`, one in another block w.p. ``q``,
        so no single :math:`q^*` exists for ``b >= 2``. At ``b = 1`` RHR is the one-bit Hadamard mechanism:
        use ``ul.glutf(ul.HM(s, eps), ...)``, which is pure (:math:`q^* = 1/2`)."""
        return None

    _closed_form = _family.Family("RHR", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: rhr_item_nvar(m.eps, p, m.b, m.K))
