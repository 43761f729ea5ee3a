"""``uldp_jax/mechanisms/hashing/_hcms.py``: Apple's Hadamard count mean sketch aggregates its support counts, and
with one collision-free hash its channel is the one-bit Hadamard mechanism's (CMS and HCMS alike:
tests/mechanisms/hashing/test_cms.py)."""

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul


def test_hcms_aggregate_is_the_support_counts():
    m = ul.HCMS(40, 2.0, k=5, m=16, seed=3)
    ys = ul.perturb(jax.random.key(0), m, jnp.asarray(np.arange(3000) % 40, jnp.int32))
    assert ys.dtype == jnp.int32 and int(ys.max()) < m.num_outputs
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), np.asarray(m.support(ys)).sum(0))


def test_hcms_with_one_injective_hash_is_hm():
    """k = 1 and a collision-free hash: HCMS's channel is the one-bit Hadamard mechanism's, item x as HM's h(x)."""
    seed = next(s for s in range(1000) if len(set(ul.HCMS(4, 1.0, k=1, m=4, seed=s).hashes()[0])) == 4)
    m = ul.HCMS(4, 1.0, k=1, m=4, seed=seed)
    np.testing.assert_allclose(ul.channel(m).Q, ul.channel(ul.HM(4, 1.0)).Q[m.hashes()[0]], rtol=1e-14)
