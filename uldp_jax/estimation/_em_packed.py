r"""One EM step on bit-packed bit-vector reports (``PackedReports``): one pass over the report bytes.

The step is that of ``_em_passes`` (:math:`D_i = t(\text{total} - s_i) + s_i`, :math:`b_x = \sum_{i: y_{ix}=1}
1/D_i`). Two ways to read the bytes, chosen by the row width ``B = ceil(s / 8)`` (static):

* wide rows (``B >= sizing().dot_min_bytes``): each chunk's bytes are unpacked to 0/1 once, and both sums are products
  with that ``[chunk, 8 B]`` matrix: :math:`s = Y p` and :math:`b = Y^T f`, the latter drift-free through the
  ``_compensated.split`` parts of :math:`f` (``_compensated.dot_add``). This is faster than the byte tables below at
  wide rows (their scatter-add into byte bins runs one element at a time on CPU; experiments/benchmarks/README.md (k)).
* narrow rows: byte tables. :math:`s_i = \sum_j T_j[y_{ij}]`, with :math:`T_j[v] = \sum_{k: v_k = 1}
  p_{items[8j+k]}` (a ``[B, 256]`` table built from ``p`` by one small product): ``B`` gathers per report instead
  of ``8 B`` multiply-adds; :math:`H_j[v] = \sum_{i: y_{ij} = v} 1/D_i` (a scatter-add of each report's ``1/D_i``
  into its ``B`` bins), then :math:`b_{items[8j+k]} = \sum_{v: v_k=1} H_j[v]` (one ``[B, 256] x [256, 8]``
  product).

So the E-step is one chunked pass over the reports (a ``lax.scan``; the two sums share each chunk), and the
whole EM loop runs on the device with no host work per iteration. Chunks have a fixed number of bytes
(``sizing().packed_chunk_bytes``), so the order of the float sums, hence the result, does not depend on the device.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing
from uldp_jax.estimation import _compensated, _em_core, _em_newton
from uldp_jax.estimation._em_passes import Pass, _gain_finish, _log, _log_ratio, _result, _terms_of, grad_of
from uldp_jax.estimation._packed import PackedReports, unpack_bytes

_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32)  # [256, 8]: bit k of byte value v


def _table(p_items: jax.Array, num_bytes: int, dt: Any) -> jax.Array:
    """``T[j * 256 + v] = sum of p_items[8 j + k] over the set bits k of v`` (flat ``[B * 256]``)."""
    pp = jnp.zeros(8 * num_bytes, p_items.dtype).at[: p_items.shape[0]].set(p_items).reshape(num_bytes, 8)
    return (pp @ jnp.asarray(_BITS, p_items.dtype).T).reshape(-1).astype(dt)


def _unpack(by: jax.Array, dt: Any) -> jax.Array:
    """``uint8[m, B]`` -> ``dt[m, 8 B]`` of 0/1 (``_packed.unpack_bytes``; bit ``k`` of byte ``j`` in column
    ``8 j + k``)."""
    return unpack_bytes(by, 8 * by.shape[-1]).astype(dt)


def _item_vectors(vs: list, items: jax.Array, num_bytes: int, dt: Any) -> jax.Array:
    """``dt[8 B, len(vs)]``: each vector's values on the product-part items in bit order (zero past them)."""
    cols = jnp.stack([v[items] for v in vs], axis=1).astype(dt)
    return jnp.zeros((8 * num_bytes, len(vs)), dt).at[: items.shape[0]].set(cols)


def _chunks(rep: PackedReports):
    rows, b = rep.bytes.shape
    k = rows // rep.chunk
    return rep.bytes.reshape(k, rep.chunk, b), rep.weight.reshape(k, rep.chunk)


def _flat_index(by: jax.Array) -> jax.Array:
    return by.astype(jnp.int32) + jnp.arange(by.shape[-1], dtype=jnp.int32) * 256


def packed_grad(t: jax.Array, rep: PackedReports, pass_dtype: Any = None, log_t: Any = None,
                products: bool | None = None) -> _em_newton.Grad:
    """The gradient pass on ``PackedReports`` (``_em_newton``: ``g = a + (1 - t) b`` and ``sum w log D``)."""
    return grad_of(t, _log(t, log_t), packed_pass(rep, pass_dtype, products))


def reads_by_products(rep: PackedReports, products: bool | None = None) -> bool:
    """Whether the passes read ``rep``'s bytes by products with the unpacked bits (``products``; ``None``: rows
    of at least ``sizing().dot_min_bytes`` bytes) rather than through byte tables (module docstring)."""
    return rep.bytes.shape[1] >= _sizing.sizing().dot_min_bytes if products is None else bool(products)


