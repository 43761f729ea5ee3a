"""The compact report route's predicted sizes (``_report_bounds``): they bound what the reports hold, the compiled
route notices every size its reports pass, and a call whose reports pass one gives the exact route's answer."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from tests.outside_mechanisms import OthersOutside
from uldp_jax.engine import _plan, _report_bounds, _reports


@pytest.mark.parametrize("s, q, delta", [(50, 0.3, 1e-3), (200, 0.05, 1e-6), (7, 0.5, 0.2), (1, 0.9, 0.05),
                                         (30, 0.999, 1e-4), (120, 1e-4, 1e-9)])
def test_binomial_quantile_is_the_least_k(s, q, delta):
    def tail(k):  # P(Binomial(s, q) > k), exact
        return math.fsum(math.comb(s, j) * q**j * (1 - q) ** (s - j) for j in range(k + 1, s + 1))

    k = _report_bounds.binomial_quantile(s, q, delta)
    assert tail(k) <= delta
    assert k == 0 or tail(k - 1) > delta


def test_binomial_quantile_edges():
    assert _report_bounds.binomial_quantile(0, 0.3, 1e-3) == 0
    assert _report_bounds.binomial_quantile(40, 0.0, 1e-3) == 0
    assert _report_bounds.binomial_quantile(40, 1.0, 1e-3) == 40


def test_bernstein_margin_solves_its_bound():
    for var, bound, delta in [(100.0, 1.0, 1e-4), (5e8, 180.0, 3e-4), (0.0, 3.0, 0.1)]:
        t = _report_bounds.bernstein_margin(var, bound, delta)
        assert t > 0 and math.isclose(math.exp(-t * t / (2 * (var + bound * t / 3))), delta, rel_tol=1e-9)


def _exact_sizes(mech, plan, key, reps):
    items_s = _reports._StaticItems(mech.compact().params[0])
    per = np.asarray(_reports._chunks_all(mech, key, plan.data, jnp.int32(plan.n), plan.iid, plan.block_size,
                                          plan.num_blocks, items_s, reps), np.int64)
    kept, ones = (int(v) for v in per[..., 1:3].sum(axis=1).max(axis=0))
    return int(per[..., 0].max()), kept, ones, int(per[..., 3].max())


@pytest.mark.parametrize("mech", [ul.URAP(1100, range(40), 6.0), ul.URAP(1100, range(0, 1100, 3), 1.0),
                                  ul.RAPPOR(1100, 9.0), ul.URAP(60, range(6), 3.0)],
                         ids=["urap-6", "urap-1", "rappor-9", "urap-small"])
@pytest.mark.parametrize("model", ["fixed", "iid"])
def test_predicted_sizes_bound_the_reports(mech, model):
    """Each predicted size is at least what the exact first pass counts on the same reports (and not far above)."""
    key, n, reps, d = jax.random.key(3), 3000, 3, mech.d
    p = np.linspace(1.0, 3.0, d) / np.linspace(1.0, 3.0, d).sum()
    data = dict(p=p, n=n) if model == "iid" else dict(xs=np.random.default_rng(0).choice(d, size=n, p=p))
    plan = _plan.make_plan(key, mech, reps=reps, block_size=512, path="per_user", **data)
    exact = _exact_sizes(mech, plan, key, reps)
    nc, kept, ones, widest = _report_bounds.predicted_sizes(mech, plan.xs, plan.target, n, reps, plan.iid)
    assert nc >= exact[0] and kept >= exact[1] and ones >= exact[2] and widest >= exact[3]
    assert nc <= exact[0] + 1 and kept <= 1.2 * exact[1] + 50 and ones <= 1.2 * exact[2] + 500


def test_no_prediction_where_others_leave_the_product_part():
    assert _report_bounds.predicted_sizes(OthersOutside(), None, np.full(6, 1 / 6), 100, 1, True) is None


@pytest.fixture
def first_passes(calls_to):
    """Counts the exact sizing passes (``_chunks_all``)."""
    return calls_to(_reports, "_chunks_all")


def test_bounds_taken_only_where_they_pay():
    """Packed reports: at most 1/16 more chunks than a typical draw; support lists: a typical draw's sizes."""
    pay = _reports._bounds_pay
    assert pay((206, True, (0, 0, 0)), (204, True, (0, 0, 0))) and pay((17, True, (0, 0, 0)), (16, True, (0, 0, 0)))
    assert not pay((2, True, (0, 0, 0)), (1, True, (0, 0, 0)))
    assert pay((6, False, (57344, 6291456, 192)), (6, False, (57344, 6291456, 192)))
    assert not pay((6, False, (57344, 7340032, 192)), (6, False, (57344, 6291456, 192)))
    assert not pay((2, False, (6144, 114688, 48)), (2, False, (6144, 114688, 40)))


