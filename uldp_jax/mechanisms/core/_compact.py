r"""Compact bit-vector reports: the positions of a report's ones instead of its ``d`` bits.

Bit-vector mechanisms whose bits are independent given the input, with one rate ``q`` on a set ``S`` of
"other" items (RAPPOR/UE: every item; uRAP: the sensitive items) and the user's own bit drawn apart, can emit
reports as ``CompactBits``: ``ones int[n, W]``, each row the items whose bit is 1, padded with ``d``.

Sampler (``sample_ones``), per user with true item ``x``: the own bit is 1 with its own probability; the other
bits of ``S \ {x}`` (``m`` of them) are iid Bernoulli(q), drawn as a Bernoulli *process*: the gaps between
consecutive ones are iid Geometric(q) (``floor(log U / log(1 - q))``), so the positions are the partial sums
below ``m``. This is exactly the law of the dense sampler: the number of ones is Binomial(m, q) and, given it,
the positions are a uniform subset (without replacement). Cost O(number of ones), never O(d).

Widths: the gaps come in chunks of ``CHUNK``; chunk ``j`` of user ``i`` uses ``fold_in(key_i, j)`` with
``key_i = fold_in(key, i)`` (the own bit ``fold_in(key_i, 2**30)``), so drawing more chunks extends a user's
process without changing its first ones. With concrete inputs the sampler adds chunks until every user's
process has passed ``m``: exact. Traced, the number of chunks is static (``num_chunks``). ``sample_counts``
draws the same process in a ``while_loop`` and keeps only the per-bit sums (and the chunks needed): exact
under tracing, so ``sample_stats`` and simulate's report path agree with ``sample_ones`` value for value.

Dense or compact (``ul.perturb``): a bit-vector mechanism returns ``CompactBits`` when
``d >= COMPACT_MIN_D`` and the expected number of ones is at most ``d / 8`` (``prefers_compact``), else the
dense ``bool[n, d]`` of its ``perturb_batch``. Convert explicitly with ``to_dense`` / ``to_compact``.
Composite mechanisms inherit the form from their bit-vector part: uUE (GLUTF over UE) returns a ``GLUTFReport``
whose base part is ``CompactBits`` (over the ``s`` sensitive bits), a PUM over uRAP ``CompactBits`` over
``Z = X ∪ bots`` (its pre-processors are deterministic).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _report_space

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

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The dense ``bool[n, d]`` reports (``np.asarray(ys)``); without it NumPy would iterate row by row."""
        out = np.asarray(to_dense(self))
        return out if dtype is None else out.astype(dtype)


jax.tree_util.register_pytree_node(CompactBits, lambda c: ((c.ones,), c.d),
                                   lambda d, children: CompactBits(children[0], d))


def index_dtype(d: int) -> Any:
    return jnp.uint16 if d < 65535 else jnp.int32


CHUNK = 128  # gaps per chunk of a user's Bernoulli process (static: shapes never depend on the rates)


