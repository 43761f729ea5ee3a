"""Data-dependent loops on the per-user hot path (issue 17, item 5): at most the one exact Lemire redraw per call;
and (issue 26, item 5) counted per compiled count sampler and per-user engine kernel.

Counts ``while`` instructions without an XLA-known trip count in the optimized HLO of ``ul.perturb``
(``experiments/benchmarks/hlo_while_count.py`` prints the same at d = 625). On CPU, threefry's rounds are rolled
loops with a known trip count of 5; those are not counted.
"""

import re

import jax
import jax.numpy as jnp
import pytest

import uldp_jax as ul

SENS = list(range(0, 25, 5))
EXPECTED = {"GRR": 1, "uRR": 1, "OUE": 0, "uRAP": 0, "OLH": 0, "SS": 1}
MECHS = {"GRR": ul.GRR(25, 1.0), "uRR": ul.URR(25, SENS, 1.0), "OUE": ul.OUE(25, 1.0),
         "uRAP": ul.URAP(25, SENS, 1.0), "OLH": ul.OLH(25, 1.0), "SS": ul.SS(25, 1.0)}


@pytest.mark.parametrize("name", list(MECHS))
def test_data_dependent_while_loops_per_call(name):
    mech = MECHS[name]
    fn = jax.jit(lambda k, x: ul.perturb(k, mech, x))
    text = fn.lower(jax.random.key(0), jnp.zeros((512,), jnp.int32)).compile().as_text()
    loops = [ln for ln in text.splitlines() if re.search(r"\swhile\(", ln) and "condition=" in ln]
    assert sum("known_trip_count" not in ln for ln in loops) == EXPECTED[name]


# Counts path (issue 26, item 5): data-dependent loops in the compiled exact count samplers (iid model, x64 as the
# engine runs them). Every binomial call site (``core._binomial``) brings one: its fallback loop, which runs no
# iteration unless a cell needs more than the unrolled inversion terms / BTRS tries (``jax.random.binomial``
# brought two that always iterate). SS: the mixture's site, then inside its ``d``-step item scan the window loop
# with the move and take sites (executed d times a repetition; uSS adds its GLUTF sites). A regression guard: a
# new loop must be a deliberate change of these numbers.
EXPECTED_COUNTS = {"GRR": 1, "OUE": 2, "SS": 4, "uSS": 6}
COUNT_MECHS = {"GRR": ul.GRR(25, 1.0), "OUE": ul.OUE(25, 1.0), "SS": ul.SS(25, 1.0), "uSS": ul.USS(25, SENS, 1.0)}


@pytest.mark.parametrize("name", list(COUNT_MECHS))
def test_counts_sampler_while_loops(name):
    mech = COUNT_MECHS[name]
    with ul.fastpath.x64_context():
        p = jnp.full((mech.d,), 1.0 / mech.d, jnp.float64)
        fn = jax.jit(lambda k, n: ul.fastpath.sample_counts_iid(k, mech, n, p))
        text = fn.lower(jax.random.key(0), jnp.float64(1e6)).compile().as_text()
    loops = [ln for ln in text.splitlines() if re.search(r"\swhile\(", ln) and "condition=" in ln]
    assert sum("known_trip_count" not in ln for ln in loops) == EXPECTED_COUNTS[name]


# The engine's per-user kernel (``simulate._kernels.per_user_kernel``, iid model, one device): three control loops
# with traced trip counts (the repetition batches, the full chunks, the remaining blocks: one iteration per chunk
# or batch, not per user), plus the sampler's own loop in each of the two chunk loops (GRR and SS: the Lemire
# redraw; OUE has none). A regression guard like the two above.
EXPECTED_PER_USER = {"GRR": 5, "OUE": 3, "SS": 5}


@pytest.mark.parametrize("name", list(EXPECTED_PER_USER))
def test_per_user_kernel_while_loops(name):
    import functools

    from uldp_jax.engine import _kernels, _layout

    mech = MECHS[name]
    fn = jax.jit(functools.partial(_kernels.per_user_kernel, axis=None, iid=True, block_size=256, chunk_blocks=4,
                                   rep_batch=2))
    table = _layout.alias_table(jnp.full((mech.d,), 1.0 / mech.d, jnp.float32))
    text = fn.lower(jax.random.key(0), mech, jnp.int32(10000), table, jnp.arange(4, dtype=jnp.int32)).compile()
    loops = [ln for ln in text.as_text().splitlines() if re.search(r"\swhile\(", ln) and "condition=" in ln]
    assert sum("known_trip_count" not in ln for ln in loops) == EXPECTED_PER_USER[name]
