"""``uldp_jax/multidim/_smp.py``: SMP's joint is not identifiable: the estimate is the minimum-norm joint, whose
marginals are exactly unbiased."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def test_smp_joint_is_minimum_norm_with_unbiased_marginals():
    m = md.smp(ul.GRR, (3, 4), 1.0)
    Q, _ = m.channel_matrix()
    assert np.linalg.matrix_rank(Q) == 3 + 4 - 1 < m.d  # the joint is not identifiable
    p = np.random.default_rng(6).dirichlet(np.ones(m.d))
    est = np.asarray(ul.mechanisms.core.debias(m, jnp.asarray(1000 * (p @ Q)), 1000))
    for a, b in zip(md.marginals_of(est, m.domains), md.marginals_of(p, m.domains)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-8)