def num_chunks_for(m: int, q: float, sds: float = 12.0) -> int:
    """Chunks that cover ``mean + sds * sd + 16`` ones of Binomial(m, q) (at most every position)."""
    mean = m * q
    ones = min(m + 1, math.ceil(mean + sds * math.sqrt(max(mean * (1.0 - q), 0.0)) + 16))
    return max(1, -(-ones // CHUNK))


def _gaps(key, q, size):
    """Geometric(q) gaps on {0, 1, ...} (q in (0, 1]); q == 0 gives gaps past any position."""
    u = jax.random.uniform(key, (size,), jnp.float32, minval=jnp.finfo(jnp.float32).tiny, maxval=1.0)
    lq = jnp.log1p(-jnp.asarray(q, jnp.float32))
    g = jnp.floor(jnp.log(u) / jnp.where(lq < 0, lq, -1.0))
    return jnp.where(lq < 0, jnp.minimum(g, 2.0**24), 2.0**24).astype(jnp.int32)


def _chunk_positions(k_i, j, q, offset):
    """Chunk ``j`` of a user's process: positions ``offset + partial sums`` (then the next offset)."""
    pos = offset + jnp.cumsum(_gaps(jax.random.fold_in(k_i, j), q, CHUNK) + 1) - 1
    return pos, pos[-1] + 1


def _user_setup(key, i, x, own_prob, rank, s):
    k_i = jax.random.fold_in(key, i)
    own = jax.random.uniform(jax.random.fold_in(k_i, 2**30), (), jnp.float32) < own_prob[x]
    r = rank[x]  # rank of x in S, or s when x is not in S
    return k_i, own, r, s - (r < s)


def _sample_block(key, ids, xs, items_s, rank, own_prob, q, num_chunks, d):
    """``(ones int32[b, num_chunks * CHUNK + 1], done bool[b])`` for users ``ids`` with items ``xs``."""
    s = items_s.shape[0]

    def one(i, x):
        k_i, own, r, m = _user_setup(key, i, x, own_prob, rank, s)
        parts, offset = [], jnp.int32(0)
        for j in range(num_chunks):
            pos, offset = _chunk_positions(k_i, j, q, offset)
            parts.append(pos)
        pos = jnp.concatenate(parts)
        inside = pos < m
        other = jnp.where(inside, items_s[jnp.minimum(pos + (pos >= r), s - 1)], d)
        count = jnp.sum(inside)  # the ones of S come first, in order; the own bit goes right after them
        col = jnp.arange(other.shape[0] + 1)
        row = jnp.where(col == count, jnp.where(own, x, d), jnp.concatenate([other, jnp.full((1,), d, other.dtype)]))
        return row, offset > m

    return jax.vmap(one)(ids, xs)


def sample_counts(key, xs, items_s, own_prob, q, d, weights=None):
    """``(int32[d] per-bit sums, int32[] most chunks a user needed)`` of the reports ``sample_ones`` draws (same
    key, same law, same values), without their positions: a ``while_loop`` over chunks (traceable, exact)."""
    items_np = np.asarray(items_s, np.int64)
    s = items_np.shape[0]
    rank = jnp.asarray(_ranks(items_np, d))
    items = jnp.asarray(items_np, jnp.int32)
    xs = jnp.asarray(xs, jnp.int32)
    n = xs.shape[0]
    w = jnp.ones(n, bool) if weights is None else weights.astype(bool)
    k_i, own, r, m = jax.vmap(lambda i, x: _user_setup(key, i, x, own_prob, rank, s))(
        jnp.arange(n, dtype=jnp.int32), xs)
    counts = jnp.zeros(d + 1, jnp.int32).at[jnp.where(own & w, xs, d)].add(1)

    def cond(c):
        return jnp.any(c[1] <= m)

    def body(c):
        j, offset, counts = c
        pos, new_off = jax.vmap(lambda k, o: _chunk_positions(k, j, q, o))(k_i, offset)
        live = (offset <= m)[:, None] & (pos < m[:, None]) & w[:, None]
        item = items[jnp.minimum(pos + (pos >= r[:, None]), s - 1)]
        counts = counts.at[jnp.where(live, item, d)].add(1)
        return j + 1, jnp.where(offset <= m, new_off, offset), counts

    j, _, counts = jax.lax.while_loop(cond, body, (jnp.int32(0), jnp.zeros(n, jnp.int32), counts))
    return counts[:d], j


def _ranks(items_np: np.ndarray, d: int) -> np.ndarray:
    rank = np.full(d, items_np.shape[0], np.int32)
    rank[items_np] = np.arange(items_np.shape[0], dtype=np.int32)
    return rank


def sample_ones(key: jax.Array, xs: jax.Array, items_s: Any, own_prob: jax.Array, q: Any, d: int,
                num_chunks: int | None = None) -> CompactBits:
    """Compact reports of independent bits: own bit w.p. ``own_prob[x]``, bits of ``items_s \\ {x}`` w.p. ``q``.

    Args:
      key: PRNG key (user ``i`` uses ``fold_in(key, i)``).
      xs: ``int32[n]`` true items.
      items_s: the items of ``S`` (concrete, sorted, unique).
      own_prob: ``float[d]``: probability that the own bit is 1, per true item.
      q: the rate of the other bits of ``S``.
      d: number of bits.
      num_chunks: chunks of ``CHUNK`` gaps per user (static). ``None``: with concrete inputs, as many as the
        users need (exact); traced, ``num_chunks_for(s, q)`` (needs a concrete ``q``; truncation probability
        below 1e-30 per user).
    """
    items_np = np.asarray(items_s, np.int64)
    s = items_np.shape[0]
    dtype = index_dtype(d)
    items = jnp.asarray(items_np, jnp.int32)
    rank = jnp.asarray(_ranks(items_np, d))
    xs = jnp.asarray(xs, jnp.int32)
    n = xs.shape[0]
    concrete = _is_concrete((xs, q, own_prob, key))
    if num_chunks is None and not _is_concrete(q):
        raise ValueError("compact().perturb with a traced rate needs a static num_chunks=...")
    guess = num_chunks_for(s, float(np.asarray(q, np.float64))) if num_chunks is None else int(num_chunks)
    if not concrete or num_chunks is not None:
        ones, _ = _sample_block(key, jnp.arange(n, dtype=jnp.int32), xs, items, rank, own_prob, q, guess, d)
        return CompactBits(ones.astype(dtype), d)
    nc0 = num_chunks_for(s, float(np.asarray(q, np.float64)), sds=6.0)
    # One host buffer as wide as the first guess (widened in the rare block that needs more chunks), filled block
    # by block and trimmed to the widest report on its way to the device: the host holds the reports about twice
    # at the peak, never once per block plus a stacked copy.
    out = np.full((n, nc0 * CHUNK + 1), d, np.dtype(dtype))
    width = 1
    for start in range(0, n, USER_BLOCK):
        ids = np.arange(start, min(n, start + USER_BLOCK), dtype=np.int32)
        nc = nc0
        while True:
            ones, done = _sample_jit(key, jnp.asarray(ids), xs[start:start + ids.shape[0]], items, rank, own_prob,
                                     q, nc, d)
            if bool(np.all(np.asarray(done))):
                break
            nc += 1
        ones = np.asarray(ones.astype(dtype))
        w = max(int(np.max(np.sum(ones < d, axis=1), initial=0)), 1)  # padding is at the end of every row
        if w > out.shape[1]:
            out = np.concatenate([out, np.full((n, w - out.shape[1]), d, out.dtype)], axis=1)
        out[start:start + ids.shape[0], :w] = ones[:, :w]
        width = max(width, w)
    return CompactBits(jax.device_put(out[:, :width]), d)


_sample_jit = jax.jit(_sample_block, static_argnums=(7, 8))


def _is_concrete(x: Any) -> bool:
    return all(not isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(x))


def _check_dense(ys: Any, ndims: tuple[int, ...] = (2,)) -> jax.Array:
    """Dense bit reports: a ``bool[n, d]`` array (or integer 0/1 entries), else ``TypeError``/``ValueError``."""
    if isinstance(ys, (str, bytes)) or not hasattr(ys, "shape") and not isinstance(ys, (list, tuple)):
        raise TypeError(f"Expected ys to be dense bool[n, d] reports or ul.CompactBits, got {type(ys).__name__}.")
    arr = jnp.asarray(ys)
    if arr.ndim not in ndims:
        raise ValueError(f"Expected ys to be dense bool[n, d] reports (2-D) or ul.CompactBits, got shape "
                         f"{tuple(arr.shape)}.")
    if arr.dtype != jnp.bool_:
        if not jnp.issubdtype(arr.dtype, jnp.integer):
            raise TypeError(f"Expected ys to hold bits (bool or 0/1 integers), got dtype {arr.dtype}.")
        if not isinstance(arr, jax.core.Tracer) and bool(jnp.any((arr != 0) & (arr != 1))):
            raise ValueError("Expected ys to hold bits (bool or 0/1 integers), got other values.")
    return arr


def to_dense(ys: Any, d: int | None = None) -> jax.Array:
    """``bool[n, d]`` dense reports from ``CompactBits`` (dense reports are checked and returned as they are)."""
    if not isinstance(ys, CompactBits):
        return _check_dense(ys, (1, 2))  # one report or a batch
    n = ys.ones.shape[0]
    out = jnp.zeros((n, ys.d + 1), bool)
    out = out.at[jnp.arange(n)[:, None], ys.ones.astype(jnp.int32)].set(True)
    return out[:, : ys.d]


def to_compact(ys: Any, width: int | None = None) -> CompactBits:
    """``CompactBits`` from dense ``bool[n, d]`` reports (concrete: width = most ones in a report)."""
    if isinstance(ys, CompactBits):
        return ys
    ys = _check_dense(ys)
    d = ys.shape[-1]
    if width is not None and (isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1):
        raise ValueError(f"Expected width={width!r} to be a positive int (or None: the most ones in a report).")
    if width is None:
        width = max(int(jnp.max(jnp.sum(ys, axis=1), initial=0)), 1)
    ones = jax.vmap(lambda row: jnp.nonzero(row, size=width, fill_value=d)[0])(ys)
    return CompactBits(ones.astype(index_dtype(d)), d)


AGG_ENTRIES = 2**20  # entries of ``ones`` per step of ``aggregate`` (bounds its temporaries to a few MiB)


def aggregate(ys: CompactBits, weights: jax.Array | None = None) -> jax.Array:
    """``int32[d]`` per-bit sums of compact reports (``weights``: 0/1 per user).

    A loop over row chunks of about ``AGG_ENTRIES`` entries: no ``n x W`` temporary (at 001 Fig 7's setting a
    one-shot scatter held ~1.7 GB of int32 copies). The last chunk is shifted back to end at row ``n`` and its
    rows already counted are masked, so nothing is padded or copied; integer sums, so the result is exact.
    """
    n, width = ys.ones.shape
    rows = max(1, min(n, AGG_ENTRIES // max(width, 1)))
    steps = -(-n // rows)

    def body(i, acc):
        start = jnp.minimum(i * rows, n - rows)
        idx = jax.lax.dynamic_slice_in_dim(ys.ones, start, rows, 0).astype(jnp.int32)
        w = (start + jnp.arange(rows) >= i * rows).astype(jnp.int32)  # rows of an earlier chunk count 0
        if weights is not None:
            w = w * jax.lax.dynamic_slice_in_dim(jnp.asarray(weights), start, rows, 0).astype(jnp.int32)
        return acc.at[idx].add(jnp.broadcast_to(w[:, None], idx.shape))

    return jax.lax.fori_loop(0, steps, body, jnp.zeros(ys.d + 1, jnp.int32))[: ys.d]


def check(mech: Any, ys: CompactBits) -> None:
    """Raises unless ``ys`` are compact reports of ``mech`` (shape, dtype; range when concrete)."""
    if ys.d != _report_space.num_stats(mech):
        raise ValueError(f"Expected compact reports of {_report_space.num_stats(mech)} bits for {type(mech).__name__}, "
                         f"got d={ys.d}.")
    o = ys.ones
    if not hasattr(o, "dtype") or jnp.dtype(o.dtype).kind not in "iu" or o.ndim != 2 or o.shape[0] < 1:
        raise TypeError(f"Expected ys.ones to be an integer [n, W] array (n >= 1), got "
                        f"{getattr(o, 'dtype', type(o))}{list(jnp.shape(o))}.")
    if _is_concrete(o) and o.size:  # NumPy reductions: no kernel compiled per report count (a CPU view, no copy)
        a = np.asarray(o)
        if int(a.min()) < 0 or int(a.max()) > ys.d:
            raise ValueError(f"Expected ys.ones entries in [0, {ys.d}] ({ys.d} = padding).")


def prefers_compact(d: int, expected_ones: float) -> bool:
    """The size rule of ``ul.perturb``: compact from ``COMPACT_MIN_D`` bits on when at most 1/8 of them are 1."""
    return d >= COMPACT_MIN_D and expected_ones <= d / 8
