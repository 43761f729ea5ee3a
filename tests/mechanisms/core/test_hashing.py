"""``uldp_jax/mechanisms/core/_hashing.py``: ``mix32`` and ``unit_interval`` agree on NumPy and JAX; SS k=1 is GRR."""

import jax.numpy as jnp
import numpy as np

import uldp_jax as ul


def test_ss_k1_is_grr_and_hash_numpy_matches_jax():
    np.testing.assert_allclose(ul.channel(ul.SS(5, 0.7, k=1)).Q, ul.channel(ul.GRR(5, 0.7)).Q, rtol=1e-13)
    from uldp_jax.mechanisms.core import _hashing
    seeds = np.arange(50, dtype=np.uint32)[:, None]
    items = np.arange(9)
    h_np = _hashing.mix32(seeds, items)
    h_jax = _hashing.mix32(jnp.asarray(seeds), jnp.asarray(items))
    np.testing.assert_array_equal(h_np, np.asarray(h_jax))
    np.testing.assert_array_equal(_hashing.unit_interval(h_np), np.asarray(_hashing.unit_interval(h_jax)))
