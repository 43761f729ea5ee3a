r"""Sums that float32 does not bias: the gradient passes of per-report EM add up to millions of nearly equal
terms (RAPPOR at large eps: most reports of the top item have the same ``1/D``), and a plain float32 sum of
``m`` equal terms drifts by up to ``m/2`` units in the last place (3e-5 relative at 2e5 reports: more than the
1e-6 certificate of ``_em_newton`` allows).

* ``split(x)``: ``x = hi + lo`` exactly, ``hi`` on the grid :math:`Q = 2^{e - 23}` with :math:`2^e > \sum|x|`:
  every partial sum of ``hi`` values (in any order, scatter-adds and products with 0/1 included) is a multiple
  of ``Q`` below :math:`2^{23} Q`, hence exact; ``|lo| <= Q/2``, so the rounding of the ``lo`` sums is of order
  :math:`2^{-24} \sum |x|` at most.
* ``exact_sum(x)``: ``sum(hi) + sum(lo)``.
* ``two_sum(acc, b)``: Knuth's error-free addition of ``b`` to the pair ``acc = (s, c)`` (the running sum and
  its rounding error), for sums across chunks; ``total(acc) = s + c``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def split(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(hi, lo)`` with ``x = hi + lo`` exactly and sums of ``hi`` exact (module docstring)."""
    _, e = jnp.frexp(jnp.sum(jnp.abs(x)))
    q = jnp.ldexp(jnp.ones((), x.dtype), e - jnp.finfo(x.dtype).nmant)
    hi = jnp.round(x / q) * q
    return hi, x - hi


def exact_sum(x: jax.Array) -> jax.Array:
    """``sum(x)`` without the drift of a float sum of many similar terms (``split``)."""
    hi, lo = split(x)
    return jnp.sum(hi) + jnp.sum(lo)


def two_sum(acc: tuple[jax.Array, jax.Array], b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Adds ``b`` to the compensated pair ``acc = (s, c)``."""
    s0, c = acc
    s = s0 + b
    bp = s - s0
    return s, c + ((s0 - (s - bp)) + (b - bp))


def total(acc: tuple[jax.Array, jax.Array]) -> jax.Array:
    return acc[0] + acc[1]


def zeros(shape, dtype) -> tuple[jax.Array, jax.Array]:
    return jnp.zeros(shape, dtype), jnp.zeros(shape, dtype)
