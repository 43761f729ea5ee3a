r"""Exact ``Binomial(n, p)`` draws for the count paths: one regime per cell, a fixed number of tries, one fallback.

``jax.random.binomial`` runs an inversion loop and a BTRS loop over *every* cell (each cell then keeps one of the
two), splits a key per iteration and loops until the last cell of the array is done: about 3 us a cell on 2 CPU
cores. Here each cell uses one method, chosen by its own mean ``mu = n min(p, 1 - p)``:

* ``mu < 10``: **inversion**. One uniform ``U``; ``X`` is the smallest ``x`` with ``F(x) >= U``, the pmf by the
  recurrence ``f(x) = f(x - 1) (n - x + 1) / x * q / (1 - q)`` from ``f(0) = (1 - q)^n``. The first
  ``INVERSION_STEPS`` terms are unrolled (no loop); a cell past them continues in the fallback loop.
* ``mu >= 10``: **BTRS** (Hormann 1993, transformed rejection with squeeze; the same formulas as
  ``jax.random.binomial`` and TensorFlow). ``TRIES`` tries are unrolled; a cell rejected by all of them continues
  in the fallback loop.

Both methods are exact algorithms (inversion of the exact CDF; rejection from a hat with the exact acceptance
ratio), so the law is the binomial's up to float64 rounding of the pmf and of the uniforms. Uniforms are 32 random
bits each, ``(b + 0.5) 2^-32`` (no 0 or 1; a resolution of 2.3e-10, finer than the float32 uniforms of the
per-user path). The **fallback** is one ``lax.while_loop`` over the unfinished cells (fresh uniforms from
``fold_in(key, i)`` each iteration); it is exact whatever the number of iterations, and it runs zero iterations
when every cell finished inside the unrolled part.

**How often the fallback iterates** (measured on 10^6 cells, n = 1e9, x64): a BTRS try rejects 25% of cells at
``mu = 10``, 17% at 100, 11-12% from 1e5 up, so 6.4%, 2.9% and 1.3% of the BTRS cells are left after the
``TRIES = 2`` unrolled tries; inversion leaves 1.2e-4 of the cells just below ``mu = 10`` (``P(X >= 24)``) and
fewer below. Each iteration finishes ~85% of what is left, so a call on ``m`` BTRS cells iterates about
``1 + log(0.013 m) / log(8.7)`` times: ~5 at ``m = 10^6``, and for SS's windows (~100 cells a draw, once per
scan step) once or twice on most steps. On a GPU each iteration is a loop-condition round trip; more unrolled
tries trade that for work on every cell (each try costs as much as the first).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

INVERSION_STEPS = 24  # P(X >= 24 | mu < 10) < 1e-4 (Poisson(10)); the rest continue in the fallback loop
TRIES = 2  # unrolled BTRS tries (acceptance ~0.9 each)
_SMALL_MEAN = 10.0  # BTRS needs n q >= 10 (Hormann 1993)
_STIRLING_TABLE = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)


def _uniforms(key: jax.Array, shape: tuple, dtype) -> jax.Array:
    bits = jax.random.bits(key, shape, jnp.uint32)
    return (bits.astype(dtype) + 0.5) * (2.0**-32)


def _stirling_tail(k: jax.Array) -> jax.Array:
    """``log k! - log(sqrt(2 pi) (k + 1)^(k + 1/2) e^-(k+1))`` (tabled below 10, series above)."""
    kp1sq = (k + 1) * (k + 1)
    out = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    for i, v in enumerate(_STIRLING_TABLE):  # selects, not a gather (cheaper on CPU)
        out = jnp.where(k == i, v, out)
    return out


class _Btrs:
    """BTRS constants of each cell (``n``, ``q <= 1/2``, ``n q >= 10``)."""

    def __init__(self, n, q):
        self.n, self.q = n, q
        sd = jnp.sqrt(n * q * (1 - q))
        self.b = 1.15 + 2.53 * sd
        self.a = -0.0873 + 0.0248 * self.b + 0.01 * q
        self.c = n * q + 0.5
        self.vr = 0.92 - 4.2 / self.b
        self.r = q / (1 - q)
        self.alpha = (2.83 + 5.1 / self.b) * sd
        self.m = jnp.floor((n + 1) * q)
        m, r = self.m, self.r
        self.h = ((m + 0.5) * jnp.log((m + 1) / (r * (n - m + 1))) + _stirling_tail(m) + _stirling_tail(n - m))

    def attempt(self, u, v):
        """One try: ``(k, accepted)``."""
        n, a, b = self.n, self.a, self.b
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + self.c)
        squeeze = (us >= 0.07) & (v <= self.vr)
        inside = (k >= 0) & (k <= n)
        kk = jnp.clip(k, 0.0, n)
        lv = jnp.log(v * self.alpha / (a / (us * us) + b))
        ub = (self.h + (n + 1) * jnp.log((n - self.m + 1) / (n - kk + 1))
              + (kk + 0.5) * jnp.log(self.r * (n - kk + 1) / (kk + 1)) - _stirling_tail(kk) - _stirling_tail(n - kk))
        return kk, squeeze | (inside & (lv <= ub))


def binomial(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """Exact ``Binomial(n, p)`` draws (float ``n`` holding integers, any shape; ``p`` clipped to [0, 1]).

    ``p = 0`` gives 0, ``p = 1`` gives ``n``, ``n = 0`` gives 0. Same dtype as ``n``.
    """
    n = jnp.floor(jnp.maximum(jnp.asarray(n), 0.0))
    dtype = n.dtype
    p = jnp.clip(jnp.asarray(p, dtype), 0.0, 1.0)
    shape = jnp.broadcast_shapes(n.shape, p.shape)
    n, p = jnp.broadcast_to(n, shape), jnp.broadcast_to(p, shape)
    flip = p > 0.5
    q = jnp.where(flip, 1.0 - p, p)
    small = n * q < _SMALL_MEAN
    k_main, k_loop = jax.random.split(key)
    u = _uniforms(k_main, (2 * TRIES,) + shape, dtype)

    # inversion (cells with mu < 10; the others get q = 0, a trivial X = 0)
    qi = jnp.where(small, q, 0.0)
    ratio = qi / (1.0 - qi)
    U = u[0]
    f = jnp.exp(n * jnp.log1p(-qi))
    F = f
    x_inv = jnp.zeros(shape, dtype)
    for j in range(1, INVERSION_STEPS):
        x_inv = x_inv + (U > F)
        f = f * (n - (j - 1)) * (ratio / j)
        F = F + f
    x_inv = jnp.minimum(x_inv + (U > F), n)  # X = #{j < STEPS: F_j < U} when U <= F_(STEPS-1)
    done_inv = (U <= F) | (n < INVERSION_STEPS)

    # BTRS (cells with mu >= 10; the others get harmless parameters)
    bt = _Btrs(jnp.where(small, 1e4, n), jnp.where(small, 0.5, q))
    x_bt = jnp.zeros(shape, dtype)
    done_bt = jnp.zeros(shape, bool)
    for t in range(TRIES):
        k, ok = bt.attempt(u[2 * t], u[2 * t + 1])
        x_bt = jnp.where(done_bt, x_bt, k)
        done_bt = done_bt | ok

    x = jnp.where(small, x_inv, x_bt)
    done = jnp.where(small, done_inv, done_bt)
    x = _finish(k_loop, x, done, (n, q, small, ratio, U, f, F))
    return jnp.where(flip, n - x, x)


def _finish(key, x, done, cells):
    """The fallback loop: the unfinished cells go on one step per iteration (the next inversion term, or a new BTRS
    try; masked, over the whole array: a compacted buffer was faster but doubled the compile time); no iteration
    when every cell is done."""
    n, q, small, ratio, U, f, F = cells
    j0 = jnp.full(x.shape, INVERSION_STEPS, x.dtype)  # next inversion term of an unfinished small cell

    def step(carry):
        i, x, done, f, F, j = carry
        u = _uniforms(jax.random.fold_in(key, i), (2,) + x.shape, x.dtype)
        k, ok = _Btrs(jnp.where(small, 1e4, n), jnp.where(small, 0.5, q)).attempt(u[0], u[1])
        f_next = f * (n - (j - 1)) * (ratio / j)
        F_next = F + f_next
        ok = jnp.where(small, (U <= F_next) | (j >= n), ok)
        live = ~done
        x = jnp.where(live & ok, jnp.where(small, jnp.minimum(j, n), k), x)
        keep = live & small
        return i + 1, x, done | ok, jnp.where(keep, f_next, f), jnp.where(keep, F_next, F), j + keep

    init = (jnp.int32(0), x, done, f, F, j0)
    return jax.lax.while_loop(lambda c: jnp.any(~c[2]), step, init)[1]
