r"""Block-structured Hadamard response for (Pi, eps)-BSLDP (004 §6.1, eq 19)."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _pytree, _reports, _spec
from uldp_jax.mechanisms.hadamard import _hadamard, _histogram, _forms as _hr_forms, _matrices
from uldp_jax.mechanisms.hadamard._hr import hr_cells64, hr_gap, hr_plus_prob
from uldp_jax.mechanisms.hadamard._partition import check_partition


class _Group(NamedTuple):
    """Blocks sharing one Hadamard size ``K``: decoded together by one batched FWHT."""

    K: int
    gather: np.ndarray  # int32[g, K]: report indices of the group's blocks (offset_j + [0, K)).
    items: np.ndarray  # int32[k]: items of the group's blocks.
    flat: np.ndarray  # int32[k]: item's index in the flattened [g, K] transform (block * K + row).


class _Tables(NamedTuple):
    block: np.ndarray  # int32[d]: block index of each item.
    row: np.ndarray  # int32[d]: Hadamard row (rank in block + 1).
    K: np.ndarray  # int32[d]: Hadamard size of the item's block.
    offset: np.ndarray  # int32[d]: first report index of the item's block.
    sizes: np.ndarray  # int64[m]: k_j, items per block.
    Ks: np.ndarray  # int64[m]: K_j, Hadamard size per block.
    offsets: np.ndarray  # int64[m]: offset_j = K_0 + ... + K_{j-1}.
    groups: tuple[_Group, ...]
    inv: np.ndarray  # int32[d]: item x's index in the concatenation of the groups' estimates.


@functools.lru_cache(maxsize=32)
def _tables(blocks: tuple[tuple[int, ...], ...]) -> _Tables:
    d = sum(len(b) for b in blocks)
    sizes = np.array([len(b) for b in blocks], dtype=np.int64)
    Ks = np.array([_hadamard.hadamard_size(len(b), "block size") for b in blocks], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(Ks)[:-1]]).astype(np.int64)
    block, row = np.empty(d, np.int32), np.empty(d, np.int32)
    for j, b in enumerate(blocks):
        block[list(b)] = j
        row[list(b)] = np.arange(1, len(b) + 1)
    groups = []
    for K in np.unique(Ks):
        js = np.flatnonzero(Ks == K)
        gather = (offsets[js][:, None] + np.arange(K)[None, :]).astype(np.int32)
        items = np.concatenate([np.asarray(blocks[j], np.int32) for j in js])
        local = np.concatenate([np.full(sizes[j], i) for i, j in enumerate(js)])
        groups.append(_Group(int(K), gather, items, (local * K + row[items]).astype(np.int32)))
    inv = np.argsort(np.concatenate([g.items for g in groups])).astype(np.int32)
    return _Tables(block, row, Ks[block].astype(np.int32), offsets[block].astype(np.int32), sizes, Ks, offsets,
                   tuple(groups), inv)


class BlockHR(_histogram.HadamardCounts, _base.Mechanism):
    r"""Block-structured Hadamard response (004 §6.1): Hadamard response inside each block of a partition.

    ``blocks`` partitions ``[0, d)`` into ``m`` non-empty blocks of any sizes :math:`k_j`. Block ``j`` gets
    :math:`H_{K_j}` with :math:`K_j` the smallest power of two :math:`> k_j`; its ``r``-th item (sorted order) owns
    row ``r + 1`` and reports ``offset_j + i`` with ``i`` drawn as in ``HR`` inside block ``j``:
    :math:`2e^\varepsilon/(K_j(e^\varepsilon+1))` on the row's +1 set, :math:`2/(K_j(e^\varepsilon+1))` on its -1 set.

    Report space and channel column order: ``[0, sum_j K_j)``, block by block in the order of ``blocks``;
    block ``j`` owns ``[offset_j, offset_j + K_j)`` with ``offset_j = K_0 + ... + K_{j-1}``, and ``offset_j + i``
    is 004's output ``(j, i)``. The report reveals the block.

    Estimator (eq 19, unbiased): :math:`\hat p_x = 2R(\widehat{p(S_x)} - \widehat{p(\mathcal X_j)}/2)`, which
    equals :math:`R\,(H_{K_j} c_j)[r+1]/n` for the block's histogram :math:`c_j`; all blocks of one Hadamard size
    are decoded by one batched FWHT. Communication: ``log2(sum_j K_j)`` bits.

    Privacy: (Pi, eps)-BSLDP (kind ``"bsldp"``, E from ``bsldp_matrix``), tight; *not* eps-LDP across blocks
    when ``m > 1`` (``audit(...).eps_ldp`` is ``inf``).

    Attributes:
      blocks: the partition as a tuple of sorted tuples of items (static).
      eps: privacy budget (leaf, > 0).

    References:
      Acharya, Bonawitz, Kairouz, Ramage, Sun, "Context-aware local differential privacy" (seed 004), §6.1, C.3.
    """

    blocks: Any = _pytree.static_field()
    eps: Any

    report_kind = "item"

    def __post_init__(self):
        blocks, d = check_partition(self.blocks)
        if d < 2:
            raise ValueError(f"Expected blocks to cover d >= 2 items, got d={d}.")
        for b in blocks:
            _hadamard.hadamard_size(len(b), "block size")
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "eps", _validate.check_eps(self.eps))

    @property
    def d(self) -> int:
        return int(_tables(self.blocks).block.shape[0])

    @property
    def m(self) -> int:
        """Number of blocks."""
        return len(self.blocks)

    @property
    def block_sizes(self) -> np.ndarray:
        """int64[m]: ``k_j``."""
        return _tables(self.blocks).sizes

    @property
    def hadamard_sizes(self) -> np.ndarray:
        """int64[m]: ``K_j``."""
        return _tables(self.blocks).Ks

    @property
    def num_outputs(self) -> int:
        return int(_tables(self.blocks).Ks.sum())

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``int32`` reports in ``[0, num_outputs)``."""
        xs = jnp.asarray(xs, jnp.int32)
        tb = _tables(self.blocks)
        row, K, offset = (jnp.asarray(a)[xs] for a in (tb.row, tb.K, tb.offset))
        return offset + _hadamard.sample_signed_index(key, row, K, hr_plus_prob(self.eps), xs.shape)

    def decode(self, stats: jax.Array, n: Any) -> jax.Array:
        """Eq 19 (unbiased) from the histogram ``stats: int[num_outputs]``; returns ``float[d]``."""
        stats = jnp.asarray(stats)
        batch = stats.shape[:-1]
        tb = _tables(self.blocks)
        parts = []
        for g in tb.groups:  # one batched FWHT per distinct Hadamard size (at most ~30)
            W = _hadamard.fwht(stats[..., jnp.asarray(g.gather)])  # [..., g, K]
            parts.append(W.reshape(batch + (-1,))[..., jnp.asarray(g.flat)])
        est = jnp.concatenate(parts, axis=-1)[..., jnp.asarray(tb.inv)]
        return est / (hr_gap(self.eps) * jnp.asarray(n))

    def item_variance(self, p: jax.Array, n: Any) -> jax.Array:
        r"""Per-item variance of ``decode`` (iid model): :math:`(R^2 p(\mathcal X_j) - p_x^2)/n`."""
        p = jnp.asarray(p)
        block = jnp.asarray(_tables(self.blocks).block)
        p_block = jax.ops.segment_sum(jnp.moveaxis(p, -1, 0), block, num_segments=self.m)
        p_block = jnp.moveaxis(p_block, 0, -1)[..., block]
        return (p_block / hr_gap(self.eps) ** 2 - p**2) / jnp.asarray(n)

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """Output distribution ``p Q`` (``float[num_outputs]``) of ``p: float[d]``, by batched FWHTs."""
        p = jnp.asarray(p)
        batch, c = p.shape[:-1], hr_gap(self.eps)
        q = jnp.zeros(batch + (self.num_outputs,), p.dtype)
        for g in _tables(self.blocks).groups:
            shape = batch + g.gather.shape
            emb = jnp.zeros(batch + (g.gather.size,), p.dtype).at[..., jnp.asarray(g.flat)].set(
                p[..., jnp.asarray(g.items)]).reshape(shape)
            qg = (jnp.sum(emb, -1, keepdims=True) + c * _hadamard.fwht(emb)) / g.K
            q = q.at[..., jnp.asarray(g.gather.ravel())].set(qg.reshape(batch + (-1,)))
        return q

    def channel_rmatvec(self, w: jax.Array) -> jax.Array:
        """``Q w`` (``float[d]``) for ``w: float[num_outputs]`` (the EM E-step's transpose product)."""
        w = jnp.asarray(w)
        batch, c, tb = w.shape[:-1], hr_gap(self.eps), _tables(self.blocks)
        parts = []
        for g in tb.groups:
            wg = w[..., jnp.asarray(g.gather)]  # [..., g, K]
            tot = jnp.sum(wg, -1)[..., jnp.asarray(g.flat // g.K)]
            parts.append((tot + c * _hadamard.fwht(wg).reshape(batch + (-1,))[..., jnp.asarray(g.flat)]) / g.K)
        return jnp.concatenate(parts, axis=-1)[..., jnp.asarray(tb.inv)]

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps, d, M = _spec.eps_value(self.eps), self.d, self.num_outputs
        _reports.check_channel_size("BlockHR", d, M)
        tb = _tables(self.blocks)
        Q = np.zeros((d, M))
        for j, b in enumerate(self.blocks):
            K, off = int(tb.Ks[j]), int(tb.offsets[j])
            plus, minus = hr_cells64(K, eps)
            H = _hadamard.hadamard_matrix(K, rows=tb.row[list(b)])
            Q[np.asarray(b)[:, None], off + np.arange(K)[None, :]] = np.where(H > 0, plus, minus)
        return Q, np.ones(M, dtype=bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        eps = _spec.eps_value(self.eps)
        return _spec.PrivacySpec("bsldp", _matrices.bsldp_matrix(self.blocks, eps), eps, None)


    _closed_form = _family.Family("BlockHR", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: _hr_forms.block_hr_item_nvar(m.eps, p, m.blocks))
