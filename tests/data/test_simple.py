"""``uldp_jax/data/_simple.py``: the small synthetic distributions (geometric, Zipf) and index blocks, with the grid
blocks of ``_grid`` and the bad arguments they refuse."""

import numpy as np
import pytest

from uldp_jax import data


def test_distributions_and_blocks():
    assert data.geometric(1000, 0.01).p[0] > data.geometric(1000, 0.01).p[-1]
    assert np.isclose(data.zipf(1000, 1.0).p[0] / data.zipf(1000, 1.0).p[1], 2.0)
    np.testing.assert_array_equal(np.bincount(data.index_blocks(1000, 10)), [100] * 10)
    g = data.grid_blocks(125, 350, 5, 7)
    assert g.shape == (43750,) and len(np.unique(g)) == 35
    with pytest.raises(ValueError, match="lam"):
        data.geometric(10, 1.5)
    with pytest.raises(ValueError, match="name"):
        data.get_dataset("mnist")
