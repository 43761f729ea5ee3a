"""x64-safe samplers: with x64 enabled, the per-user kernels draw only 32-bit random words (issue 17, item 4).

Every ``jax.random`` draw in ``mechanisms/`` names its dtype, so turning ``jax_enable_x64`` on (as a user may do
for float64 estimation) neither doubles the random words a user costs nor changes the reports. Checked on the
jaxpr of the engine's per-user step (``_layout.rep_stats``: alias draws, ``fold_in`` keys and ``sample_stats``;
iid and fixed model) and of the report-level blocks (``_layout.block_reports``) for every library mechanism
family, with x64 turned on globally (``jax.config.update``) as well as through the local context.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.engine import _layout

RANDOM_PRIMS = {"random_bits", "threefry2x32", "rng_bit_generator", "random_wrap", "random_seed"}
S = (0, 1, 2)
MECHS = [ul.GRR(8, 1.0), ul.URR(8, S, 1.0), ul.OUE(8, 1.0), ul.RAPPOR(8, 1.0), ul.URAP(8, S, 1.0), ul.OLH(8, 1.0),
         ul.SS(8, 1.0), ul.USS(8, S, 1.0), ul.UUE(8, S, 1.0), ul.ULH(8, S, 1.0), ul.HR(8, 1.0),
         ul.HighLowHR(8, S, 1.0), ul.Warner(1.0), ul.UWheel(8, S, 1.0)]


def _eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for v in eqn.params.values():
            for j in (v if isinstance(v, (tuple, list)) else (v,)):
                inner = getattr(j, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    yield from _eqns(inner)
                elif hasattr(j, "eqns"):
                    yield from _eqns(j)


def _random_widths(mech, model: str = "iid") -> set:
    d = mech.d
    if model == "iid":
        table = _layout.alias_table(np.full(d, 1.0 / d))
        fn = lambda key: _layout.rep_stats(key, mech, jnp.int32(100), table, True, 64, 2, jnp.arange(2))
    elif model == "fixed":
        xs = jnp.arange(100, dtype=jnp.int32) % d
        fn = lambda key: _layout.rep_stats(key, mech, jnp.int32(100), xs, False, 64, 2, jnp.arange(2))
    else:  # the report-level path (per-report estimators): the same blocks, reports kept
        xs = jnp.arange(100, dtype=jnp.int32) % d
        fn = lambda key: _layout.block_reports(key, jnp.int32(1), mech, jnp.int32(100), xs, False, 64)
    jaxpr = jax.make_jaxpr(fn)(jax.random.key(0)).jaxpr
    widths = set()
    for eqn in _eqns(jaxpr):
        if eqn.primitive.name in RANDOM_PRIMS or "random" in eqn.primitive.name:
            for v in eqn.outvars:
                dt = getattr(v.aval, "dtype", None)
                if dt is not None and not jax.dtypes.issubdtype(dt, jax.dtypes.prng_key):
                    widths.add(np.dtype(dt).itemsize * 8)
    return widths


@pytest.mark.parametrize("model", ["iid", "fixed", "reports"])
@pytest.mark.parametrize("mech", MECHS, ids=lambda m: type(m).__name__)
def test_per_user_kernel_draws_32_bit_words_under_x64(mech, model):
    """Under a global x64 flag (``jax_enable_x64``), every random primitive of the per-user kernels (iid model with
    its alias draws, fixed model, and the report-level blocks) still outputs 32-bit words."""
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        widths = _random_widths(mech, model)
    finally:
        jax.config.update("jax_enable_x64", prev)
    assert widths and max(widths) <= 32, (type(mech).__name__, model, widths)


@pytest.mark.slow
def test_reports_do_not_change_with_x64():
    for mech in (ul.OUE(6, 1.0), ul.OLH(6, 1.0), ul.HR(6, 1.0), ul.URAP(6, S, 1.0)):
        xs = jnp.arange(50, dtype=jnp.int32) % 6
        plain = np.asarray(ul.mechanisms.core.sample_stats(mech, jax.random.key(3), xs))
        with jax.enable_x64(True):
            wide = np.asarray(ul.mechanisms.core.sample_stats(mech, jax.random.key(3), xs))
        np.testing.assert_array_equal(plain, wide, err_msg=type(mech).__name__)
