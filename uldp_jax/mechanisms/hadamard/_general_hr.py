r"""General Hadamard response for eps-LDP at any eps (Acharya, Sun, Zhang, AISTATS 2019, §"general privacy")."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _pytree, _reports, _spec
from uldp_jax.mechanisms.hadamard import _hadamard, _histogram, _general_forms as _forms


class HadamardResponse(_histogram.HadamardCounts, _base.Mechanism):
    r"""Hadamard response for every privacy regime: ``B`` blocks of a Hadamard code of size ``b``.

    Items fill consecutive blocks of ``b - 1``; item ``x`` owns block ``j = x // (b - 1)`` and row
    ``r = x mod (b - 1) + 1`` of :math:`H_b` (``b`` the smallest power of two with ``B (b - 1) >= d``). Its set
    :math:`C_x` is that row's +1 set inside block ``j`` (``b/2`` outputs of the ``K = B b``). The report is uniform
    on all ``K`` outputs with probability :math:`2B/(2B - 1 + e^\varepsilon)`, otherwise uniform on :math:`C_x`:

    .. math:: Q(y|x) = \frac{2e^\varepsilon}{b(2B - 1 + e^\varepsilon)}\ (y \in C_x), \qquad
       \frac{2}{b(2B - 1 + e^\varepsilon)}\ \text{otherwise}.

    Report ``y = j' b + i`` is output ``(j', i)``. Statistics are the histogram ``int32[K]``; the unbiased
    estimate :math:`\hat p_x = \frac{2B - 1 + e^\varepsilon}{e^\varepsilon - 1}\,(H_b c_j)[r]/n` (``c_j``: block
    ``j``'s histogram) is one batched fast Walsh-Hadamard transform over the blocks, ``O(K log b)``. Its exact
    per-item variance (iid) is
    :math:`(2B - 1 + e^\varepsilon)(2 + (e^\varepsilon - 1) p(\mathcal X_j))/(e^\varepsilon - 1)^2 - p_x^2`
    (``mechanisms/hadamard/_general_forms.py``). With ``num_blocks = 1`` this is ``HR`` (004's high-privacy scheme).

    ``num_blocks`` defaults to the power of two ``B <= 2d`` with the smallest exact risk at the uniform
    distribution (``_forms.general_hr.optimal_blocks``): never worse there than the one-block ``HR`` or the
    authors' rule :math:`B = 2^{\lfloor\log_2\min(2d, e^\varepsilon)\rfloor}` (``authors_blocks``: their
    reference code, which pure-LDP ships as its HR for eps > 1; pass ``num_blocks`` to use it). It fixes the
    report space, so it is static and must be given when ``eps`` is traced (e.g. a ``jax.vmap``-built grid).

    Privacy: ``eps``-LDP, tight (on every output of a used block two inputs differ by exactly
    :math:`e^\varepsilon`).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf, > 0).
      num_blocks: ``B`` (static, in ``[1, 2d]``); ``None`` at construction picks ``optimal_blocks(d, eps)``.

    References:
      Acharya, Sun, Zhang, "Hadamard response: Estimating distributions privately, efficiently, and with little
      communication", AISTATS 2019.
    """

    d: int = _pytree.static_field()
    eps: Any
    num_blocks: Any = _pytree.static_field(default=None)

    report_kind = "item"

    def __post_init__(self):
        d = _validate.check_int("d", self.d, minimum=2)
        eps = _validate.check_eps(self.eps)
        B = self.num_blocks
        if B is None:
            if not _validate.is_concrete(eps) or np.ndim(eps) != 0:
                raise ValueError("Expected num_blocks to be given when eps is traced or a grid (it fixes the "
                                 f"report space), got num_blocks=None with eps={self.eps!r}.")
            B = _forms.optimal_blocks(d, float(eps))
        B = _validate.check_int("num_blocks", B, minimum=1, maximum=2 * d)
        b = _forms.block_size(d, B)
        if B * b > _hadamard.MAX_HADAMARD_SIZE:
            raise ValueError(f"Expected num_blocks={B} with d={d} to give at most "
                             f"{_hadamard.MAX_HADAMARD_SIZE} outputs, got {B * b}.")
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "num_blocks", B)

    @property
    def b(self) -> int:
        """Block size: the smallest power of two with ``num_blocks * (b - 1) >= d``."""
        return _forms.block_size(self.d, self.num_blocks)

    @property
    def num_outputs(self) -> int:
        return self.num_blocks * self.b

    def _layout(self) -> tuple[jax.Array, jax.Array]:
        block, row, _ = _forms.layout(self.d, self.num_blocks)
        return jnp.asarray(block), jnp.asarray(row)

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports in ``[0, num_outputs)`` of the same shape."""
        xs = jnp.asarray(xs, jnp.int32)
        block, row = self._layout()
        b, B = self.b, self.num_blocks
        k_blk, k_pos, k_mix = jax.random.split(key, 3)
        any_block = jax.random.randint(k_blk, xs.shape, 0, B, dtype=jnp.int32)
        pos = _hadamard.uniform_index(k_pos, b, xs.shape)
        own = jax.random.uniform(k_mix, xs.shape, dtype=jnp.float32) >= _forms.uniform_prob(self.eps, B)
        pos = jnp.where(own, _hadamard.to_sign(pos, row[xs], True), pos)
        return (jnp.where(own, block[xs], any_block) * b + pos).astype(jnp.int32)

    def _blocks_fwht(self, v: jax.Array) -> jax.Array:
        """``[..., K] -> [..., B, b]``: the FWHT of every block's slice."""
        v = jnp.asarray(v)
        return _hadamard.fwht(v.reshape(v.shape[:-1] + (self.num_blocks, self.b)))

    def decode(self, stats: jax.Array, n: Any) -> jax.Array:
        r"""Unbiased :math:`\hat p_x = \frac{c}{e^\varepsilon - 1}(H_b c_j)[r]/n` from ``stats: int[K]`` (FWHT)."""
        block, row = self._layout()
        W = self._blocks_fwht(stats)[..., block, row]
        return W * (_forms.scale(self.eps, self.num_blocks) / jnp.asarray(n))

    def item_variance(self, p: jax.Array, n: Any) -> jax.Array:
        """Per-item variance of ``decode`` (iid model), closed form (``_forms.general_hr.item_nvar``)."""
        return _forms.item_nvar(self.eps, p, self.num_blocks) / jnp.asarray(n)

    def _cells(self) -> tuple[jax.Array, jax.Array]:
        """``(t_term, u_term)``: ``Q = (t_term + u_term * [y in own block] * (1 + H)/2) / b`` per entry."""
        eps = jnp.asarray(self.eps)
        t, u = jnp.exp(-eps), -jnp.expm1(-eps)
        den = self.b * (1.0 + (2.0 * self.num_blocks - 1.0) * t)
        return 2.0 * t / den, 2.0 * u / den

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """Output distribution ``p Q`` (``float[K]``) of ``p: float[d]``."""
        p = jnp.asarray(p)
        block, row = self._layout()
        batch, B, b = p.shape[:-1], self.num_blocks, self.b
        emb = jnp.zeros(batch + (B, b), p.dtype).at[..., block, row].set(p)
        t_term, u_term = self._cells()
        own = (jnp.sum(emb, -1, keepdims=True) + _hadamard.fwht(emb)) / 2.0  # p mass with y in C_x, per output
        out = jnp.sum(p, -1)[..., None, None] * t_term + u_term * own
        return out.reshape(batch + (B * b,))

    def channel_rmatvec(self, w: jax.Array) -> jax.Array:
        """``Q w`` (``float[d]``) for ``w: float[K]`` (the EM E-step's transpose product)."""
        w = jnp.asarray(w)
        block, row = self._layout()
        wb = w.reshape(w.shape[:-1] + (self.num_blocks, self.b))
        t_term, u_term = self._cells()
        own = (jnp.sum(wb, -1)[..., block] + _hadamard.fwht(wb)[..., block, row]) / 2.0
        return jnp.sum(w, -1, keepdims=True) * t_term + u_term * own

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, d, B, b = _spec.eps_value(self.eps), self.d, self.num_blocks, self.b
        _reports.check_channel_size("HadamardResponse", d, B * b)
        block, row, _ = _forms.layout(d, B)
        t = np.exp(-eps)
        den = b * (1.0 + (2.0 * B - 1.0) * t)
        Q = np.full((d, B, b), 2.0 * t / den)
        H = _hadamard.hadamard_matrix(b, rows=row)  # [d, b]
        Q[np.arange(d), block, :] = np.where(H > 0, 2.0 / den, 2.0 * t / den)
        return Q.reshape(d, B * b), np.ones(B * b, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    _closed_form = _family.Family("HadamardResponse", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: _forms.item_nvar(m.eps, p, m.num_blocks))
