r"""Exact k-subset sampling for subset selection (SS, and uSS through GLUTF): Floyd's algorithm on bitmaps.

A subset-selection report of input ``x`` is ``{x}`` w.p. ``include`` plus a uniform ``(k - include)``-subset of
``[d] \ {x}``. That subset is drawn with Floyd's algorithm over the ``N = d - 1`` labels of the other items
(label ``l`` is item ``l``, except label ``x`` which is item ``d - 1``): step ``i`` draws ``t ~ U[0, j_i]`` with
``j_i = N - kk + i`` and adds ``t``, or ``j_i`` when ``t`` is already in the set. Drawing ``m`` elements this way
gives every ``m``-subset of ``[0, N)`` the same probability (Floyd 1987), and skipping step 0 turns the
``kk``-step run into the ``(kk - 1)``-element one, so one fixed-shape loop serves both cases. For
``k > d / 2`` the complement (``d - k`` items, containing ``x`` iff ``x`` is not reported) is drawn instead.

Uniform integers are exact: Lemire's multiply-shift with rejection (a draw is rejected w.p. below
``m / 2**32``). A user's first rejected draw is replaced by a spare word; the (astronomically rare) rest are
redrawn in a loop, so the values are exactly uniform and independent.

Cost: ``kk + 2`` random words per user (``kk = min(k, d - k)``) and ``kk`` steps on a ``ceil(d / 32)``-word
bitmap per user (one-hot word updates for small ``d``, word gathers/scatters for large ``d``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from uldp_jax.mechanisms.core._uniform import redraw_rejected, uniform_below

# Bitmaps of at most this many 32-bit words use one-hot word updates (no gather/scatter); larger ones gather words.
ONEHOT_MAX_WORDS = 32


def exact_uniforms(key: jax.Array, m: jax.Array, batch: int) -> jax.Array:
    """``uint32[len(m), batch]``: independent exact uniforms on ``[0, m_i)`` (row ``i``), one word each.

    Rejected draws are replaced by a per-column spare word (first rejection of a column) or, failing that,
    redrawn from ``fold_in(key_loop, iteration)`` until accepted.
    """
    k_main, k_spare, k_loop = jax.random.split(key, 3)
    m = jnp.asarray(m, jnp.uint32)[:, None]
    val, ok = uniform_below(jax.random.bits(k_main, (m.shape[0], batch), jnp.uint32), m)
    sval, sok = uniform_below(jax.random.bits(k_spare, (1, batch), jnp.uint32), m)
    use_spare = ~ok & (jnp.sum(~ok, axis=0) == 1) & sok
    val = jnp.where(use_spare, sval, val)
    return redraw_rejected(k_loop, val, ~ok & ~use_spare, m)


def _floyd_onehot(t, xs, inc, d, kk):
    """Floyd on a packed ``uint32[W, B]`` bitmap with one-hot word selects (fused elementwise work)."""
    n_words = (d + 31) // 32
    widx = jnp.arange(n_words, dtype=jnp.int32)[:, None]

    def step(bm, inp):
        i, ti = inp
        ti = jnp.where(ti == xs, d - 1, ti)
        ji = jnp.where(xs == d - 1 - kk + i, d - 1, d - 1 - kk + i)
        word = jnp.sum(jnp.where(widx == (ti >> 5), bm, jnp.uint32(0)), axis=0, dtype=jnp.uint32)
        hit = (word >> (ti & 31).astype(jnp.uint32)) & 1
        v = jnp.where(hit > 0, ji, ti)
        active = (i > 0) | ~inc
        bit = jnp.uint32(1) << (v & 31).astype(jnp.uint32)
        return bm | jnp.where((widx == (v >> 5)) & active, bit, jnp.uint32(0)), None

    bm0 = jnp.zeros((n_words, xs.shape[0]), jnp.uint32)
    bm, _ = jax.lax.scan(step, bm0, (jnp.arange(kk, dtype=jnp.int32), t))
    shifts = jnp.arange(32, dtype=jnp.uint32)[None, :, None]
    return ((bm[:, None, :] >> shifts) & 1).reshape(n_words * 32, -1)[:d].T > 0


def _floyd_gather(t, xs, inc, d, kk):
    """Floyd on a packed ``uint32[W + 1, B]`` bitmap with word gathers/scatters (bit ``d`` absorbs a skipped step)."""
    n_words = d // 32 + 1
    cols = jnp.arange(xs.shape[0])

    def step(bm, inp):
        i, ti = inp
        ti = jnp.where(ti == xs, d - 1, ti)
        ji = jnp.where(xs == d - 1 - kk + i, d - 1, d - 1 - kk + i)
        hit = (bm[ti >> 5, cols] >> (ti & 31).astype(jnp.uint32)) & 1
        v = jnp.where(hit > 0, ji, ti)
        v = jnp.where((i > 0) | ~inc, v, d)
        word = bm[v >> 5, cols] | (jnp.uint32(1) << (v & 31).astype(jnp.uint32))
        return bm.at[v >> 5, cols].set(word, unique_indices=True), None

    bm0 = jnp.zeros((n_words, xs.shape[0]), jnp.uint32)
    bm, _ = jax.lax.scan(step, bm0, (jnp.arange(kk, dtype=jnp.int32), t))
    shifts = jnp.arange(32, dtype=jnp.uint32)[None, :, None]
    return ((bm[:, None, :] >> shifts) & 1).reshape(n_words * 32, -1)[:d].T > 0


def subset_bits(key: jax.Array, xs: jax.Array, include: jax.Array, d: int, k: int) -> jax.Array:
    r"""``bool[B, d]``: ``{x}`` where ``include`` plus a uniform ``(k - include)``-subset of ``[d] \ {x}``.

    Args:
      key: PRNG key (the only randomness).
      xs: ``int32[B]`` inputs.
      include: ``bool[B]`` whether each report contains its own item.
      d: domain size (static).
      k: subset size (static, ``1 <= k <= d - 1``).
    """
    flip = 2 * k > d
    kk = d - k if flip else k
    inc = include ^ flip
    xs = xs.astype(jnp.int32)
    m = d - kk + jnp.arange(kk, dtype=jnp.uint32)  # m_i = j_i + 1
    t = exact_uniforms(key, m, xs.shape[0]).astype(jnp.int32)
    floyd = _floyd_onehot if (d + 31) // 32 <= ONEHOT_MAX_WORDS else _floyd_gather
    bits = floyd(t, xs, inc, d, kk)
    bits = bits | ((jnp.arange(d, dtype=jnp.int32) == xs[:, None]) & inc[:, None])
    return ~bits if flip else bits
