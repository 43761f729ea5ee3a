r"""EM on support-ratio likelihoods (``SupportRatio``: SS, OLH, Wheel, GRR, UE bases and their GLUTF mechanisms).

With the row factors of ``SupportRatio`` and :math:`r_i = w_i / D_i`, one EM step is

.. math:: p'_x = \frac{p_x}{n}\Big(\sum_i r_i\,low_i + \sum_{i: x \in S_i} r_i (high_i - low_i)\Big) + \frac{N_x}{n}
          \quad (x \in items), \qquad p'_x = \frac{p_x}{n} \sum_i r_i\,other_i + \frac{N_x}{n} \quad \text{(else)},

two chunked mat-vecs with the report bits (``bool[n, s]``, one byte per entry, converted chunk by chunk: the
float temporaries are one chunk). The reports are padded to a bucketed number of chunks (``bucket``: a few
sizes per power of two), so that calls with different ``n`` in one bucket reuse one compiled solver.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _em_core
from uldp_jax.estimation._support import bucket
from uldp_jax.mechanisms.core._likelihood import SupportRatio

CHUNK_ENTRIES = 2**20  # bits per chunk (a 4 MiB float32 temporary)


def chunk_rows(num_items: int) -> int:
    """Rows per chunk: a power of two near ``CHUNK_ENTRIES / num_items`` (fixed per base size: reused shapes)."""
    rows = max(CHUNK_ENTRIES // max(num_items, 1), 8)
    return 1 << (rows.bit_length() - 1)


def _chunks(rep: SupportRatio, chunk: int, dtype: Any):
    k = rep.bits.shape[0] // chunk
    cast = lambda a: a.astype(dtype).reshape(k, chunk)
    return (rep.bits.reshape(k, chunk, -1), cast(rep.low), cast(rep.high), cast(rep.other), cast(rep.weight))


def _masses(p, items):
    sens = jnp.zeros(p.shape[-1], bool).at[items].set(True)
    p_items = p[items]
    total_s = jnp.sum(p_items)
    return sens, p_items, total_s, jnp.sum(p) - total_s


def ratio_update(rep: SupportRatio, chunk: int) -> _em_core.Update:
    """The EM map on ``SupportRatio`` reports (rows a multiple of ``chunk``)."""
    def update(p):
        data = _chunks(rep, chunk, p.dtype)
        inv = rep.inverted.astype(p.dtype)
        n = jnp.sum(rep.weight.astype(p.dtype)) + jnp.sum(inv)
        sens, p_items, total_s, total_n = _masses(p, rep.items)

        def chunk_pass(carry, a):
            a_acc, b_acc, c_acc, l_acc = carry
            bits, low, high, other, w = a
            yf = bits.astype(p.dtype)
            s = yf @ p_items
            den = low * (total_s - s) + high * s + other * total_n
            pos = w > 0
            safe = jnp.where(pos & (den > 0), den, 1.0)
            r = jnp.where(pos, w / safe, 0.0)
            ll = jnp.sum(jnp.where(pos, w * jnp.log(safe), 0.0))
            return (a_acc + jnp.sum(r * low), b_acc + (r * (high - low)) @ yf, c_acc + jnp.sum(r * other),
                    l_acc + ll), None

        zero = jnp.zeros((), p.dtype)
        init = (zero, jnp.zeros(p_items.shape, p.dtype), zero, zero)
        (a, b, c, l_rep), _ = jax.lax.scan(chunk_pass, init, data)
        factor = jnp.where(sens, a, c).at[rep.items].add(b)
        l_inv = jnp.sum(jnp.where(inv > 0, inv * jnp.log(jnp.where(inv > 0, p, 1.0)), 0.0))
        return (p * factor + inv) / n, (l_rep + l_inv) / n

    return update


def ratio_gain(rep: SupportRatio, chunk: int) -> _em_core.Gain:
    """The precise log-likelihood change (``_em_core``) of ``ratio_update``: one chunked mat-vec pass."""
    def gain(p_a, p_b):
        dt = p_a.dtype
        dp = p_b - p_a
        data = _chunks(rep, chunk, dt)
        inv = rep.inverted.astype(dt)
        n = jnp.sum(rep.weight.astype(dt)) + jnp.sum(inv)
        _, pa_items, ts_a, tn_a = _masses(p_a, rep.items)
        _, dp_items, dts, dtn = _masses(dp, rep.items)

        def chunk_pass(acc, a):
            bits, low, high, other, w = a
            yf = bits.astype(dt)
            s, ds = yf @ pa_items, yf @ dp_items
            den = low * (ts_a - s) + high * s + other * tn_a
            dden = low * (dts - ds) + high * ds + other * dtn
            ok = (w > 0) & (den > 0)
            x = jnp.where(ok, dden / jnp.where(ok, den, 1.0), 0.0)
            return acc + jnp.sum(jnp.where(ok, w * jnp.log1p(jnp.maximum(x, -1.0)), 0.0)), None

        g, _ = jax.lax.scan(chunk_pass, jnp.zeros((), dt), data)
        ok = (inv > 0) & (p_a > 0)
        g_inv = jnp.sum(jnp.where(ok, inv * jnp.log1p(dp / jnp.where(ok, p_a, 1.0)), 0.0))
        return (g + g_inv) / n - jnp.log1p(jnp.sum(dp) / jnp.sum(p_a))

    return gain


def _solve_impl(mech, ys, n_valid, p0, tol, chunk, max_iters, accelerate):
    """``ys``: reports padded (with copies of report 0) to a multiple of ``chunk`` rows; ``n_valid`` real ones."""
    rep = mech.report_likelihood(ys)
    rows = rep.bits.shape[0]
    valid = jnp.arange(rows) < n_valid
    first = mech.report_likelihood(jax.tree_util.tree_map(lambda a: a[:1], ys))  # what each padding row added
    inverted = rep.inverted - (rows - n_valid).astype(rep.inverted.dtype) * first.inverted
    rep = SupportRatio(rep.bits, rep.items, rep.low, rep.high, rep.other, jnp.where(valid, rep.weight, 0.0),
                       inverted)
    return _em_core.run(ratio_update(rep, chunk), p0, tol, max_iters, accelerate, ratio_gain(rep, chunk))


# Module level: one compiled solver per (mechanism type and static fields, row bucket, options): different data,
# n (in one bucket), eps or theta reuse it.
_solve = jax.jit(_solve_impl, static_argnums=(5, 6, 7))


def _pad_rows(ys: Any, rows: int) -> Any:
    """Pads every leaf's report axis with copies of report 0 (on the host when concrete: no per-shape kernel)."""
    def pad_leaf(a):
        extra = rows - a.shape[0]
        if not extra:
            return a
        if _validate.is_concrete(a):
            a = np.asarray(a)
            return np.concatenate([a, np.broadcast_to(a[:1], (extra,) + a.shape[1:])])
        return jnp.concatenate([a, jnp.broadcast_to(a[:1], (extra,) + a.shape[1:])])
    return jax.tree_util.tree_map(pad_leaf, ys)


def solve_reports(mech: Any, ys: Any, p0: jax.Array, tol: jax.Array, max_iters: int,
                  accelerate: bool) -> tuple[jax.Array, _em_core.EMInfo]:
    """EM on ``mech.report_likelihood(ys)`` (a ``SupportRatio``), built and solved in one compiled call.

    The reports (any pytree with a leading report axis) are padded to ``chunk * bucket(chunks)`` rows, so a
    second call with the same mechanism type and a report count in the same bucket compiles nothing.
    """
    form = jax.eval_shape(mech.report_likelihood, ys)
    n = form.bits.shape[0]
    chunk = chunk_rows(form.bits.shape[1])
    rows = chunk * bucket(-(-n // chunk))
    return _solve(mech, _pad_rows(ys, rows), jnp.int32(n), p0, tol, chunk, max_iters, accelerate)