@pytest.mark.slow  # 10 s on 2 cores
def test_no_first_pass_where_the_bounds_pay(first_passes, monkeypatch):
    """uRAP with few sensitive items (packed, one chunk a user): the reports are drawn once, and the answer is the
    exact route's."""
    mech = ul.URAP(1100, range(40), 6.0)
    key, xs = jax.random.key(2), jnp.asarray(np.arange(3000) % 1100, jnp.int32)
    got = ul.simulate(key, mech, xs=xs, reps=2, methods=("em",), block_size=512)
    assert first_passes == []
    monkeypatch.setattr(_report_bounds, "predicted_sizes", lambda *a, **k: None)
    exact = ul.simulate(key, mech, xs=xs, reps=2, methods=("em",), block_size=512)
    assert first_passes == [1]
    np.testing.assert_array_equal(np.asarray(got.stats), np.asarray(exact.stats))
    np.testing.assert_array_equal(np.asarray(got.estimates["em"]), np.asarray(exact.estimates["em"]))


_MISSES = {"chunks": lambda nc, kept, ones, widest: (nc - 1, kept, ones, widest),
           "width": lambda nc, kept, ones, widest: (nc, kept, ones, 4),
           "rows": lambda nc, kept, ones, widest: (nc, kept // 4, ones, widest),
           "ones": lambda nc, kept, ones, widest: (nc, kept, ones // 1000, widest)}


@pytest.mark.slow
def test_a_passed_size_falls_back_to_the_exact_route(monkeypatch, first_passes):
    """Sizes that the reports pass (chunks, width, kept rows, their ones) are noticed, and the call gives the
    exact route's stats and estimates; with the predicted sizes no first pass is drawn at all."""
    # support lists (few ones), ~19 ones a report (a chunk less leaves a few processes unfinished), ~4800 kept rows
    # (more than one 4096-row layout chunk) and ~90,000 ones over 400 items (~450 column segments; sized for 90
    # ones, 256)
    mech = ul.URAP(1100, range(400), 6.0)
    key, xs = jax.random.key(7), jnp.asarray(np.arange(12_000) % 1100, jnp.int32)
    predict = _report_bounds.predicted_sizes
    monkeypatch.setattr(_reports, "_bounds_pay", lambda bound, typical: True)  # here a bucket wider: taken anyway

    def run(sizes):
        jax.clear_caches()
        monkeypatch.setattr(_report_bounds, "predicted_sizes", sizes)
        first_passes.clear()
        res = ul.simulate(key, mech, xs=xs, reps=2, methods=("em",), block_size=1024)
        return np.asarray(res.stats), np.asarray(res.estimates["em"]), len(first_passes)

    want = run(predict)
    assert want[2] == 0  # predicted sizes held: one pass over the reports
    exact = run(lambda *a, **k: None)  # the first pass from the start
    assert exact[2] == 1
    np.testing.assert_array_equal(exact[0], want[0])
    np.testing.assert_allclose(exact[1], want[1], atol=1e-6)
    for miss, shrink in _MISSES.items():
        got = run(lambda *a, shrink=shrink, **k: shrink(*predict(*a, **k)))
        assert got[2] == 1, miss  # noticed: sized again by the first pass
        np.testing.assert_array_equal(got[0], exact[0], err_msg=miss)
        np.testing.assert_array_equal(got[1], exact[1], err_msg=miss)


@pytest.mark.slow
def test_grid_point_by_point_equals_a_loop(first_passes):
    """A ``jax.vmap`` grid of eps through the compact route (each point sized on its own, predicted bounds where they
    pay) gives each point's single-mechanism answer and stats."""
    key, xs = jax.random.key(11), jnp.asarray(np.arange(3000) % 1100, jnp.int32)
    eps = [3.0, 6.0]
    grid = jax.vmap(lambda e: ul.URAP(1100, range(40), e))(jnp.asarray(eps))
    res = ul.simulate(key, grid, xs=xs, reps=2, methods=("em",), block_size=512)
    for i, e in enumerate(eps):
        one = ul.simulate(key, ul.URAP(1100, range(40), e), xs=xs, reps=2, methods=("em",), block_size=512)
        np.testing.assert_array_equal(np.asarray(res.stats[i]), np.asarray(one.stats))
        np.testing.assert_allclose(np.asarray(res.estimates["em"][i]), np.asarray(one.estimates["em"]), atol=1e-6)
