r"""Compact bit-vector reports: the positions of a report's ones instead of its ``d`` bits.

Bit-vector mechanisms whose bits are independent given the input, with one rate ``q`` on a set ``S`` of
"other" items (RAPPOR/UE: every item; uRAP: the sensitive items) and the user's own bit drawn apart, can emit
reports as ``CompactBits``: ``ones int[n, W]``, each row the items whose bit is 1, padded with ``d``.

Sampler (``sample_ones``), per user with true item ``x``: the own bit is 1 with its own probability; the other
bits of ``S \ {x}`` (``m`` of them) are iid Bernoulli(q), drawn as a Bernoulli *process*: the gaps between
consecutive ones are iid Geometric(q) (``floor(log U / log(1 - q))``), so the positions are the partial sums
below ``m``. This is exactly the law of the dense sampler: the number of ones is Binomial(m, q) and, given it,
the positions are a uniform subset (without replacement). Cost O(number of ones), never O(d).

Widths: the gaps come in chunks of ``CHUNK``; user ``i``'s uniforms are Threefry-2x32 (``jax.random``'s hash)
keyed by two words drawn from ``key_i = fold_in(key, i)``, at counters ``j * CHUNK + (0 .. CHUNK-1)`` for chunk
``j`` (the own bit ``fold_in(key_i, 2**30)``), so drawing more chunks extends a user's process without changing its
first ones. With concrete inputs the sampler draws chunks for mean + ``FIRST_SDS`` standard deviations, then the
few users whose process has not passed ``m`` again with more: exact. Traced, the number of chunks is static
(``num_chunks``). ``sample_counts`` draws the same process in a ``while_loop`` and keeps only the per-bit sums (and
the chunks needed): exact
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

from uldp_jax.mechanisms.core import _host, _report_space
from uldp_jax.mechanisms.core._threefry import threefry_2x32

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


CHUNK = 32  # gaps per chunk of a user's Bernoulli process (static: shapes never depend on the rates)
FIRST_SDS = 3.0  # ul.perturb's first pass draws the chunks for mean + 3 sd (+ 16) ones; later users alone
LATE_BLOCK = 256  # users per call of the draws past the first pass (one compiled shape)
ALLOC_SDS = 1.0  # ul.perturb's host buffer covers mean + sqrt(2 ln n) + ALLOC_SDS sd ones (the widest of n reports)


def num_chunks_for(m: int, q: float, sds: float = 12.0) -> int:
    """Chunks that cover ``mean + sds * sd + 16`` ones of Binomial(m, q) (at most every position)."""
    mean = m * q
    ones = min(m + 1, math.ceil(mean + sds * math.sqrt(max(mean * (1.0 - q), 0.0)) + 16))
    return max(1, -(-ones // CHUNK))


def _gaps(words, j, q):
    """Chunk ``j`` of a user's Geometric(q) gaps on {0, 1, ...} (q in (0, 1]); q == 0 gives gaps past any position.

    The uniforms are the midpoints of a 2**23 grid, from Threefry-2x32 keyed by the user's ``words`` at counters
    ``j * CHUNK + (0 .. CHUNK-1)``: the same hash ``jax.random`` uses, called once per counter pair (``random.bits``
    on a Threefry key hashes twice as many pairs per word), so chunk ``j`` never depends on how many are drawn.
    """
    count = jnp.asarray(j, jnp.uint32) * jnp.uint32(CHUNK) + jnp.arange(CHUNK, dtype=jnp.uint32)
    bits = threefry_2x32((words[0], words[1]), count)
    u = ((bits >> 9).astype(jnp.float32) + 0.5) * jnp.float32(2.0**-23)
    lq = jnp.log1p(-jnp.asarray(q, jnp.float32))
    g = jnp.floor(jnp.log(u) / jnp.where(lq < 0, lq, -1.0))
    return jnp.where(lq < 0, jnp.minimum(g, 2.0**24), 2.0**24).astype(jnp.int32)


def _partial_sums(steps, cap):
    """``cumsum(min(steps, cap), axis=-1)`` over ``CHUNK`` steps of at least 1; equal to ``cumsum(steps)`` wherever
    that is below ``cap``, and at least ``cap`` elsewhere. With ``CHUNK * cap <= 2**24`` it is a float32 product with
    a triangular 0/1 matrix (every partial sum an integer below ``2**24``, so exact in any summation order, at
    ``HIGHEST`` precision so that no TF32/bf16 pass rounds it): about 3x faster on CPU than XLA's ``cumsum``."""
    if CHUNK * cap > 2**24:
        return jnp.cumsum(steps, axis=-1)
    tri = jnp.triu(jnp.ones((CHUNK, CHUNK), jnp.float32))
    sums = jnp.matmul(jnp.minimum(steps, cap).astype(jnp.float32), tri, precision=jax.lax.Precision.HIGHEST)
    return sums.astype(jnp.int32)


