"""``uldp_jax/theory/_grid.py``: theory on a ``jax.vmap``-built grid of mechanisms gives exactly what a loop over its
points gives (closed forms and exact moments, every library mechanism and a user's, p batched like the grid)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import theory as th

from tests.library_mechanisms import distinct_examples
from tests.outside_mechanisms import Keep


# "Keep" (a user's mechanism) and every library mechanism: one registered example per distinct instance.
FACTORIES = {"Keep": lambda e: Keep(5, e), **distinct_examples()}


def _p(mech):
    return np.full(mech.d, 1.0 / mech.d)


EPS = np.array([0.5, 1.25, 4.0], dtype=np.float32)


def _loop_and_grid(fn, name):
    factory = FACTORIES[name]
    mech = factory(1.0)
    p = np.random.default_rng(0).dirichlet(np.ones(mech.d))
    grid = jax.vmap(factory)(jnp.asarray(EPS))
    loop = np.stack([np.asarray(fn(factory(float(e)), p)) for e in EPS])
    return loop, np.asarray(fn(grid, p))


THEORY = {
    "mse": lambda m, p: th.mse(m, p, 1000),
    "mse-fixed": lambda m, p: th.mse(m, p, 1000, model="fixed"),
    "item_variance": lambda m, p: th.item_variance(m, p, 1000),
    "l1": lambda m, p: th.l1(m, p, 1000),
    "exact_mse": lambda m, p: th.exact_mse(m, p, 1000, affine="mechanism"),
    "exact_item_mse": lambda m, p: th.exact_item_mse(m, p, 1000, affine="mechanism"),
}


@pytest.mark.parametrize("fn", list(THEORY))
@pytest.mark.parametrize("name", list(FACTORIES))
def test_theory_on_a_grid_equals_a_loop(name, fn):
    """Closed forms and exact moments alike (README's KeepRR on an 8-point grid used to give one value)."""
    try:
        loop, grid = _loop_and_grid(THEORY[fn], name)
    except (TypeError, ValueError, NotImplementedError) as err:  # what the loop refuses, the grid must refuse
        with pytest.raises(type(err)):
            factory = FACTORIES[name]
            THEORY[fn](jax.vmap(factory)(jnp.asarray(EPS)), _p(factory(1.0)))
        return
    assert grid.shape == loop.shape
    np.testing.assert_allclose(grid, loop, rtol=1e-6)


def test_readme_keeprr_on_an_eight_point_grid():
    eps = jnp.linspace(0.5, 4, 8)
    grid = jax.vmap(lambda e: Keep(8, e))(eps)
    p = np.full(8, 1 / 8)
    got = np.asarray(th.mse(grid, p, 1000))
    want = np.array([th.mse(Keep(8, float(e)), p, 1000) for e in eps])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got[0] > 10 * got[-1]


def test_theory_with_p_batched_like_the_grid():
    grid = jax.vmap(lambda e: ul.GRR(4, e))(jnp.asarray(EPS))
    ps = np.random.default_rng(1).dirichlet(np.ones(4), size=3)
    got = np.asarray(th.mse(grid, ps, 100))
    want = [float(th.mse(ul.GRR(4, float(e)), p, 100)) for e, p in zip(EPS, ps)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
