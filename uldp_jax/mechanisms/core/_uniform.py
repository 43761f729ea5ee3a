r"""One random word per draw: threshold Bernoullis and exact uniform integers for the per-user samplers.

``jax.random.uniform`` costs a threefry word per float and ``jax.random.randint`` two words per integer (plus a
key split each). The item samplers (GRR, uRR) need one Bernoulli and one uniform integer per user: one word
each instead of three (two ``bits`` calls of ``n`` words each run about twice as fast here as one call of
``2 n`` words, so the callers draw them separately). The threshold is capped at ``2^32 - 256``, so even
``p = 1`` fails w.p. ``2^-24``: use it for events of probability below 1 (GRR/uRR flips, eps > 0).

- ``bernoulli_words(w, p)``: ``w < floor(p 2^32)`` for a uint32 word ``w``; the success probability is ``p``
  rounded down to a multiple of ``2^-32`` (the threshold is computed in the dtype of ``p``: float32 by default,
  so ``p`` carries float32's relative rounding of ``2^-24``, the same as comparing a float32 uniform with ``p``).
- ``uniform_ints(key, m, shape)``: exactly uniform on ``[0, m)`` by Lemire's multiply-shift with rejection (a
  word is rejected w.p. ``(2^32 mod m) / 2^32 < m / 2^32``); rejected entries are redrawn in a loop that runs
  zero times in almost every call.

Why the redraw stays a ``while_loop`` (issue 17, item 5): no procedure that reads a bounded number ``T`` of
uint32 words can be exactly uniform on ``[0, m)`` unless ``m`` is a power of two, because every output then has
a probability that is a multiple of ``2^-32T``, and ``1/m`` is not (its denominator has an odd factor). So a
fixed number of tries needs an unbounded fallback to stay exact. The "uniform other than ``x``" draws already
take one exact draw without a loop of their own (GRR: ``u`` on ``[0, d - 1)``, ``u + (u >= x)``; uRR the same
on its sensitive or non-sensitive range); the one data-dependent loop per call is this Lemire redraw, entered
with probability below ``size * m / 2^32`` (``experiments/benchmarks/hlo_while_count.py`` counts the loops).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

_TOP = 4294967040.0  # the largest float32 below 2**32


def threshold_u32(p: jax.Array) -> jax.Array:
    """uint32 ``floor(p * 2^32)``, clipped to ``[0, 2^32 - 256]`` (``p`` >= 1 - 2^-24 always succeeds bar 2^-24)."""
    p = jnp.asarray(p)
    return jnp.clip(p * 4294967296.0, 0.0, _TOP).astype(jnp.uint32)


def bernoulli_words(words: jax.Array, p: jax.Array) -> jax.Array:
    """``bool``: ``words < floor(p 2^32)``, a Bernoulli(p) draw per uint32 word."""
    return words < threshold_u32(p)


def mulhi(w: jax.Array, m: jax.Array) -> jax.Array:
    """``floor(w * m / 2**32)`` for uint32 ``w`` and ``m`` (16-bit limbs, no 64-bit types needed)."""
    wl, wh = w & 0xFFFF, w >> 16
    ml, mh = m & 0xFFFF, m >> 16
    t = wl * ml
    u = wh * ml + (t >> 16)
    v = wl * mh + (u & 0xFFFF)
    return wh * mh + (u >> 16) + (v >> 16)


def uniform_below(words: jax.Array, m: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Lemire's method: ``(floor(w m / 2**32), accepted)``; accepted values are exactly uniform on ``[0, m)``."""
    m = jnp.asarray(m, jnp.uint32)
    return mulhi(words, m), words * m >= (jnp.uint32(0) - m) % m


def redraw_rejected(key: jax.Array, val: jax.Array, pending: jax.Array, m: jax.Array) -> jax.Array:
    """Replaces the ``pending`` (rejected) entries of a Lemire draw by fresh exact draws from ``fold_in(key, i)``."""
    m = jnp.asarray(m, jnp.uint32)

    def body(carry):
        it, val, pending = carry
        v2, ok2 = uniform_below(jax.random.bits(jax.random.fold_in(key, it), val.shape, jnp.uint32), m)
        return it + 1, jnp.where(pending & ok2, v2, val), pending & ~ok2

    return jax.lax.while_loop(lambda c: jnp.any(c[2]), body, (jnp.int32(0), val, pending))[1]


def uniform_ints(key: jax.Array, m: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """int32 exact uniforms on ``[0, m)`` (``m`` broadcastable to ``shape``, ``1 <= m < 2^31``), one word each."""
    m = jnp.broadcast_to(jnp.asarray(m, jnp.uint32), shape)
    k_main, k_loop = jax.random.split(key)
    val, ok = uniform_below(jax.random.bits(k_main, shape, jnp.uint32), m)
    return redraw_rejected(k_loop, val, ~ok, m).astype(jnp.int32)
