"""simulate: determinism, chunking invariance, batched grids, fixed and iid models."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul


def test_same_key_same_result_and_chunking_invariance():
    mech = ul.URAP(30, [0, 5, 9], 1.0)
    p = np.random.default_rng(0).dirichlet(np.ones(30))
    key = jax.random.key(0)
    runs = [ul.simulate(key, mech, p=p, n=10_000, reps=3, chunk_blocks=c, path="per_user").stats for c in (1, 3)]
    for r in runs[1:]:
        np.testing.assert_array_equal(runs[0], r)
    other = ul.simulate(jax.random.key(1), mech, p=p, n=10_000, reps=3, path="per_user").stats
    assert not np.array_equal(runs[0], other)
    # Repetitions are independent draws.
    assert not np.array_equal(runs[0][0], runs[0][1])


def test_fixed_model_counts_users_exactly():
    xs = np.repeat(np.arange(8, dtype=np.int32), [100, 0, 50, 3, 7, 0, 40, 800])
    mech = ul.URR(8, [0, 3], 2.0)
    res = ul.simulate(jax.random.key(2), mech, xs=xs, reps=4, path="per_user")
    assert res.n == xs.size and res.stats.shape == (4, 8)
    np.testing.assert_array_equal(np.asarray(res.stats).sum(axis=1), xs.size)  # one report per user
    np.testing.assert_allclose(res.target, np.bincount(xs, minlength=8) / xs.size)
    assert res.estimates["emp"].shape == (4, 8)
    # Items 1 and 5 have no users and are non-sensitive: their reports (invertible) never appear.
    assert np.all(np.asarray(res.stats)[:, [1, 5]] == 0)


@pytest.mark.slow
def test_grid_of_mechanisms_is_one_batched_call_equal_to_individual_runs():
    eps = jnp.array([0.5, 1.0, 2.0, 4.0])
    grid = jax.vmap(lambda e: ul.GRR(12, e))(eps)
    p = np.ones(12) / 12
    key = jax.random.key(3)
    for path in ("per_user", "counts"):
        res = ul.simulate(key, grid, p=p, n=5000, reps=2, path=path)
        assert res.estimates["emp"].shape == (4, 2, 12)
        for i, e in enumerate([0.5, 1.0, 2.0, 4.0]):
            single = ul.simulate(key, ul.GRR(12, e), p=p, n=5000, reps=2, path=path)
            np.testing.assert_array_equal(res.stats[i], single.stats)
            np.testing.assert_allclose(res.estimates["emp"][i], single.estimates["emp"], rtol=1e-5, atol=1e-6)


def test_iid_sampling_follows_p():
    """Non-private check of the iid sampler: GRR at eps = 50 reports the truth; counts ~ Multinomial(n, p)."""
    p = np.array([0.5, 0.25, 0.125, 0.0625, 0.0625, 0.0])
    res = ul.simulate(jax.random.key(4), ul.GRR(6, 50.0), p=p, n=100_000, reps=1)
    counts = np.asarray(res.stats[0])
    assert counts[5] == 0
    z = (counts[:5] - 1e5 * p[:5]) / np.sqrt(1e5 * p[:5] * (1 - p[:5]))
    assert ul.testing.within_se(counts[:5], 1e5 * p[:5], np.sqrt(1e5 * p[:5] * (1 - p[:5]))), z


@pytest.mark.parametrize("kwargs,match", [
    (dict(p=np.ones(5) / 5, n=0), "n"),
    (dict(p=np.ones(5) / 5, n=10, reps=0), "reps"),
    (dict(p=np.ones(4) / 4, n=10), "p"),
    (dict(p=np.array([0.5, 0.5, 0.5, -0.5, 0.0]), n=10), "p"),
    (dict(p=np.ones(5), n=10), "p"),
    (dict(xs=np.array([0, 5]), reps=1), "xs"),
    (dict(xs=np.array([0.0, 1.0]), reps=1), "xs"),
    (dict(xs=np.zeros((2, 2), np.int32), reps=1), "xs"),
    (dict(), "xs"),
    (dict(xs=np.array([0, 1]), p=np.ones(5) / 5, n=3), "xs"),
    (dict(p=np.ones(5) / 5, n=10, methods=("bogus",)), "method"),
])
def test_simulate_bad_input(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        ul.simulate(jax.random.key(0), ul.GRR(5, 1.0), **kwargs)


def test_key_is_required():
    with pytest.raises(TypeError, match="key"):
        ul.simulate(None, ul.GRR(5, 1.0), p=np.ones(5) / 5, n=10)
    with pytest.raises(TypeError, match="key"):
        ul.perturb(0, ul.GRR(5, 1.0), jnp.zeros(3, jnp.int32))
