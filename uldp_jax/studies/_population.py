"""001's sampling model: each repetition, ``n`` of a population's ``N`` users report (a uniform subset).

``permute(key, population)`` returns the population in a uniformly random order; its first ``n`` entries are a
uniformly random ``n``-subset drawn without replacement. Exactly uniform: every user gets an iid 64-bit word (two
uint32 draws), the users are sorted by it (one ``lax.sort``, O(N log N)), and when two words tie (probability
about ``N^2 / 2^65``, 1e-9 at N = 2e5) the words are redrawn (``fold_in(key, attempt)``) inside a
``lax.while_loop``. Conditioned on no tie the order of iid words is uniform over all ``N!`` orders by symmetry,
so the rejection leaves no bias. One compiled function per population size: ``n`` is a host-side slice.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _draw(key: jax.Array, attempt: jax.Array, size: int) -> tuple[jax.Array, jax.Array]:
    words = jax.random.bits(jax.random.fold_in(key, attempt), (2, size), jnp.uint32)
    hi, lo, order = jax.lax.sort((words[0], words[1], jnp.arange(size, dtype=jnp.int32)), num_keys=2)
    tie = jnp.any((hi[1:] == hi[:-1]) & (lo[1:] == lo[:-1]))
    return order, tie


@jax.jit
def permute(key: jax.Array, population: jax.Array) -> jax.Array:
    """``int32[N]``: ``population`` in a uniformly random order (exact; see the module docstring).

    Args:
      key: PRNG key; consumed.
      population: ``int32[N]`` the users' items.
    """
    size = population.shape[0]
    order, tie = _draw(key, jnp.int32(0), size)

    def body(state):
        attempt, _, _ = state
        return (attempt + 1, *_draw(key, attempt, size))

    _, order, _ = jax.lax.while_loop(lambda s: s[2], body, (jnp.int32(1), order, tie))
    return population[order]


def subset(key: jax.Array, population: np.ndarray, n: int) -> np.ndarray:
    """``int32[n]``: the items of ``n`` users drawn uniformly without replacement from ``population``."""
    return np.asarray(permute(key, jnp.asarray(population, jnp.int32)))[:n]
