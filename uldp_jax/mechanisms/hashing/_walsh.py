r"""The Sylvester-Hadamard pieces HCMS needs: signs, a uniform coefficient and the fast Walsh-Hadamard transform.

:math:`H_m[l, a] = (-1)^{\mathrm{popcount}(l \,\&\, a)}` (scipy's ``hadamard``, as pure-LDP uses). The same
convention as ``mechanisms/hadamard/_hadamard.py``, which families may not import privately (tests/test_layering.py);
the hadamard package does not export these helpers yet, so HCMS keeps this short copy.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def minus(l: Any, a: Any) -> jax.Array:
    """``bool``: :math:`H[l, a] = -1` (int32 arrays, JAX)."""
    return (jax.lax.population_count(jnp.bitwise_and(jnp.asarray(l, jnp.int32), jnp.asarray(a, jnp.int32))) & 1) == 1


def signs(m: int, cells: np.ndarray) -> np.ndarray:
    """float64 ``[m, *cells.shape]``: :math:`H[l, c]` for every coefficient ``l`` (NumPy, small exact channels)."""
    a = np.arange(m, dtype=np.int64).reshape((m,) + (1,) * np.ndim(cells)) & np.asarray(cells, np.int64)
    par = np.zeros(a.shape, np.int64)
    while np.any(a):
        par ^= a & 1
        a = a >> 1
    return 1.0 - 2.0 * par


def uniform_coefficient(key: jax.Array, m: int, shape: tuple[int, ...]) -> jax.Array:
    """int32 uniform on ``[0, m)``, ``m`` a power of two (the low bits of 32 random bits)."""
    return (jax.random.bits(key, shape, dtype=jnp.uint32) & jnp.uint32(m - 1)).astype(jnp.int32)


def fwht(x: Any) -> jax.Array:
    """:math:`x H_m` along the last axis (length a power of two), ``log2 m`` butterfly stages; integers stay exact."""
    x = jnp.asarray(x)
    m, batch = x.shape[-1], x.shape[:-1]
    h = 1
    while h < m:
        y = x.reshape(batch + (m // (2 * h), 2, h))
        x = jnp.stack([y[..., 0, :] + y[..., 1, :], y[..., 0, :] - y[..., 1, :]], axis=-2).reshape(batch + (m,))
        h *= 2
    return x
