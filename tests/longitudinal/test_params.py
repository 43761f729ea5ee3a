"""``uldp_jax/longitudinal/_params.py``: the protocols' probabilities are derived from concrete numbers, so an eps
grid built with ``jax.vmap`` is refused by name."""

import jax
import jax.numpy as jnp
import pytest

from uldp_jax import longitudinal as lg

from tests.longitudinal._protocols import D


@pytest.mark.parametrize("make", [lambda e: lg.LGRR(D, e, e / 2), lambda e: lg.LOLH(8, e, e / 2),
                                  lambda e: lg.l_oue(D, e, e / 2), lambda e: lg.LURR(D, [0, 1], e, e / 2),
                                  lambda e: lg.LURAP(D, [0, 1], e, e / 2), lambda e: lg.DBitFlipPM(8, e, 4),
                                  lambda e: lg.LGRR(D, 3.0, 1.0).naive(e)])
def test_an_eps_grid_is_refused_by_name(make):
    """The protocols derive their probabilities in float64 Python at construction: a ``jax.vmap``-built grid is
    refused with a TypeError that names the argument and says what to do, never a ConcretizationTypeError."""
    make(1.0)
    with pytest.raises(TypeError, match=r"Expected eps(_perm)? to be a concrete number.*one protocol per point"):
        jax.vmap(make)(jnp.array([1.0, 2.0]))
