"""``uldp_jax/data/_registry.py``: every named dataset's synthetic proxy (``get_dataset``) has the sizes of its paper
and its theta_N, deterministically per seed."""

import numpy as np
import pytest

from uldp_jax import data


@pytest.mark.parametrize("name,d,s", [("foursquare", 625, 15), ("foursquare25", 625, 25), ("census", 400, 76),
                                      ("census9", 12800, 2432), ("census1200", 1200, 424), ("drug", 10, 3),
                                      ("normal", 1000, 230), ("gowalla", 43750, 0)])
def test_proxy_sizes(name, d, s):
    ds = data.get_dataset(name)
    assert ds.d == d and ds.s == s and ds.source == "synthetic"
    assert np.isclose(ds.p.sum(), 1.0) and np.all(ds.p >= 0)


def test_proxy_theta_n_and_determinism():
    assert abs(data.get_dataset("census1200").theta_n - 0.56) < 1e-9
    assert abs(data.get_dataset("foursquare25").theta_n - 0.95) < 1e-9
    assert abs(data.get_dataset("drug").theta_n - 0.783) < 1e-3
    a, b = data.foursquare_proxy(seed=3), data.foursquare_proxy(seed=3)
    np.testing.assert_array_equal(a.p, b.p)
    assert a.sensitive == b.sensitive
    assert data.foursquare_proxy(seed=4).sensitive != a.sensitive
