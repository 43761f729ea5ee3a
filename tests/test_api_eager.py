"""``ul.perturb`` called eagerly runs one compiled program per mechanism class and shape.

The native crash of a pytest-xdist worker in ``test_rr_family.py::test_shapes_dtypes_determinism[URR0]`` (three
full runs out of three, each re-queued by tests/conftest.py): eager ``perturb`` went op by op, and every call
compiled fresh XLA programs for the ops that close over its key or parameters (uRR's Lemire redraw
``while_loop``), about 60 memory mappings per call that were never freed. After about 1000 such calls a process
reached ``vm.max_map_count`` (65530), LLVM's next compile failed ("Cannot allocate memory") and the worker died of
SIGSEGV or SIGABRT inside ``backend_compile_and_load``. Eager calls now go through one jitted ``perturb_batch``
whose parameters are traced leaves; that also makes eager and ``jax.jit(ul.perturb)`` reports identical (Wheel and
uWheel differed by one ulp in 6-8% of reports).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _api

MECHS = {
    "GRR": lambda e: ul.GRR(6, e),
    "URR": lambda e: ul.URR(7, [0, 3, 5], e),
    "OUE": lambda e: ul.OUE(5, e),
    "OLH": lambda e: ul.OLH(6, e),
    "Wheel": lambda e: ul.Wheel(6, e),
    "UWheel": lambda e: ul.UWheel(6, [0, 2], e),
}


@pytest.mark.parametrize("make", MECHS.values(), ids=MECHS.keys())
def test_eager_calls_compile_once_per_class_and_shape(make):
    xs = jnp.arange(20, dtype=jnp.int32) % 5
    ul.perturb(jax.random.key(0), make(1.13), xs)
    before = _api._perturb_batch_jit._cache_size()
    for i, eps in enumerate((1.1, 1.12, 1.15, 1.18)):  # new keys and parameters (OLH's static g stays 4)
        ul.perturb(jax.random.key(i + 1), make(eps), xs)
    assert _api._perturb_batch_jit._cache_size() == before


@pytest.mark.parametrize("make", MECHS.values(), ids=MECHS.keys())
def test_eager_and_jitted_perturb_give_the_same_reports(make):
    key, mech = jax.random.key(7), make(1.0)
    xs = jnp.arange(2000, dtype=jnp.int32) % 5
    eager, jitted = ul.perturb(key, mech, xs), jax.jit(ul.perturb)(key, mech, xs)
    for a, b in zip(jax.tree.leaves(eager), jax.tree.leaves(jitted)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_perturb_inside_a_callers_jit_and_vmap_traces_straight_through():
    grid = jax.vmap(lambda e: ul.URR(7, [1, 2], e))(jnp.array([0.5, 2.0]))
    xs = jnp.arange(50, dtype=jnp.int32) % 7
    ys = jax.jit(jax.vmap(lambda m: ul.perturb(jax.random.key(3), m, xs)))(grid)
    for i, e in enumerate((0.5, 2.0)):
        np.testing.assert_array_equal(ys[i], ul.perturb(jax.random.key(3), ul.URR(7, [1, 2], e), xs))
