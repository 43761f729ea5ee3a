"""simulate(..., methods=("emp", "emp+thr", "em", ...)): report-based EM sees the reports behind `stats`."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

from uldp_jax.engine import _engine as sim
from uldp_jax.engine import _plan, _reports


@pytest.mark.slow
def test_regenerated_reports_are_those_behind_stats():
    """Same key, same block layout: the regenerated reports aggregate to simulate's per-user stats (iid and
    fixed models), and simulate's "em" equals EM run on those reports."""
    mech = ul.URAP(8, (0, 1, 2), 2.0)
    p = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0.0])
    key = jax.random.key(12)
    res = ul.simulate(key, mech, p=p, n=500, reps=2, methods=("emp", "em"), block_size=128)
    assert res.estimates["em"].shape == (2, 8) and res.estimates["emp"].shape == (2, 8)
    xs = jnp.asarray(np.arange(300) % 8, jnp.int32)
    stats_x, _, _ = ul.simulate_stats(key, mech, xs=xs, reps=2, block_size=128, path="per_user")
    regen = jax.jit(_reports.rep_reports, static_argnums=(3, 4, 5, 6))
    layout = lambda **kw: (lambda pl: (pl.data, pl.n, pl.iid, pl.num_blocks))(
        _plan.make_plan(key, mech, block_size=128, path="per_user", **kw))  # the engine's population layout
    for r in range(2):
        data, n, iid, nb = layout(p=p, n=500)
        ys = regen(jax.random.fold_in(key, r), mech, data, n, iid, 128, nb)
        assert ys.shape == (500, 8)
        np.testing.assert_array_equal(np.asarray(mech.aggregate(ys)), np.asarray(res.stats[r]))
        data, n, iid, nb = layout(xs=xs)
        ys_x = regen(jax.random.fold_in(key, r), mech, data, n, iid, 128, nb)
        np.testing.assert_array_equal(np.asarray(mech.aggregate(ys_x)), np.asarray(stats_x[r]))
    np.testing.assert_allclose(np.asarray(res.estimates["em"][1]), np.asarray(ul.estimate(mech, ys, "em")),
                               atol=1e-5)


@pytest.mark.slow
def test_fig5_like_ordering():
    """001 Fig 5 / §6.2: "emp+thr" and "EM" significantly outperform "emp" "since [their] estimates are always
    non-negative"; the gap is largest in the high-privacy regime, where emp's negative entries dominate TV.

    Synthetic analogue at 001's smallest eps = 0.1: d = 100, |X_S| = 10, n = 2000, Zipf(1) p, 3 repetitions.
    Claim tested for RR, RAPPOR, uRR and uRAP: mean TV of emp+thr and of EM <= 0.5 x that of emp (measured:
    at most 0.24 x; e.g. uRR 0.56 / 0.69 vs 2.8, RAPPOR 0.49 / 0.94 vs 18). One compile per mechanism (reports,
    emp, emp+thr and EM in one jitted, repetition-vmapped function); simulate's report path is tested above.

    Statistics (``uldp_jax.testing``, per-check level): emp's mean TV agrees with its normal approximation
    (``testing.emp_tv``; iid users, two-sided); emp+thr's and EM's mean TVs are not above half of emp's expected TV
    (one-sided), with half emp's SE as theirs: both are on the simplex and vary less than emp (measured over 20
    repetitions at uRR: SD 0.09 and 0.07 against emp's 0.48).
    """
    d, s, n, reps, eps = 100, 10, 2000, 3, 0.1
    w = 1.0 / np.arange(1, d + 1)
    p = jnp.asarray(w / w.sum(), jnp.float32)
    sens = tuple(range(0, d, d // s))  # spread over head and tail
    xs = jax.random.choice(jax.random.key(0), d, (reps, n), p=p).astype(jnp.int32)
    keys = jax.random.split(jax.random.key(1), reps)
    methods = ("emp", "emp+thr", "em")

    @jax.jit
    def mean_tv(mech):
        def one(k, x):
            ys = mech.perturb_batch(k, x)
            return jnp.stack([ul.metrics.tv(ul.estimate(mech, ys, m), p) for m in methods])

        return jnp.mean(jax.vmap(one)(keys, xs), axis=0)

    for mech in (ul.GRR(d, eps), ul.RAPPOR(d, eps), ul.URR(d, sens, eps), ul.URAP(d, sens, eps)):
        tv = dict(zip(methods, np.asarray(mean_tv(mech), np.float64)))
        mean, sd = testing.emp_tv(mech, p, n)
        se = sd / np.sqrt(reps)
        assert testing.within_se(tv["emp"], mean, se), (type(mech).__name__, tv, mean, se)
        assert testing.at_most(tv["emp+thr"], 0.5 * mean, 0.5 * se), (type(mech).__name__, tv, mean, se)
        assert testing.at_most(tv["em"], 0.5 * mean, 0.5 * se), (type(mech).__name__, tv, mean, se)


@pytest.mark.slow
def test_grid_report_em_runs_point_by_point():
    """A grid's report-based EM (``ul.study``'s path) runs its points one at a time (``lax.map``: one point's
    support lists at once): point ``k`` of a 2-point grid equals the 1-point grid of that point, and every
    estimate is on the simplex."""
    p = np.array([0.4, 0.2, 0.15, 0.1, 0.1, 0.05, 0.0, 0.0])
    key = jax.random.key(5)

    def run(eps):
        grid = jax.vmap(lambda e: ul.RAPPOR(8, e))(jnp.asarray(eps))
        return np.asarray(ul.simulate(key, grid, p=p, n=600, reps=2, methods=("em",), block_size=128).estimates["em"])

    both = run([0.5, 3.0])
    assert both.shape == (2, 2, 8) and np.all(both >= 0)
    np.testing.assert_allclose(both.sum(axis=-1), 1.0, atol=1e-5)
    for k, eps in enumerate([0.5, 3.0]):
        np.testing.assert_allclose(both[k], run([eps])[0], atol=1e-6)
