r"""Sylvester-Hadamard helpers: sizes, implicit entries, samplers and the fast Walsh-Hadamard transform.

Convention (0-indexed): :math:`H_K[i, j] = (-1)^{\mathrm{popcount}(i \,\&\, j)}` for :math:`i, j \in [0, K)`,
which is Sylvester's construction :math:`H_{2m} = [[H_m, H_m], [H_m, -H_m]]`. Row 0 is all ones; every other
row has exactly ``K/2`` entries ``+1`` (its "+1 set") and any two distinct non-zero rows share ``K/4`` of them.
The Hadamard-response mechanisms give item ``x`` the row ``x + 1`` (docs/errata.md#004-eq-13-the-hadamard-row: 004 eq 13 read with row ``x + 1``),
so a domain of ``d`` items needs ``K > d``. The ``K x K`` matrix is never built except by ``hadamard_matrix``
(dense reference for tests and exact channels on small domains).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate

# Largest Hadamard size the samplers support (int32 report indices).
MAX_HADAMARD_SIZE = 2**30


def hadamard_size(d: int, name: str = "d") -> int:
    """Smallest power of two strictly larger than ``d`` (``K = 2^ceil(log2(d + 1))``)."""
    d = _validate.check_int(name, d, minimum=1)
    K = 1 << d.bit_length()
    if K > MAX_HADAMARD_SIZE:
        raise ValueError(f"Expected {name}={d} < {MAX_HADAMARD_SIZE} (Hadamard size {K} too large).")
    return K


def parity(v: Any) -> Any:
    """``popcount(v) mod 2`` for non-negative int32 arrays (JAX)."""
    return jax.lax.population_count(jnp.asarray(v, jnp.int32)) & 1


def hadamard_sign(rows: Any, cols: Any) -> Any:
    """``H[rows, cols]`` in ``{+1, -1}`` (int32, JAX), without building ``H``."""
    return 1 - 2 * parity(jnp.bitwise_and(jnp.asarray(rows, jnp.int32), jnp.asarray(cols, jnp.int32)))


def hadamard_matrix(K: int, rows: Any = None) -> np.ndarray:
    """Dense ``H_K`` (or its rows ``rows``) as float64 NumPy; for tests and small exact channels only."""
    K = _validate.check_int("K", K, minimum=1)
    if K & (K - 1):
        raise ValueError(f"Expected K={K} to be a power of two.")
    r = np.arange(K, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    a = r[:, None] & np.arange(K, dtype=np.int64)[None, :]
    par = np.zeros(a.shape, dtype=np.int64)
    while np.any(a):
        par ^= a & 1
        a = a >> 1
    return 1.0 - 2.0 * par


def uniform_index(key: jax.Array, K: Any, shape: tuple[int, ...]) -> jax.Array:
    """int32 uniform on ``[0, K)`` for a power-of-two ``K`` (int or per-user int32 array): low bits of 32 bits."""
    mask = (jnp.asarray(K, jnp.int32) - 1).astype(jnp.uint32)
    return (jax.random.bits(key, shape, dtype=jnp.uint32) & mask).astype(jnp.int32)


def to_sign(y: Any, rows: Any, want_plus: Any) -> jax.Array:
    """Moves uniform indices ``y`` onto the +1 set (``want_plus``) or the -1 set of ``rows`` (rows >= 1).

    If ``y`` has the wrong sign it is XOR-ed with the lowest set bit of the row: that flips
    ``popcount(row & y)`` by one and maps the +1 set bijectively onto the -1 set, so a uniform ``y`` becomes
    uniform on the wanted set.
    """
    rows = jnp.asarray(rows, jnp.int32)
    y = jnp.asarray(y, jnp.int32)
    is_plus = parity(rows & y) == 0
    return jnp.where(is_plus == want_plus, y, y ^ (rows & (-rows))).astype(jnp.int32)


def sample_signed_index(key: jax.Array, rows: Any, K: Any, plus_prob: Any, shape: tuple[int, ...]) -> jax.Array:
    r"""Draws ``y`` in ``[0, K)``: uniform on the +1 set of row ``rows`` w.p. ``plus_prob``, else on its -1 set.

    Args:
      key: PRNG key; consumed.
      rows: int32 rows in ``[1, K)`` (broadcast to ``shape``).
      K: power-of-two Hadamard size (int, or int32 array broadcast to ``shape``).
      plus_prob: probability of the +1 set (broadcast to ``shape``).
      shape: output shape.

    Returns:
      int32 indices in ``[0, K)``.
    """
    k_idx, k_sign = jax.random.split(key)
    y = uniform_index(k_idx, K, shape)
    return to_sign(y, rows, jax.random.uniform(k_sign, shape, dtype=jnp.float32) < plus_prob)


def fwht(x: Any, axis: int = -1) -> jax.Array:
    r"""Fast Walsh-Hadamard transform :math:`x H_K` along ``axis`` (length ``K``, a power of two).

    ``O(K log K)`` per vector in ``log2 K`` butterfly stages; batched over the other axes. Integer inputs stay
    integer (exact while partial sums fit the dtype: for counts, ``|result| <= sum |x|``). ``H`` is symmetric,
    so this is also :math:`H_K x`. Not jitted internally.

    Args:
      x: array whose ``axis`` has a power-of-two length.
      axis: the transformed axis.

    Returns:
      Array of the same shape and dtype.
    """
    x = jnp.asarray(x)
    x = jnp.moveaxis(x, axis, -1)
    K = x.shape[-1]
    if K & (K - 1) or K == 0:
        raise ValueError(f"Expected the transformed axis to have a power-of-two length, got {K}.")
    batch = x.shape[:-1]
    h = 1
    while h < K:
        y = x.reshape(batch + (K // (2 * h), 2, h))
        a, b = y[..., 0, :], y[..., 1, :]
        x = jnp.stack([a + b, a - b], axis=-2).reshape(batch + (K,))
        h *= 2
    return jnp.moveaxis(x, -1, axis)
