r"""Sums that float32 does not bias: the gradient passes of per-report EM add up to millions of nearly equal
terms (RAPPOR at large eps: most reports of the top item have the same ``1/D``), and a plain float32 sum of
``m`` equal terms drifts by up to ``m/2`` units in the last place (3e-5 relative at 2e5 reports: more than the
1e-6 certificate of ``_em_newton`` allows).

* ``split(x)``: ``x = hi + mid + lo`` exactly, ``hi`` on the grid :math:`Q = 2^{e - 23}` with :math:`2^e >
  \sum|x|`: every partial sum of ``hi`` values (in any order, scatter-adds and products with 0/1 included) is a
  multiple of ``Q`` below :math:`2^{23} Q`, hence exact; ``mid`` is ``x - hi`` split the same way (``m`` equal
  ``x - hi`` of up to ``Q/2`` each would still drift by up to :math:`m^2 2^{-25} Q`: 3e-6 relative on RAPPOR at
  eps = 10, d = 32); what ``lo`` sums lose is of order :math:`2^{-48} m^2 Q`, negligible.
* ``exact_sum(x)``: the sum of the three parts' sums.
* ``scatter_add(size, idx, x, dtype)`` and ``dot_add(x, bits, dtype)``: a scatter-add and a product with a 0/1
  matrix, one per part.
* ``two_sum(acc, b)``: Knuth's error-free addition of ``b`` to the pair ``acc = (s, c)`` (the running sum and
  its rounding error), for sums across chunks; ``total(acc) = s + c``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

TWO_PARTS_TERMS = 8192


def _split2(x):
    _, e = jnp.frexp(jnp.sum(jnp.abs(x)))
    fi = jnp.finfo(x.dtype)  # a normal grid step (denormals flush to 0 on CPU: x / 0 would be NaN)
    q = jnp.ldexp(jnp.ones((), x.dtype), jnp.maximum(e - fi.nmant, fi.minexp))
    hi = jnp.round(x / q) * q
    return hi, x - hi


def split(x: jax.Array, parts: int = 3) -> tuple[jax.Array, ...]:
    """``(hi, mid, lo)`` with ``x = hi + mid + lo`` exactly and sums of ``hi`` and ``mid`` exact (module
    docstring); ``parts=2``: ``(hi, lo)``, enough where at most ``TWO_PARTS_TERMS`` terms meet in one sum."""
    hi, r = _split2(x)
    return (hi, r) if parts == 2 else (hi, *_split2(r))


def parts_for(terms: int) -> int:
    """How many parts ``split`` needs where at most ``terms`` terms meet in one sum (each part is one more
    scatter-add in the passes: 2 where the drift of the ``lo`` sums, ``<= terms^2 2^-48`` of the total, is below
    float32's resolution)."""
    return 2 if terms <= TWO_PARTS_TERMS else 3


def exact_sum(x: jax.Array) -> jax.Array:
    """``sum(x)`` without the drift of a float sum of many similar terms (``split``)."""
    hi, mid, lo = split(x)
    return jnp.sum(hi) + (jnp.sum(mid) + jnp.sum(lo))


def scatter_add(size: int, idx: jax.Array, x: jax.Array, dtype) -> jax.Array:
    """``zeros(size).at[idx].add(x[:, None])`` (``x`` per row of ``idx``) in ``x``'s dtype without drift:
    one scatter-add per ``split`` part (separate scatters: faster on CPU than one of stacked parts), summed in
    ``dtype``."""
    out = [jnp.zeros(size, x.dtype).at[idx].add(jnp.broadcast_to(part[:, None], idx.shape)).astype(dtype)
           for part in split(x, parts_for(idx.shape[0]))]
    return out[0] + (out[1] + out[2]) if len(out) == 3 else out[0] + out[1]


def dot_add(x: jax.Array, bits: jax.Array, dtype) -> jax.Array:
    """``x @ bits`` for a 0/1 matrix ``bits[m, k]`` (``x``'s dtype) without drift: one product of the stacked
    ``split`` parts (each part's sums are exact in any order, so the product's own order does not matter),
    summed in ``dtype``."""
    out = (jnp.stack(split(x, parts_for(x.shape[0]))) @ bits).astype(dtype)
    return out[0] + (out[1] + out[2]) if out.shape[0] == 3 else out[0] + out[1]


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
