"""method="em" reaches the exact-likelihood EM for every report kind; em-pure refuses what it cannot do."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul


@pytest.mark.parametrize("mech", [ul.USS(8, [0, 3, 6], 1.0), ul.UUE(8, [0, 3, 6], 1.0), ul.SS(6, 1.0, k=2)],
                         ids=lambda m: type(m).__name__)
def test_em_routes_to_exact_em_for_subset_and_glutf_reports(mech):
    xs = jnp.arange(3000, dtype=jnp.int32) % mech.d
    ys = ul.perturb(jax.random.key(0), mech, xs)
    est = np.asarray(ul.estimate(mech, ys, method="em"))
    np.testing.assert_allclose(est, np.asarray(ul.estimate(mech, ys, method="em-pure")), atol=1e-6)
    assert abs(est.sum() - 1) < 1e-4 and est.min() >= 0
    assert ul.testing.estimate_within_se(mech, est, np.full(mech.d, 1 / mech.d), 3000)


def test_em_pure_refuses_unsupported_mechanisms():
    mech = ul.HR(6, 1.0)
    ys = ul.perturb(jax.random.key(0), mech, jnp.arange(100, dtype=jnp.int32) % 6)
    with pytest.raises(ValueError, match="em-pure"):
        ul.estimate(mech, ys, method="em-pure")
