"""``uldp_jax/mechanisms/hashing/_sketch.py``: what CMS and HCMS share: the public hashes are a fixed function of
the seed (eps-free, reproducible), and the samplers and the statistic use that very table."""

import numpy as np
import pytest

import uldp_jax as ul

MECHS = {"CMS": ul.CMS, "HCMS": ul.HCMS}


@pytest.mark.parametrize("name", MECHS)
def test_hashes_are_a_fixed_function_of_the_seed(name):
    m = MECHS[name](50, 1.0, k=4, m=8, seed=7)
    H = m.hashes()
    assert H.shape == (4, 50) and H.dtype == np.int32 and H.min() >= 0 and H.max() < 8
    np.testing.assert_array_equal(H, MECHS[name](50, 2.0, k=4, m=8, seed=7).hashes())  # eps-free, reproducible
    assert not np.array_equal(H, MECHS[name](50, 1.0, k=4, m=8, seed=8).hashes())
    np.testing.assert_array_equal(np.asarray(m._table()), H)  # what the samplers and the statistic use
