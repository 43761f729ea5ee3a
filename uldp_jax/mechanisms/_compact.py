r"""Compact bit-vector reports: the positions of a report's ones instead of its ``d`` bits.

Bit-vector mechanisms whose bits are independent given the input, with one rate ``q`` on a set ``S`` of
"other" items (RAPPOR/UE: every item; uRAP: the sensitive items) and the user's own bit drawn apart, can emit
reports as ``CompactBits``: ``ones int[n, W]``, each row the items whose bit is 1, padded with ``d``.

Sampler (``sample_ones``), per user with true item ``x``: the own bit is 1 with its own probability; the other
bits of ``S \ {x}`` (``m`` of them) are iid Bernoulli(q), drawn as a Bernoulli *process*: the gaps between
consecutive ones are iid Geometric(q) (``floor(log U / log(1 - q))``), so the positions are the partial sums
below ``m``. This is exactly the law of the dense sampler: the number of ones is Binomial(m, q) and, given it,
the positions are a uniform subset (without replacement). Cost O(number of ones), never O(d).

Widths: the gaps come in chunks of ``C`` (about the mean number of ones plus 6 standard deviations); chunk ``j``
of user ``i`` uses ``fold_in(key_i, j)`` with ``key_i = fold_in(key, i)``, so drawing more chunks extends a
user's process without changing its first ones (the process is memoryless). With concrete inputs the sampler
adds chunks until every user's process has passed ``m``: exact. Under tracing the number of chunks is static
(default 2: the probability that a user needs more is below 1e-30 for every rate).

Dense or compact (``ul.perturb``): a bit-vector mechanism returns ``CompactBits`` when
``d >= COMPACT_MIN_D`` and the expected number of ones is at most ``d / 8`` (``prefers_compact``), else the
dense ``bool[n, d]`` of its ``perturb_batch``. Convert explicitly with ``to_dense`` / ``to_compact``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

COMPACT_MIN_D = 1024  # ul.perturb returns compact reports from this domain size on (and density <= 1/8)
USER_BLOCK = 8192  # users sampled per jitted call with concrete inputs (bounds the temporaries)


@dataclasses.dataclass(frozen=True)
class CompactBits:
    """Bit-vector reports in compact form.

    Attributes:
      ones: ``uint16[n, W]`` (``int32`` when ``d >= 65535``): per report, the items whose bit is 1 (the others
        in increasing order, then the own bit), padded with ``d``.
      d: number of bits (static).
    """

    ones: Any
    d: int

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, d)``: the shape of the dense reports."""
        return (self.ones.shape[0], self.d)

    def __len__(self) -> int:
        return self.ones.shape[0]

    def __getitem__(self, idx: Any) -> CompactBits:
        return CompactBits(self.ones[idx], self.d)


jax.tree_util.register_pytree_node(CompactBits, lambda c: ((c.ones,), c.d),
                                   lambda d, children: CompactBits(children[0], d))


def index_dtype(d: int) -> Any:
    return jnp.uint16 if d < 65535 else jnp.int32


def chunk_size(m: int, q: float) -> int:
    """Gaps per chunk: mean + 6 sd + 16 ones of Binomial(m, q), at most ``m + 1``."""
    mean = m * q
    return int(min(m + 1, math.ceil(mean + 6.0 * math.sqrt(max(mean * (1.0 - q), 0.0)) + 16)))


def _gaps(key, q, size):
    """Geometric(q) gaps on {0, 1, ...} (q in (0, 1]); q == 0 gives gaps past any position."""
    u = jax.random.uniform(key, (size,), jnp.float32, minval=jnp.finfo(jnp.float32).tiny, maxval=1.0)
    lq = jnp.log1p(-jnp.asarray(q, jnp.float32))
    g = jnp.floor(jnp.log(u) / jnp.where(lq < 0, lq, -1.0))
    return jnp.where(lq < 0, jnp.minimum(g, 2.0**30), 2.0**30).astype(jnp.int32)


def _user_positions(key_i, q, m, chunk, num_chunks):
    """Positions (< m; else >= m) of the ones of a Bernoulli(q) process on [0, m), ``num_chunks * chunk`` gaps."""
    gaps = jnp.concatenate([_gaps(jax.random.fold_in(key_i, j), q, chunk) for j in range(num_chunks)])
    pos = jnp.cumsum(gaps + 1) - 1  # P_1 = G_1, P_{k+1} = P_k + 1 + G_{k+1}
    return jnp.minimum(pos, jnp.int32(2**30))


def _sample_block(key, ids, xs, items_s, rank, own_prob, q, chunk, num_chunks, d):
    """``(ones int32[b, 1 + num_chunks * chunk], done bool[b])`` for users ``ids`` with items ``xs``."""
    s = items_s.shape[0]

    def one(i, x):
        k_i = jax.random.fold_in(key, i)
        own = jax.random.uniform(jax.random.fold_in(k_i, 2**30), (), jnp.float32) < own_prob[x]
        r = rank[x]  # rank of x in S, or s when x is not in S
        m = s - (r < s)
        pos = _user_positions(k_i, q, m, chunk, num_chunks)
        idx = pos + (pos >= r)
        inside = pos < m
        other = jnp.where(inside, items_s[jnp.minimum(idx, s - 1)], d)
        count = jnp.sum(inside)  # the ones of S come first, in order; the own bit goes right after them
        col = jnp.arange(other.shape[0] + 1)
        row = jnp.where(col == count, jnp.where(own, x, d), jnp.concatenate([other, jnp.full((1,), d, other.dtype)]))
        return row, pos[-1] >= m

    return jax.vmap(one)(ids, xs)


