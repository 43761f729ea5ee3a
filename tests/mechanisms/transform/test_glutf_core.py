"""``uldp_jax/mechanisms/transform/_glutf_core.py``: GLUTF samplers against exact channels (chi-square), pytree
behaviour, and bad input (uUE's compact form: tests/mechanisms/unary/test_uue.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

SAMPLED = [
    ul.USS(7, [0, 2, 3, 5], 1.0, k=2),
    ul.UUE(6, [1, 4], 2.0),
    ul.UUE(4, [3], 0.5, p=0.7),
    ul.ULH(6, [0, 1, 5], 1.0, g=3, family="full"),
    ul.ULH(6, [0, 1, 5], 2.0, g=2, num_hashes=8),
    ul.UWheel(5, [1, 2], 1.0, l=0.4, num_hashes=6),
    ul.glutf(ul.GRR(3, 1.0), 6, [0, 2, 4]),
]


@pytest.mark.parametrize("mech", SAMPLED, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("batched", [True, False])
def test_sampler_matches_channel(mech, batched):
    """Threshold: p-value > 1e-3 for a sensitive and a non-sensitive input (20k draws batched, 8k per-user)."""
    nonsens = next(x for x in range(mech.d) if x not in mech.sensitive)
    for x in (mech.sensitive[0], nonsens):
        n = 20_000 if batched else 8_000  # per-user keys are costly; 8k draws still resolve these channels
        res = testing.sampler_vs_channel(jax.random.key(x), mech, x, n, batched=batched)
        assert testing.fits(res), (mech, x, res)


def test_wrong_channels_rejected():
    """Threshold: p-value < 1e-6 (40k draws of a non-sensitive input, where f and z act)."""
    key = jax.random.key(5)
    cases = [
        (ul.USS(7, [0, 2, 3, 5], 1.0, k=2), ul.USS(7, [0, 2, 3, 5], 1.5, k=2)),
        (ul.UUE(6, [1, 4], 2.0, p=0.5), ul.UUE(6, [1, 4], 2.0, p=0.6)),
        # the corrected uLH sampler is not the published one: z differs on non-sensitive inputs
        (ul.ULH(6, [0, 1, 5], 2.0, g=3, family="full"),
         ul.ULH(6, [0, 1, 5], 2.0, g=3, family="full", z_rule="published_unsafe")),
    ]
    for mech, wrong in cases:
        res = testing.sampler_vs_channel(key, mech, 2, 40_000, Q=ul.channel(wrong).Q)
        assert res.pvalue < 1e-6, (mech, res)


@pytest.mark.slow
def test_reports_pytree_jit_and_grid():
    mech = ul.ULH(8, [0, 3, 4], 1.0, g=3)
    xs = jnp.arange(8, dtype=jnp.int32)
    ys = ul.perturb(jax.random.key(0), mech, xs)
    assert isinstance(ys, ul.mechanisms.GLUTFReport)
    assert ys.has_base.dtype == jnp.bool_ and ys.item.dtype == jnp.int32 and ys.item.shape == (8,)
    sens = np.isin(np.arange(8), mech.sensitive)
    assert np.all(np.asarray(ys.has_base)[sens]) and np.all(np.asarray(ys.item)[sens] == -1)
    item = np.asarray(ys.item)[~sens]
    assert np.all((item == -1) | (item == np.arange(8)[~sens]))
    jitted = jax.jit(lambda m, k, x: m.perturb_batch(k, x))(mech, jax.random.key(0), xs)
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(jitted), jax.tree.leaves(ys)))
    stats = ul.aggregate(mech, ys)
    assert stats.dtype == jnp.int32 and stats.shape == (8,)
    # a vmapped grid of uUE mechanisms (eps and p are leaves) runs as one simulation
    grid = jax.vmap(lambda e: ul.UUE(8, [0, 1, 2], e, p=0.5))(jnp.array([0.5, 2.0]))
    res = ul.simulate(jax.random.key(1), grid, xs=np.repeat(np.arange(8), 20).astype(np.int32), reps=2,
                      block_size=64)
    assert res.estimates["emp"].shape == (2, 2, 8)
    for i, e in enumerate([0.5, 2.0]):  # each member: its own debiasing of its own stats, by hand (eq 21)
        one = ul.UUE(8, [0, 1, 2], e, p=0.5)
        a, b = (np.asarray(v, np.float64) for v in one.estimator().affine)
        want = (np.asarray(res.stats[i], np.float64) / 160 - b) / a
        np.testing.assert_allclose(np.asarray(res.estimates["emp"][i], np.float64), want, rtol=1e-4, atol=1e-5)
        assert testing.estimate_within_se(one, res.estimates["emp"][i], np.full(8, 1 / 8), 160)
    # gradients flow through p and eps into the closed-form z*
    g = jax.grad(lambda p: ul.UUE(8, [0, 1, 2], 1.0, p=p).z())(0.5)
    assert np.isfinite(g) and g > 0


@pytest.mark.parametrize("bad,match", [
    (lambda: ul.USS(8, [0, 1, 2], 1.0, k=0), "k"),
    (lambda: ul.USS(8, [0, 1, 2], 1.0, k=3), "k"),
    (lambda: ul.USS(8, [4], 1.0), "k"),
    (lambda: ul.UUE(8, [0, 1], 1.0, p=0.0), "p"),
    (lambda: ul.UUE(8, [0, 1], 1.0, p=1.0), "p"),
    (lambda: ul.UUE(8, [0, 1], 1.0, p=1.2), "p"),
    (lambda: ul.ULH(8, [0, 1], 1.0, g=1), "g"),
    (lambda: ul.UWheel(8, [0, 1], 1.0, l=0.0), "l"),
    (lambda: ul.UWheel(8, [0, 1], 1.0, l=1.0), "l"),
    (lambda: ul.USS(8, [0, 1, 2], 1.0, theta_n=1.5), "theta_n"),
    (lambda: ul.UUE(8, [0, 1], 1.0, z_rule="big"), "z_rule"),
    (lambda: ul.USS(8, [0, 1, 2], 1.0, z_rule="published_unsafe"), "z_rule"),
    (lambda: ul.glutf(ul.UE(2, 1.0), 8, [0, 1], z_rule="published_unsafe"), "published_unsafe"),
    (lambda: ul.glutf(ul.URR(4, [0, 1], 1.0), 8, [0, 1, 2, 3]), "base"),
    (lambda: ul.glutf(ul.Warner(1.0), 8, [0, 1]), "pure"),
    (lambda: ul.glutf(object(), 8, [0, 1]), "base"),
    (lambda: ul.glutf(ul.SS(4, 1.0), 8, [0, 1, 2]), "base.d"),
    (lambda: ul.glutf(ul.SS(3, 1.0), 8, [0, 1, 2], rule="other"), "rule"),
    (lambda: ul.USS(8, [0, 9], 1.0), "sensitive"),
    (lambda: jax.jit(lambda e: ul.USS(8, [0, 1, 2], e).k)(1.0), "k=None"),
])
def test_bad_input(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad()
