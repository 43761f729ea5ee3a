r"""The public k-subsets that RWS's seeds name, and rank selection in them.

A seed names a k-subset ``S_seed`` of ``[0, d)`` that the user and the server both regenerate from it:

* ``"hash"`` family: ``S_seed`` is drawn by Floyd's algorithm (``_ksubset``) driven by the hash words
  ``mix32(seed, i)`` (``core._hashing``) instead of PRNG words. Item ``d - 1`` is in the ``kk``-subset
  (``kk = min(k, d - k)``; for ``k > d / 2`` the complement is drawn) when ``mulhi(w_0, d) < kk``; step ``i``'s
  uniform on ``[0, m_i)`` is ``mulhi(w_{i+1}, m_i)`` (multiply-shift without rejection: each value's probability
  is ``1/m_i`` up to ``m_i / 2**32``). So ``S_seed`` is a uniform k-subset up to those terms and the hash's
  departure from a random function: the model of an ideal public hash, like OLH's ``family="hash"``.
* ``"full"`` family: the seed is the rank of ``S_seed`` among ``itertools.combinations(range(d), k)``, so a
  uniform seed is an exactly uniform k-subset (``C(d, k)`` seeds, small domains only).

Everything is a pure function of the seed, so the exact channel of a small hash family (NumPy) and the samplers
(JAX) see bit for bit the same subsets.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _hashing, _uniform
from uldp_jax.mechanisms.subset import _ksubset


def hashed_subsets(seeds: jax.Array, d: int, k: int) -> jax.Array:
    """``bool[B, d]``: the k-subsets named by ``seeds: uint32[B]`` in the ``"hash"`` family."""
    flip = 2 * k > d
    kk = d - k if flip else k
    seeds = jnp.asarray(seeds, jnp.uint32)
    steps = jnp.arange(kk + 1, dtype=jnp.uint32)[:, None]
    words = _hashing.mix32(seeds[None, :], steps)  # [kk + 1, B]: word 0 for item d - 1, then one per step
    inc = _uniform.mulhi(words[0], jnp.uint32(d)) < kk  # item d - 1 is in a uniform kk-subset w.p. kk / d
    m = (d - kk + jnp.arange(kk, dtype=jnp.uint32))[:, None]  # Floyd's ranges over the other d - 1 items
    t = _uniform.mulhi(words[1:], m).astype(jnp.int32)
    last = jnp.full(seeds.shape, d - 1, jnp.int32)  # Floyd over [0, d - 1): the "own item" slot is item d - 1
    floyd = _ksubset._floyd_onehot if (d + 31) // 32 <= _ksubset.ONEHOT_MAX_WORDS else _ksubset._floyd_gather
    bits = floyd(t, last, inc, d, kk)
    bits = bits | ((jnp.arange(d, dtype=jnp.int32) == d - 1)[None, :] & inc[:, None])
    return ~bits if flip else bits


def combination_table(d: int, k: int) -> np.ndarray:
    """``bool[C(d, k), d]``: the ``"full"`` family, row ``seed`` the subset of that rank."""
    combos = np.array(list(itertools.combinations(range(d), k)), dtype=np.int64)
    bits = np.zeros((math.comb(d, k), d), dtype=bool)
    bits[np.arange(combos.shape[0])[:, None], combos] = True
    return bits


def subsets(family: str, seeds: jax.Array, d: int, k: int) -> jax.Array:
    """``bool[..., d]``: the subsets named by ``seeds: uint32[...]``."""
    seeds = jnp.asarray(seeds, jnp.uint32)
    if family == "full":
        return jnp.asarray(combination_table(d, k))[seeds.astype(jnp.int32)]
    flat = hashed_subsets(jnp.reshape(seeds, (-1,)), d, k)
    return flat.reshape(seeds.shape + (d,))


def select(mask: jax.Array, rank: jax.Array) -> jax.Array:
    """``int32[...]``: the position of the ``rank``-th (0-based) set entry of each row of ``mask: bool[..., d]``
    (the number of positions whose prefix count is at most ``rank``); ``rank`` below the row's count."""
    prefix = jnp.cumsum(mask.astype(jnp.int32), axis=-1)
    return jnp.sum(prefix <= rank[..., None], axis=-1, dtype=jnp.int32)
