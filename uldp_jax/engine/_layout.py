"""The engine's randomness layout (key schedule), shared by every simulation path.

Repetition ``r`` uses ``key_r = fold_in(key, r)``; inside it, users are cut into fixed blocks of ``block_size``
users and block ``b`` uses ``fold_in(key_r, b)`` (split into the key of the users' values, iid model, and the key
handed to the mechanism). The per-user path (``rep_stats``), the report-level path (``block_reports``, for
report-based estimators), collaborative sampling and the experiments all draw through these functions, so the
same ``(key, block_size)`` gives the same reports everywhere; the counts path hands ``key_r`` to the mechanism's
count sampler. The sizing policy (chunk, repetition-batch and EM-pass sizes per device) lives in
``uldp_jax._sizing``, below estimation (the EM passes read it). Collaborative sampling and the experiments
import this module through ``uldp_jax.engine``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing
from uldp_jax import _validate
from uldp_jax.mechanisms.core import _reports
from uldp_jax.mechanisms.core import num_stats


def _common_axis(shapes: list[tuple[int, ...]]) -> int | None:
    """The leading size shared by every shape (each at least 1-D), else ``None``."""
    if not shapes or any(len(s) == 0 for s in shapes):
        return None
    sizes = {s[0] for s in shapes}
    return sizes.pop() if len(sizes) == 1 else None


def grid_size(mech: Any) -> int | None:
    """The grid signature: ``g`` when every leaf carries a leading grid axis of size ``g``, else ``None``.

    ``jax.vmap`` over a constructor (or ``tree_map`` with ``broadcast_to``) puts the grid axis on every leaf, so a
    mechanism with a scalar leaf (e.g. ``eps``) is a single mechanism even when other leaves are vectors
    (``ul.PUM(...).user(personal)``, a user's mechanism with a vector field). A single mechanism whose leaves
    are all vectors of one common length would read as a grid: give it a scalar leaf, or make the vector a
    static field.

    Raises:
      ValueError: for a grid of grids (every leaf with two common leading axes).
    """
    shapes = [tuple(np.shape(leaf)) for leaf in jax.tree_util.tree_leaves(mech)]
    g = _common_axis(shapes)
    if g is not None and len(shapes) > 0 and _common_axis([s[1:] for s in shapes]) is not None:
        raise ValueError(f"Expected a single mechanism or a 1-D grid of mechanisms, got leaf shapes {set(shapes)}.")
    return g


def alias_table(p: Any) -> tuple[jax.Array, jax.Array]:
    """Walker/Vose alias table of ``p`` over ``D = 2^ceil(log2 d)`` columns: ``(threshold uint32[D], alias int32[D])``.

    Column ``c`` (uniform, from the top ``log2 D`` bits of a word) yields item ``c`` if a second word is below
    ``threshold[c]``, else ``alias[c]``; built in float64, so every item's probability is ``p`` up to
    ``2^-33 / D`` per column, ``2^-33`` in all (padding columns have threshold 0). ``alias_probs`` recovers the
    implied distribution.
    """
    p = np.asarray(p, np.float64)
    d = p.shape[0]
    size = 1 << max(1, (d - 1).bit_length())
    q = np.zeros(size)
    q[:d] = p / p.sum() * size
    alias = np.arange(size, dtype=np.int64)
    small = [i for i in range(size) if q[i] < 1.0]
    large = [i for i in range(size) if q[i] >= 1.0]
    while small and large:  # Vose: fill each under-full column from an over-full one
        s, g = small.pop(), large.pop()
        alias[s] = g
        q[g] -= 1.0 - q[s]
        (small if q[g] < 1.0 else large).append(g)
    for i in small + large:  # rounding leftovers: full columns
        q[i], alias[i] = 1.0, i
    thr = np.minimum(np.round(q * 2.0**32), 2.0**32 - 1).astype(np.uint32)
    table = (jnp.asarray(thr), jnp.asarray(alias.astype(np.int32)))
    err = np.max(np.abs(alias_probs(table, d) - p / p.sum()))
    if not err <= 1e-9:  # a guard on the float64 construction (never seen: errors are ~1e-12)
        raise ValueError(f"alias_table: the table misses p by {err:.3g} (expected <= 1e-9); p={p!r}.")
    return table


def alias_probs(table: tuple[Any, Any], d: int) -> np.ndarray:
    """float64[d]: the distribution ``sample_alias`` draws from ``table`` (exact, for tests and audits)."""
    thr, alias = (np.asarray(a) for a in table)
    own = thr.astype(np.float64) / 2.0**32 / thr.shape[0]
    probs = np.bincount(np.arange(thr.shape[0]), own, minlength=thr.shape[0])
    probs += np.bincount(alias, 1.0 / thr.shape[0] - own, minlength=thr.shape[0])
    return probs[:d]


def sample_alias(key: jax.Array, table: tuple[jax.Array, jax.Array], shape: tuple[int, ...]) -> jax.Array:
    """int32 draws from an ``alias_table``: two uint32 words each (column, then threshold), no rejection."""
    thr, alias = table
    shift = 32 - (thr.shape[0].bit_length() - 1)
    k_col, k_thr = jax.random.split(key)
    col = (jax.random.bits(k_col, shape, jnp.uint32) >> shift).astype(jnp.int32)
    return jnp.where(jax.random.bits(k_thr, shape, jnp.uint32) < thr[col], col, alias[col])


def block_inputs(key_r: jax.Array, b: jax.Array, n: jax.Array, data: jax.Array, iid: bool, block_size: int):
    """The randomness layout of one block of users: ``(key for the mechanism, xs int32[B], mask bool[B])``.

    Block ``b`` of repetition key ``key_r`` covers users ``[b * B, (b + 1) * B)``; users ``>= n`` are masked.
    In the iid model ``data`` is ``alias_table(p)``; in the fixed model it is the padded ``xs``.
    Report-based estimators regenerate exactly the reports behind ``stats`` with
    ``mech.perturb_batch(*block_inputs(...)[:2])`` (``sample_stats`` uses the same draws as ``perturb_batch``).
    """
    kx, ky = jax.random.split(jax.random.fold_in(key_r, b))
    idx = b * block_size + jnp.arange(block_size)
    w = idx < n
    if iid:
        xs = sample_alias(kx, data, (block_size,))
    else:
        xs = jax.lax.dynamic_slice_in_dim(data, b * block_size, block_size)
    return ky, xs, w


def chunk_stats(key_r, mech, n, data, iid: bool, block_size: int, chunk_blocks: int, c: jax.Array) -> jax.Array:
    """``int32[num_stats]`` of chunk ``c``: blocks ``[c * chunk_blocks, (c + 1) * chunk_blocks)``, vmapped.

    Item reports (``report_kind == "item"``: a histogram) are aggregated by one flat scatter over the chunk's
    reports instead of ``chunk_blocks`` partial histograms (one ``d``-vector per block, large for HR); other kinds sum the
    blocks' ``sample_stats`` (which may skip materialising the reports). Same draws either way
    (``sample_stats`` = ``aggregate(perturb_batch)`` in law and in bits), exact int32 sums.
    """
    bs = c * chunk_blocks + jnp.arange(chunk_blocks)
    if mech.report_kind == "item":
        ys, w = jax.vmap(lambda b: block_reports(key_r, b, mech, n, data, iid, block_size))(bs)
        return jnp.asarray(mech.aggregate(ys.reshape(-1), w.reshape(-1)), jnp.int32)

    def block_stats(b):
        ky, xs, w = block_inputs(key_r, b, n, data, iid, block_size)
        return _reports.sample_stats(mech, ky, xs, w)

    return jnp.sum(jax.vmap(block_stats)(bs), axis=0, dtype=jnp.int32)


def rep_stats(key_r, mech, n, data, iid: bool, block_size: int, chunk_blocks: int, chunk_ids: jax.Array):
    """``int32[num_stats]``: one repetition's aggregate over the user chunks ``chunk_ids`` (blocks vmapped per chunk).

    The int32 sums are exact, so the result does not depend on ``chunk_blocks`` or on how the chunks are split
    across devices.
    """

    def chunk(total, c):
        return total + chunk_stats(key_r, mech, n, data, iid, block_size, chunk_blocks, c), None

    total, _ = jax.lax.scan(chunk, jnp.zeros(num_stats(mech), jnp.int32), chunk_ids)
    return total


def rep_stats_range(key_r, mech, n, data, iid: bool, block_size: int, chunk_blocks: int, first: jax.Array,
                    count: jax.Array) -> jax.Array:
    """``rep_stats`` over chunks ``first .. first + count - 1`` with a traced ``count`` (n is data: no recompile)."""

    def chunk(i, total):
        return total + chunk_stats(key_r, mech, n, data, iid, block_size, chunk_blocks, first + i)

    return jax.lax.fori_loop(0, count, chunk, jnp.zeros(num_stats(mech), jnp.int32))


def block_reports(key_r: jax.Array, b: jax.Array, mech: Any, n: jax.Array, data: jax.Array, iid: bool,
                  block_size: int) -> tuple[Any, jax.Array]:
    """``(reports, mask bool[B])`` of block ``b``: exactly the reports behind ``rep_stats``'s statistics."""
    ky, xs, w = block_inputs(key_r, b, n, data, iid, block_size)
    return mech.perturb_batch(ky, xs), w


def check_inputs(mech: Any, xs: Any, p: Any, n: Any) -> tuple[Any, Any, int, bool]:
    """Checks simulate's data arguments: ``(xs int[n] or None, target float[d], n, iid)``.

    Exactly one of ``xs`` (fixed model: the users' values) and ``p`` with ``n`` (iid model) is given; ``d`` is at
    most ``sizing().vector_bytes / 8`` (refused before anything of size ``d`` is allocated).
    """
    d = mech.d
    if 8 * d > _sizing.sizing().vector_bytes:
        raise ValueError(
            f"simulate of {type(mech).__name__}(d={d}) keeps float64[d] vectors (the target, each repetition's "
            f"estimates): {8 * d / 2**30:.3g} GiB each, more than {_sizing.sizing().vector_bytes / 2**30:.3g} GiB. Simulate the "
            "mechanism at a smaller domain (its error depends on d through the closed forms in ul.theory), or "
            "perturb and aggregate blocks of users yourself with ul.perturb / ul.aggregate.")
    if xs is None and p is None:
        raise ValueError("Got neither xs nor p: pass xs=int[n] (fixed model: these users' values) or p=float[d] "
                         "with n=... (iid model: n users drawn from p).")
    if xs is not None and p is not None:
        raise ValueError("Got both xs and p: pass either xs=... (fixed model) or p=... with n=... (iid model), "
                         "not both.")
    if xs is not None:
        if n is not None:
            raise ValueError("Pass n only with p=... (iid model); with xs=..., n = len(xs).")
        xs = np.asarray(_validate.check_items("xs", xs, d, ndim=1))
        if xs.shape[0] < 1:
            raise ValueError("Expected xs to hold at least one user.")
        counts = np.bincount(xs, minlength=d).astype(np.float64)
        return xs, counts / xs.shape[0], int(xs.shape[0]), False
    target = _validate.check_distribution("p", p, d)
    return None, target, _validate.check_int("n", n, minimum=1), True
