"""Report-based EM compiles once per mechanism and size bucket: a second call with other data, n (same bucket)
and eps compiles nothing (counted with jax.monitoring's backend-compile events). OLH/ULH's static hash range g
follows eps, so their two eps values share g (a new g is a new static configuration)."""

import jax
import jax.numpy as jnp
import pytest

import uldp_jax as ul
from uldp_jax.estimation import _em

_COMPILES = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, *_, **__: _COMPILES.append(event) if event == "/jax/core/compile/backend_compile_duration" else None)


def _compiles(fn):
    before = len(_COMPILES)
    jax.block_until_ready(fn())
    return len(_COMPILES) - before


@pytest.mark.parametrize("make", [lambda e: ul.OLH(32, e), lambda e: ul.SS(16, e, k=3),
                                  lambda e: ul.ULH(24, list(range(8)), e)], ids=["OLH", "SS", "ULH"])
def test_second_call_same_bucket_compiles_nothing(make):
    xs1 = jnp.arange(3000, dtype=jnp.int32) % 7
    xs2 = jnp.arange(2900, dtype=jnp.int32) % 5  # other data, other n, same bucket
    ys1 = ul.perturb(jax.random.key(0), make(1.0), xs1)
    same = jax.tree_util.tree_structure(make(1.0))
    eps2 = next(e for e in (1.05, 0.97, 1.02, 0.99) if jax.tree_util.tree_structure(make(e)) == same)
    ys2 = ul.perturb(jax.random.key(1), make(eps2), xs2)
    _em.em(make(1.0), ys1)  # warm up
    assert _compiles(lambda: _em.em(make(eps2), ys2)) == 0
