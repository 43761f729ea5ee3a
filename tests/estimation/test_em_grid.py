"""EM on a jax.vmap grid of an item mechanism defined outside the package equals a loop over its points."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul


from tests.outside_mechanisms import Keep as KeepRR


@pytest.mark.slow
def test_em_on_a_vmap_grid_equals_a_loop():
    eps = jnp.linspace(0.5, 4.0, 4)
    grid = jax.vmap(lambda e: KeepRR(6, e))(eps)
    xs = jnp.arange(2000, dtype=jnp.int32) % 6
    ys = jnp.stack([ul.perturb(jax.random.key(i), KeepRR(6, float(e)), xs) for i, e in enumerate(eps)])
    batched = jax.vmap(lambda m, y: ul.estimate(m, y, "em"))(grid, ys)
    looped = [np.asarray(ul.estimate(KeepRR(6, float(e)), ys[i], "em")) for i, e in enumerate(eps)]
    np.testing.assert_allclose(np.asarray(batched), np.stack(looped), atol=1e-5)