def sample_ones(key: jax.Array, xs: jax.Array, items_s: Any, own_prob: jax.Array, q: Any, d: int,
                num_chunks: int | None = None) -> CompactBits:
    """Compact reports of independent bits: own bit w.p. ``own_prob[x]``, bits of ``items_s \\ {x}`` w.p. ``q``.

    Args:
      key: PRNG key.
      xs: ``int32[n]`` true items.
      items_s: the items of ``S`` (concrete, sorted, unique).
      own_prob: ``float[d]``: probability that the own bit is 1, per true item.
      q: the rate of the other bits of ``S`` (a leaf; concrete for the chunk size).
      d: number of bits.
      num_chunks: chunks of gaps (static); ``None``: as many as needed when the inputs are concrete, else 2.
    """
    items_np = np.asarray(items_s, np.int64)
    s = items_np.shape[0]
    rank_np = np.full(d, s, np.int32)
    rank_np[items_np] = np.arange(s, dtype=np.int32)
    q_c = float(np.asarray(q, np.float64)) if _is_concrete(q) else 0.5
    chunk = chunk_size(s, q_c)
    dtype = index_dtype(d)
    items = jnp.asarray(items_np, jnp.int32)
    rank = jnp.asarray(rank_np)
    xs = jnp.asarray(xs, jnp.int32)
    n = xs.shape[0]
    concrete = _is_concrete(xs) and _is_concrete(q) and _is_concrete(own_prob) and _is_concrete(key)
    if not concrete or num_chunks is not None:
        nc = 2 if num_chunks is None else int(num_chunks)
        ones, _ = _sample_block(key, jnp.arange(n, dtype=jnp.int32), xs, items, rank, own_prob, q, chunk, nc, d)
        return CompactBits(ones.astype(dtype), d)
    blocks = []
    for start in range(0, n, USER_BLOCK):
        ids = np.arange(start, min(n, start + USER_BLOCK), dtype=np.int32)
        nc = 1
        while True:
            ones, done = _sample_jit(key, jnp.asarray(ids), xs[start:start + ids.shape[0]], items, rank, own_prob,
                                     q, chunk, nc, d)
            if bool(np.all(np.asarray(done))) or nc * chunk > s:
                break
            nc += 1
        ones = np.asarray(ones.astype(dtype))
        width = max(int(np.max(np.sum(ones < d, axis=1), initial=0)), 1)
        blocks.append(ones[:, :width])  # padding is at the end of every row
    width = max(b.shape[1] for b in blocks)
    out = np.full((n, width), d, np.dtype(dtype))
    row = 0
    for b in blocks:
        out[row:row + b.shape[0], : b.shape[1]] = b
        row += b.shape[0]
    return CompactBits(jnp.asarray(out), d)


_sample_jit = jax.jit(_sample_block, static_argnums=(7, 8, 9))


def _is_concrete(x: Any) -> bool:
    return all(not isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(x))


def to_dense(ys: Any, d: int | None = None) -> jax.Array:
    """``bool[n, d]`` dense reports from ``CompactBits`` (dense reports are returned as they are)."""
    if not isinstance(ys, CompactBits):
        return ys
    n = ys.ones.shape[0]
    out = jnp.zeros((n, ys.d + 1), bool)
    out = out.at[jnp.arange(n)[:, None], ys.ones.astype(jnp.int32)].set(True)
    return out[:, : ys.d]


def to_compact(ys: Any, width: int | None = None) -> CompactBits:
    """``CompactBits`` from dense ``bool[n, d]`` reports (concrete: width = most ones in a report)."""
    if isinstance(ys, CompactBits):
        return ys
    ys = jnp.asarray(ys)
    d = ys.shape[-1]
    if width is None:
        width = max(int(jnp.max(jnp.sum(ys, axis=1), initial=0)), 1)
    ones = jax.vmap(lambda row: jnp.nonzero(row, size=width, fill_value=d)[0])(ys)
    return CompactBits(ones.astype(index_dtype(d)), d)


def aggregate(ys: CompactBits, weights: jax.Array | None = None) -> jax.Array:
    """``int32[d]`` per-bit sums of compact reports (``weights``: 0/1 per user)."""
    ones = ys.ones.astype(jnp.int32)
    w = jnp.ones(ones.shape, jnp.int32) if weights is None else jnp.broadcast_to(
        weights.astype(jnp.int32)[:, None], ones.shape)
    return jnp.zeros(ys.d + 1, jnp.int32).at[ones.ravel()].add(w.ravel())[: ys.d]


def check(mech: Any, ys: CompactBits) -> None:
    """Raises unless ``ys`` are compact reports of ``mech`` (shape, dtype; range when concrete)."""
    if ys.d != mech.num_stats:
        raise ValueError(f"Expected compact reports of {mech.num_stats} bits for {type(mech).__name__}, got d={ys.d}.")
    o = ys.ones
    if not hasattr(o, "dtype") or jnp.dtype(o.dtype).kind not in "iu" or o.ndim != 2 or o.shape[0] < 1:
        raise TypeError(f"Expected ys.ones to be an integer [n, W] array (n >= 1), got "
                        f"{getattr(o, 'dtype', type(o))}{list(jnp.shape(o))}.")
    if _is_concrete(o) and o.size:
        a = np.asarray(o)
        if a.min() < 0 or a.max() > ys.d:
            raise ValueError(f"Expected ys.ones entries in [0, {ys.d}] ({ys.d} = padding).")


def prefers_compact(d: int, expected_ones: float) -> bool:
    """The size rule of ``ul.perturb``: compact from ``COMPACT_MIN_D`` bits on when at most 1/8 of them are 1."""
    return d >= COMPACT_MIN_D and expected_ones <= d / 8