def packed_pass(rep: PackedReports, pass_dtype: Any = None, products: bool | None = None) -> Pass:
    """The generic pass (``_em_passes.Pass``) on ``PackedReports``: products with each chunk's unpacked bits for
    wide rows; else byte-table gathers for the row sums of each table, a scatter-add of the per-report terms into
    byte bins, then one ``[B, 256] x [256, 8]`` product (module docstring)."""
    d = rep.inverted.shape[0]
    num_items = rep.items.shape[0]
    nb = rep.bytes.shape[1]
    data = _chunks(rep)

    dot = reads_by_products(rep, products)

    def run(tabs, terms, rows=None, keep_rows=False, cols=None):
        del cols  # every item's sum comes out of the pass
        dtype = tabs[0].dtype
        dt = dtype if pass_dtype is None else jnp.dtype(pass_dtype)
        if dot:
            vecs = _item_vectors(list(tabs), rep.items, nb, dt)
        else:
            tables = [_table(x[rep.items], nb, dt) for x in tabs]
        rws = None if rows is None else rows.reshape(data[1].shape)

        def chunk_pass(carry, a):
            h_acc, a_acc, l_acc = carry
            by, w, r = a
            if dot:
                bits = _unpack(by, dt)
                ss = list((bits @ vecs).astype(dtype).T)
            else:
                idx = _flat_index(by)
                ss = [jnp.sum(tb[idx], axis=1).astype(dtype) for tb in tables]
            f, a_rows, ll = _terms_of(terms, ss, w.astype(dtype), r)
            f = jnp.where(jnp.any(by != 0, axis=1), f, 0.0)  # a row of zero bytes adds to no item
            if dot:
                h = _compensated.dot_add(f.astype(dt), bits, dtype)
            else:
                h = _compensated.scatter_add(nb * 256, idx, f.astype(dt), dtype)
            return (_compensated.two_sum(h_acc, h), _compensated.two_sum(a_acc, _compensated.exact_sum(a_rows)),
                    l_acc + ll), (ss[0] if keep_rows else None)

        init = (_compensated.zeros(nb * (8 if dot else 256), dtype), _compensated.zeros((), dtype),
                jnp.zeros((), dtype))
        (h, a, l_prod), kept = jax.lax.scan(chunk_pass, init, (*data, rws))
        if dot:
            b_items = _compensated.total(h)[:num_items]
        else:
            h = _compensated.total(h).reshape(nb, 256).at[:, 0].set(0.0)  # byte value 0 sets no item
            bits = jnp.asarray(_BITS, dtype)
            hi, mid, lo = _compensated.split(h)
            b_items = (hi @ bits + (mid @ bits + lo @ bits)).reshape(-1)[:num_items]
        return _result(jnp.zeros(d, dtype).at[rep.items].set(b_items), _compensated.total(a), l_prod, kept, keep_rows)

    return run


def packed_update(t: jax.Array, rep: PackedReports, pass_dtype: Any = None, log_t: Any = None) -> _em_core.Update:
    """The EM map on ``PackedReports`` (``pass_dtype`` and ``log_t`` as in ``_em_passes.support_update``)."""
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    return _em_newton.as_update(packed_grad(t, rep, pass_dtype, log_t), rep.inverted, n)


def packed_gain(t: jax.Array, rep: PackedReports, products: bool | None = None) -> _em_core.Gain:
    """The precise log-likelihood change (``_em_core``) on ``PackedReports``: one pass (products with the
    unpacked bits, or table gathers for narrow rows)."""
    nb = rep.bytes.shape[1]
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    data = _chunks(rep)
    dot = reads_by_products(rep, products)

    def gain(p_a, p_b):
        dp = p_b - p_a
        if dot:
            vecs = _item_vectors([p_a, dp], rep.items, nb, p_a.dtype)
        else:
            both = jnp.stack([_table(p_a[rep.items], nb, p_a.dtype), _table(dp[rep.items], nb, p_a.dtype)], axis=1)
        total, d_total = jnp.sum(p_a), jnp.sum(dp)

        def chunk_pass(acc, a):
            by, w = a
            if dot:
                sd = _unpack(by, p_a.dtype) @ vecs
            else:
                sd = jnp.sum(both[_flat_index(by)], axis=1)
            return acc + _log_ratio(t, total, d_total, sd[:, 0], sd[:, 1], w.astype(p_a.dtype)), None

        g, _ = jax.lax.scan(chunk_pass, jnp.zeros((), p_a.dtype), data)
        return _gain_finish(p_a, dp, rep.inverted, n, g)

    return gain
