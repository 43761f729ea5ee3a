"""``uldp_jax/engine/_layout.py``: the iid model's alias table reproduces p exactly (to the thresholds' 2^-32
rounding), never draws a zero-probability item and never its padding (the sampler's law:
tests/mechanisms/core/test_uniform.py)."""

import numpy as np
import pytest

from uldp_jax.engine import _engine as sim


@pytest.mark.parametrize("d", [2, 3, 4, 10, 625])
def test_alias_table_reproduces_p_exactly(d):
    rng = np.random.default_rng(d)
    p = rng.dirichlet(np.full(d, 0.5))
    p[rng.integers(d)] = 0.0  # a zero-probability item
    p /= p.sum()
    table = sim.alias_table(p)
    size = table[0].shape[0]
    assert size >= d and size & (size - 1) == 0
    probs = sim.alias_probs(table, d)
    np.testing.assert_allclose(probs, p, rtol=0, atol=2.0**-32)  # threshold rounding: 2^-33 / D a column
    zero = np.flatnonzero(p == 0.0)
    assert np.all(np.asarray(table[0])[zero] == 0) and not np.isin(np.asarray(table[1]), zero).any()
    assert np.all(np.asarray(table[0])[d:] == 0) and np.all(np.asarray(table[1]) < d)  # padding never drawn
