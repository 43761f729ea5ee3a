"""``uldp_jax/mechanisms/core/_binomial.py`` (through ``_counts.binomial``): its edge cases, dtype and keys."""

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _counts


def test_binomial_edges_and_dtype():
    with _counts.x64_context():
        n = jnp.array([0.0, 5.0, 5.0, 3e9, 7.9, 2.0**53])
        p = jnp.array([0.3, 1.0, 0.0, 1.0, 0.5, 1.0])
        out = jax.jit(_counts.binomial)(jax.random.key(0), n, p)
        assert out.dtype == jnp.float64
        out = np.asarray(out)
    np.testing.assert_array_equal(out[[0, 1, 2, 3, 5]], [0.0, 5.0, 0.0, 3e9, 2.0**53])
    assert out[4] in range(8)  # n = 7.9 is floored to 7


def test_binomial_same_key_same_draws():
    with _counts.x64_context():
        n, p = jnp.full((4096,), 99.0), jnp.full((4096,), 0.1)
        a = np.asarray(jax.jit(_counts.binomial)(jax.random.key(1), n, p))
        b = np.asarray(jax.jit(_counts.binomial)(jax.random.key(1), n, p))
        c = np.asarray(jax.jit(_counts.binomial)(jax.random.key(2), n, p))
    np.testing.assert_array_equal(a, b)
    assert np.any(a != c)
