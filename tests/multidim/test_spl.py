"""``uldp_jax/multidim/_spl.py``: SPL's joint estimate is exact on the exact channel, and its budget split over the
attributes vmaps through the oracles on an eps grid."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md

from tests.multidim._cases import CASES


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("name", ["spl-grr-34", "spl-oue-232"])
def test_spl_joint_estimate_exact(name):
    m = CASES[name]()
    Q, _ = m.channel_matrix()
    p = np.random.default_rng(5).dirichlet(np.ones(m.d))
    est = ul.mechanisms.core.debias(m, jnp.asarray(1000 * (p @ Q)), 1000)
    np.testing.assert_allclose(np.asarray(est), p, atol=1e-8)


def test_eps_grid_vmaps_through_the_oracles():
    grid = jax.vmap(lambda e: md.spl(ul.GRR, (3, 4), e).oracles[0].eps)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(grid), [0.5, 1.0])
