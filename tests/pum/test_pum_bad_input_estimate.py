"""ul.estimate on PUM reports is refused with a pointer to pum_estimate."""

import jax
import jax.numpy as jnp
import pytest

import uldp_jax as ul


def test_estimate_on_pum_reports_points_to_pum_estimate():
    mech = ul.PUM(10, [0, 1], 2, 1.0)
    ys = ul.perturb(jax.random.key(0), mech, jnp.arange(10, dtype=jnp.int32), -jnp.ones((10, 2), jnp.int32))
    with pytest.raises(TypeError, match="pum_estimate"):
        ul.estimate(mech, ys)