def _chunk_positions(words, j, q, offset, m, cap):
    """Chunk ``j`` of a user's process: positions ``offset + partial sums``, then the next offset, saturated at
    ``m + 1`` (past every bit: the user is done, and no sum of capped gaps overflows int32). ``cap``: a static
    bound ``>= m + 1`` on a step (a longer step ends the user's process either way)."""
    pos = offset + _partial_sums(_gaps(words, j, q) + 1, cap) - 1
    return pos, jnp.minimum(pos[-1] + 1, m + 1)


def _positions(words, q, m, num_chunks, cap):
    """Chunks ``0 .. num_chunks-1`` of a user's process at once: ``(positions int32[num_chunks * CHUNK], done)``,
    equal to chaining ``_chunk_positions`` (offsets are prefix sums of the chunks' spans, each span and sum
    saturated at ``m + 1``; exact while ``num_chunks * (m + 1) < 2**31``, which the caller checks). ``cap``: as
    in ``_chunk_positions``."""
    local = _partial_sums(jax.vmap(lambda j: _gaps(words, j, q))(jnp.arange(num_chunks, dtype=jnp.int32)) + 1, cap)
    span = jnp.minimum(local[:, -1], m + 1)
    off = jnp.minimum(jnp.cumsum(span) - span, m + 1)
    end = jnp.minimum(off[-1] + span[-1], m + 1)
    return (off[:, None] + local - 1).reshape(-1), end > m


def _user_setup(key, i, x, own_prob, rank, s):
    k_i = jax.random.fold_in(key, i)
    own = jax.random.uniform(jax.random.fold_in(k_i, 2**30), (), jnp.float32) < own_prob[x]
    r = rank[x]  # rank of x in S, or s when x is not in S
    return jax.random.bits(k_i, (2,), jnp.uint32), own, r, s - (r < s)


def _sample_block(key, ids, xs, items_s, rank, own_prob, q, num_chunks, d):
    """``(ones[b, num_chunks * CHUNK + 1], done bool[b])`` for users ``ids`` with items ``xs`` (``index_dtype(d)``)."""
    s, dtype = items_s.shape[0], index_dtype(d)

    def one(i, x):
        w_i, own, r, m = _user_setup(key, i, x, own_prob, rank, s)
        if num_chunks * (s + 1) < 2**31:
            pos, done = _positions(w_i, q, m, num_chunks, s + 1)
        else:  # chained chunk by chunk (saturated offsets): a domain too large for the prefix sums in int32
            parts, offset = [], jnp.int32(0)
            for j in range(num_chunks):
                pos, offset = _chunk_positions(w_i, j, q, offset, m, s + 1)
                parts.append(pos)
            pos, done = jnp.concatenate(parts), offset > m
        pos = jnp.pad(pos, (0, 1), constant_values=m)  # one more lane, past every bit (the own bit's slot at worst)
        inside = pos < m  # a prefix: positions increase
        rel = jnp.minimum(pos + (pos >= r), s - 1)  # the pos-th item of S other than x
        count = jnp.sum(inside, dtype=jnp.int32)  # the ones of S come first, in order; the own bit right after
        col = jnp.arange(pos.shape[0], dtype=jnp.int32)
        item = rel if s == d else items_s[rel]  # S is every item: no gather
        row = jnp.where(inside, item, jnp.where((col == count) & own, x, d))
        return row.astype(dtype), done

    return jax.vmap(one)(ids, xs)


def sample_counts(key, xs, items_s, own_prob, q, d, weights=None):
    """``(int32[d] per-bit sums, int32[] most chunks a user needed, int32[] most ones in a weighted report)`` of
    the reports ``sample_ones`` draws (same key, same law, same values), without their positions: a ``while_loop``
    over chunks (traceable, exact)."""
    counts, j, ones, _ = _count_process(key, xs, items_s, own_prob, q, d, weights, True)
    return counts, j, jnp.max(ones, initial=0)


def sample_sizes(key, xs, items_s, own_prob, q, d, weights=None):
    """``(int32[] most chunks a user needed, int32[n] ones of each weighted report, bool[n] own bit set and
    weighted)`` of the reports ``sample_ones`` draws: ``sample_counts`` per report instead of per bit, for callers
    that size buffers."""
    _, j, ones, own = _count_process(key, xs, items_s, own_prob, q, d, weights, False)
    return j, ones, own


