"""Grids are first-class (``uldp_jax/mechanisms/core/_grid_check.py``'s ``validate_grid``): every entry point refuses
a ``jax.vmap``-built grid holding one bad point, naming the argument and the index (theory on a grid:
tests/theory/test_grid.py; the closed forms' bad entries: tests/theory/test_checked.py).

Bad points: negative, 0, below EPS_MIN (1e-9), above EPS_MAX (150), inf and NaN. The grid is built with
``jax.vmap`` (no constructor runs on its points), the bad point at index 2 of 4.
"""

from __future__ import annotations

import functools

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
BAD = {"negative": -1.0, "zero": 0.0, "tiny": 1e-9, "huge": 150.0, "inf": np.inf, "nan": np.nan}


@functools.lru_cache(maxsize=None)
def _grid(name: str, bad: str):
    return jax.vmap(FACTORIES[name])(jnp.array([0.5, 1.0, BAD[bad], 2.0], dtype=jnp.float32))


def _p(mech):
    return np.full(mech.d, 1.0 / mech.d)


ENTRY_POINTS = {
    "perturb": lambda m: ul.perturb(jax.random.key(0), m, np.zeros(3, np.int32)),
    "estimate": lambda m: ul.estimate(m, np.zeros(3, np.int32)),
    "estimate_from_stats": lambda m: ul.estimate_from_stats(m, np.zeros(ul.mechanisms.core.num_stats(m), np.int32), 3),
    "aggregate": lambda m: ul.aggregate(m, np.zeros(3, np.int32)),
    "simulate": lambda m: ul.simulate(jax.random.key(0), m, p=_p(m), n=100, reps=1),
    "channel": ul.channel,
    "audit": ul.audit,
    "check": ul.check,
    "theory.mse": lambda m: th.mse(m, _p(m), 100),
    "theory.item_variance": lambda m: th.item_variance(m, _p(m), 100),
    "theory.l1": lambda m: th.l1(m, _p(m), 100),
    "theory.exact_mse": lambda m: th.exact_mse(m, _p(m), 100),
    "theory.exact_item_mse": lambda m: th.exact_item_mse(m, _p(m), 100),
    "tune": lambda m: ul.tune(m, theta_n=0.5),
}


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("name", list(FACTORIES))
def test_every_entry_point_refuses_a_grid_with_one_bad_point(name, entry, bad):
    grid = _grid(name, bad)
    with pytest.raises(ValueError, match=r"mech at grid point \(2,\) \(eps="):
        ENTRY_POINTS[entry](grid)


@pytest.mark.parametrize("bad", list(BAD))
def test_an_outside_mechanism_outside_the_range_is_refused_alone(bad):
    """A mechanism without constructor checks: the entry points check its eps themselves."""
    mech = Keep(5, BAD[bad])
    for entry in ("perturb", "channel", "audit", "theory.mse", "theory.exact_mse"):
        with pytest.raises(ValueError, match="mech.eps"):
            ENTRY_POINTS[entry](mech)


def test_domains_above_int32_are_refused():
    for make in (lambda d: ul.URR(d, [0], 50.0), lambda d: ul.GRR(d, 1.0), lambda d: ul.RAPPOR(d, 1.0),
                 lambda d: ul.OLH(d, 1.0), lambda d: ul.SS(d, 1.0, k=2), lambda d: ul.UUE(d, [0], 1.0),
                 lambda d: Keep(d, 1.0)):
        with pytest.raises(ValueError, match=r"d=4294967301 .*2147483647|<= 2147483647"):
            ul.perturb(jax.random.key(0), make(2**32 + 5), np.array([0], np.int32))


def test_simulate_on_a_grid_of_pum_users_equals_each_point():
    """A PUM user's estimator reads its channel in NumPy (no vmap over the grid): estimated point by point."""
    eps = jnp.asarray([0.5, 1.0, 2.0])
    grid = jax.vmap(lambda e: ul.PUM(5, (0, 2), 2, e).user(np.array([1, -1])))(eps)
    p = np.full(5, 0.2)
    got = np.asarray(ul.simulate(jax.random.key(0), grid, p=p, n=200, reps=2).estimates["emp"])
    assert got.shape == (3, 2, 5)
    for i, e in enumerate(eps):
        one = ul.simulate(jax.random.key(0), ul.PUM(5, (0, 2), 2, float(e)).user(np.array([1, -1])), p=p, n=200,
                          reps=2)
        np.testing.assert_allclose(got[i], np.asarray(one.estimates["emp"]), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("bad", list(BAD))
def test_pum_entry_points_name_the_bad_grid_point(bad):
    grid = jax.vmap(lambda e: ul.PUM(5, (0,), 2, e))(jnp.array([1.0, 2.0, BAD[bad], 0.5]))
    xs, personal = np.arange(10) % 5, np.where(np.arange(20).reshape(10, 2) % 3 == 0, 1, -1)
    for call in (lambda: ul.audit_pum(grid, personal[:2]), lambda: ul.perturb(jax.random.key(0), grid, xs, personal),
                 lambda: ul.simulate_pum(jax.random.key(0), grid, xs, personal, reps=1)):
        with pytest.raises(ValueError, match=r"grid point \(2,\) \(eps="):
            call()
