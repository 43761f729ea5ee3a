"""The unrolled Threefry-2x32 equals JAX's; the compact sampler's partial sums equal ``cumsum`` where they matter."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend.random import threefry_2x32 as jax_threefry_2x32

from uldp_jax.mechanisms.core import _compact, _threefry


@pytest.mark.parametrize("length", [2, 32, 704])
def test_unrolled_threefry_equals_jax(length):
    rng = np.random.default_rng(length)
    keys = jnp.asarray(rng.integers(0, 2**32, (50, 2), dtype=np.uint64).astype(np.uint32))
    count = jnp.asarray(rng.integers(0, 2**32, length, dtype=np.uint64).astype(np.uint32))
    ours = jax.jit(jax.vmap(lambda k: _threefry.threefry_2x32((k[0], k[1]), count)))(keys)
    ref = jax.vmap(lambda k: jax_threefry_2x32((k[0], k[1]), count))(keys)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref))
    # the edge words of the key and counter space
    edge = jnp.asarray([0, 1, 2**31, 2**32 - 1] * (length // 2 or 1), jnp.uint32)[: max(length, 2)]
    for k in [(0, 0), (2**32 - 1, 2**32 - 1), (0x1BD11BDA, 0)]:
        key = (jnp.uint32(k[0]), jnp.uint32(k[1]))
        np.testing.assert_array_equal(np.asarray(_threefry.threefry_2x32(key, edge)),
                                      np.asarray(jax_threefry_2x32(key, edge)))


@pytest.mark.parametrize("bad", [jnp.zeros(3, jnp.uint32), jnp.zeros((2, 2), jnp.uint32), jnp.zeros(4, jnp.int32)])
def test_unrolled_threefry_rejects_other_counters(bad):
    with pytest.raises(ValueError, match="count"):
        _threefry.threefry_2x32((jnp.uint32(0), jnp.uint32(1)), bad)


@pytest.mark.parametrize("cap", [3, 1000, 2**19, 2**19 + 1])
def test_partial_sums_equal_cumsum_below_the_cap(cap):
    """Exact (float32 product) where every sum stays below 2**24; ``cumsum`` past that; at or past ``cap`` from the
    first capped step on (such a step ends a user's process either way)."""
    rng = np.random.default_rng(cap)
    steps = rng.integers(1, 2 * cap + 2, (400, _compact.CHUNK)).astype(np.int32)
    steps[:200] = np.minimum(steps[:200], max(cap // _compact.CHUNK, 1))  # rows that never reach the cap
    steps[0] = 2**24 + 1  # the sampler's largest step (a capped gap + 1)
    ours = np.asarray(jax.jit(_compact._partial_sums, static_argnums=1)(jnp.asarray(steps), cap))
    ref = np.cumsum(steps.astype(np.int64), axis=1)
    below = ref < cap
    np.testing.assert_array_equal(ours[below], ref[below])
    assert np.all(ours[~below] >= cap)
    assert ours.dtype == np.int32