def _count_process(key, xs, items_s, own_prob, q, d, weights, with_counts):
    """The Bernoulli process of ``sample_ones`` in a ``while_loop``: ``(counts int32[d] or None, chunks,
    ones per user, own & weight per user)``."""
    items_np = np.asarray(items_s, np.int64)
    s = items_np.shape[0]
    rank = jnp.asarray(_ranks(items_np, d))
    items = jnp.asarray(items_np, jnp.int32)
    xs = jnp.asarray(xs, jnp.int32)
    n = xs.shape[0]
    w = jnp.ones(n, bool) if weights is None else weights.astype(bool)
    w_i, own, r, m = jax.vmap(lambda i, x: _user_setup(key, i, x, own_prob, rank, s))(
        jnp.arange(n, dtype=jnp.int32), xs)
    own_w = own & w
    counts = jnp.zeros(d + 1, jnp.int32).at[jnp.where(own_w, xs, d)].add(1) if with_counts else jnp.zeros(0)

    def cond(c):
        return jnp.any(c[1] <= m)

    def body(c):
        j, offset, counts, ones = c
        pos, new_off = jax.vmap(lambda w, o, mm: _chunk_positions(w, j, q, o, mm, s + 1))(w_i, offset, m)
        live = (offset <= m)[:, None] & (pos < m[:, None]) & w[:, None]
        if with_counts:
            item = items[jnp.minimum(pos + (pos >= r[:, None]), s - 1)]
            counts = counts.at[jnp.where(live, item, d)].add(1)
        return j + 1, jnp.where(offset <= m, new_off, offset), counts, ones + jnp.sum(live, axis=1, dtype=jnp.int32)

    init = (jnp.int32(0), jnp.zeros(n, jnp.int32), counts, own_w.astype(jnp.int32))
    j, _, counts, ones = jax.lax.while_loop(cond, body, init)
    return (counts[:d] if with_counts else None), j, ones, own_w


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
        return CompactBits(ones, d)
    qf = float(np.asarray(q, np.float64))
    nc0 = num_chunks_for(s, qf, sds=FIRST_SDS)
    # One aligned host buffer (device_put takes it without a copy on CPU) as wide as the widest of n reports is
    # likely to be (mean + sqrt(2 ln n) + ``ALLOC_SDS`` sd), filled block by block, narrowed in place to the widest
    # report (``_host.narrow_rows``) and widened (a copy) only if a late user needs more. The users whose process
    # outlasts the first pass's chunks (~1e-3 of them) are drawn again, alone, with more chunks: chunk j of a user
    # never depends on how many are drawn, so this equals drawing every user at the widest width, without drawing
    # the widest width for all.
    sds = max(FIRST_SDS, math.sqrt(2.0 * math.log(max(n, 2))) + ALLOC_SDS)
    out = _host.host_array((n, max(nc0, num_chunks_for(s, qf, sds=sds)) * CHUNK + 1), dtype, d)
    width, late = 1, []
    for start in range(0, n, USER_BLOCK):
        ids = np.arange(start, min(n, start + USER_BLOCK), dtype=np.int32)
        ones, done = _sample_jit(key, jnp.asarray(ids), xs[start:start + ids.shape[0]], items, rank, own_prob, q,
                                 nc0, d)
        ones, done = np.asarray(ones), np.asarray(done)
        width = max(width, _put(out, start, ones, d))
        late.append(ids[~done])
    late = np.concatenate(late)
    nc = max(num_chunks_for(s, qf), nc0 + 1)
    while late.size:
        ids = late[:LATE_BLOCK]
        pad = np.concatenate([ids, np.full(LATE_BLOCK - ids.shape[0], ids[0], np.int32)])
        ones, done = _sample_jit(key, jnp.asarray(pad), xs[jnp.asarray(pad)], items, rank, own_prob, q, nc, d)
        ones, done = np.asarray(ones)[:ids.shape[0]], np.asarray(done)[:ids.shape[0]]
        w = max(int(np.max(np.sum(ones < d, axis=1), initial=0)), 1)
        if w > out.shape[1]:  # (rare: the buffer covers sqrt(2 ln n) + ALLOC_SDS sd)
            wider = _host.host_array((n, w), out.dtype, d)
            wider[:, :out.shape[1]] = out
            out = wider
        out[ids[done]] = d
        out[ids[done], :w] = ones[done, :w]
        width = max(width, w)
        late = np.concatenate([late[LATE_BLOCK:], ids[~done]])
        nc += int(not done.all())  # (never seen: a user past num_chunks_for's 12 standard deviations)
    return CompactBits(jax.device_put(_host.narrow_rows(out, width)), d)  # in place: still aligned, no copy


def _put(out: np.ndarray, start: int, ones: np.ndarray, d: int) -> int:
    """Copies a block's rows into ``out`` from row ``start`` (as wide as its widest report); returns that width."""
    w = min(max(int(np.max(np.sum(ones < d, axis=1), initial=0)), 1), out.shape[1])  # padding ends every row
    out[start:start + ones.shape[0], :w] = ones[:, :w]
    return w


_sample_jit = jax.jit(_sample_block, static_argnums=(7, 8))


def _is_concrete(x: Any) -> bool:
    return all(not isinstance(v, jax.core.Tracer) for v in jax.tree_util.tree_leaves(x))


def _check_dense(ys: Any, ndims: tuple[int, ...] = (2,)) -> jax.Array:
    """Dense bit reports: a ``bool[n, d]`` array (or integer 0/1 entries), else ``TypeError``/``ValueError``."""
    if isinstance(ys, (str, bytes)) or not hasattr(ys, "shape") and not isinstance(ys, (list, tuple)):
        raise TypeError(f"Expected ys to be dense bool[n, d] reports or ul.CompactBits, got {type(ys).__name__}.")
    if not isinstance(ys, jax.core.Tracer):  # check NumPy values before jnp.asarray wraps int64 into int32
        raw = np.asarray(ys)
        if raw.dtype.kind in "iu" and raw.size and bool(np.any((raw != 0) & (raw != 1))):
            raise ValueError("Expected ys to hold bits (bool or 0/1 integers), got other values.")
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
