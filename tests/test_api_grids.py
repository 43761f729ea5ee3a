"""``ul.perturb`` / ``ul.estimate`` on a ``jax.vmap``-built grid: every point from the same key (common random
numbers, as ``ul.simulate`` draws a grid), each point's estimate equal to ``estimate`` on that point."""

import jax
import numpy as np
import pytest

import uldp_jax as ul

GRIDS = {
    "GRR": lambda: jax.vmap(lambda e: ul.GRR(6, e))(np.array([0.5, 1.0, 4.0])),
    "URAP": lambda: jax.vmap(lambda e: ul.URAP(12, range(4), e))(np.array([1.0, 2.0])),
    "OLH": lambda: jax.vmap(lambda e: ul.OLH(16, e, g=4))(np.array([1.0, 2.0])),
    "USS": lambda: jax.vmap(lambda e: ul.USS(10, range(5), e, k=2))(np.array([1.0, 3.0])),
}


def _point(tree, i):
    return jax.tree_util.tree_map(lambda leaf: leaf[i], tree)


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_grid_reports_are_each_points_reports_with_the_same_key(name):
    grid, key = GRIDS[name](), jax.random.key(7)
    xs = np.arange(300, dtype=np.int32) % 6
    ys = ul.perturb(key, grid, xs)
    for i in range(ul.mechanisms.core.grid_shape(grid)[0]):
        want = _point(grid, i).perturb_batch(key, xs)
        for a, b in zip(jax.tree_util.tree_leaves(_point(ys, i)), jax.tree_util.tree_leaves(want)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("method", ["emp", "emp+thr", "em"])
@pytest.mark.parametrize("name", sorted(GRIDS))
def test_grid_estimates_equal_a_loop_over_points(name, method):
    grid, key = GRIDS[name](), jax.random.key(8)
    ys = ul.perturb(key, grid, np.arange(400) % 6)
    est = ul.estimate(grid, ys, method)
    assert est.shape == (ul.mechanisms.core.grid_shape(grid)[0], grid.d)
    for i in range(ul.mechanisms.core.grid_shape(grid)[0]):
        np.testing.assert_array_equal(np.asarray(est[i]), np.asarray(ul.estimate(_point(grid, i), _point(ys, i),
                                                                                  method)))


def test_grid_estimate_refuses_reports_without_the_grid_axis():
    grid = GRIDS["GRR"]()
    with pytest.raises(ValueError, match=r"grid of shape \(3,\)"):
        ul.estimate(grid, np.zeros(50, np.int32), "emp")


def test_grid_perturb_takes_no_per_user_inputs():
    grid = GRIDS["GRR"]()
    with pytest.raises(TypeError, match="per-user inputs"):
        ul.perturb(jax.random.key(0), grid, np.zeros(5, np.int32), np.zeros((5, 1), np.int32))


def test_grid_perturb_is_sized_before_it_allocates():
    grid = jax.vmap(lambda e: ul.OUE(2**15, e))(np.linspace(1.0, 2.0, 64))
    with pytest.raises(ValueError, match="GiB of reports"):
        ul.perturb(jax.random.key(0), grid, np.zeros(1000, np.int32))
