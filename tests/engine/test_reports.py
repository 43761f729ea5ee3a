"""``uldp_jax/engine/_reports.py``: simulate's stats where a method reads reports: the report route's own per-bit
sums, equal to the per-user path's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.estimation import _registry, _support
from uldp_jax.engine import _engine, _plan, _reports


def _per_user_stats(key, mech, **data):
    stats, _, _ = ul.simulate_stats(key, mech, reps=2, block_size=128, path="per_user", **data)
    return np.asarray(stats)


@pytest.fixture
def stats_drawn(calls_to):
    """Counts the per-user stats passes of ``simulate`` (``run_stats``)."""
    return calls_to(_engine, "run_stats")


_ROUTES = {"rappor-packed": ul.RAPPOR(40, 1.0), "urap-packed": ul.URAP(30, (0, 3, 7), 2.0),
           "urap-compact": ul.URAP(1100, range(40), 6.0), "rappor-compact-support": ul.RAPPOR(1100, 9.0)}


@pytest.mark.parametrize("route,model", [("rappor-packed", "iid"), ("urap-packed", "iid"), ("rappor-packed", "fixed")]
                         + [pytest.param(r, m, marks=pytest.mark.slow) for r, m in  # 10-14 s each on 2 cores
                            (("rappor-compact-support", "iid"), ("urap-compact", "iid"), ("urap-compact", "fixed"))])
def test_report_route_stats_equal_per_user_stats(route, model, stats_drawn):
    """Every bit-vector route (dense packed, compact packed, compact support lists) hands back the reports' sums:
    equal to the per-user path's stats for the same key and block size, and no second stats pass is drawn."""
    key, mech = jax.random.key(5), _ROUTES[route]
    d = mech.d
    data = (dict(p=np.full(d, 1.0 / d), n=300) if model == "iid"
            else dict(xs=jnp.asarray(np.arange(300) % d, jnp.int32)))
    res = ul.simulate(key, mech, reps=2, methods=("em", "emp"), block_size=128, **data)
    assert not stats_drawn
    assert res.stats.dtype == jnp.int32 and res.stats.shape == (2, d)
    np.testing.assert_array_equal(np.asarray(res.stats), _per_user_stats(key, mech, **data))
    # emp reads those stats: the same as a stats-only call on the per-user path
    emp = ul.simulate(key, mech, reps=2, methods=("emp",), block_size=128, path="per_user", **data)
    np.testing.assert_array_equal(np.asarray(res.estimates["emp"]), np.asarray(emp.estimates["emp"]))


@pytest.mark.slow
def test_grid_stats_and_dense_reports_that_do_not_fit_are_refused(monkeypatch, stats_drawn):
    """A grid of eps (point by point) hands back its sums too; packed dense reports that pass
    ``held_report_bytes`` are refused (no row-layout or host route behind them)."""
    key = jax.random.key(8)
    mech = ul.RAPPOR(24, 3.0)
    p = np.linspace(1.0, 2.0, 24) / np.linspace(1.0, 2.0, 24).sum()
    with monkeypatch.context() as mp:
        mp.setitem(_sizing.SIZING_OVERRIDE, "held_report_bytes", 500)  # packed bytes (256 padded rows) pass it
        with pytest.raises(ValueError, match="held_report_bytes = 500"):
            ul.simulate(key, mech, p=p, n=250, reps=2, methods=("em",), block_size=128)
    grid = jax.vmap(lambda e: ul.RAPPOR(24, e))(jnp.asarray([1.0, 4.0]))
    res_g = ul.simulate(key, grid, p=p, n=250, reps=2, methods=("em",), block_size=128)
    assert not stats_drawn
    assert res_g.stats.shape == (2, 2, 24)
    for i, e in enumerate((1.0, 4.0)):
        np.testing.assert_array_equal(np.asarray(res_g.stats[i]), _per_user_stats(key, ul.RAPPOR(24, e), p=p, n=250))
        alone = ul.simulate(key, ul.RAPPOR(24, e), p=p, n=250, reps=2, methods=("em",), block_size=128)
        np.testing.assert_array_equal(np.asarray(res_g.estimates["em"][i]), np.asarray(alone.estimates["em"]))


def test_stats_without_a_report_route_are_drawn(stats_drawn):
    """A method that reads reports without a bit-vector route (OLH's hashed reports, EM on their supports) still
    gets the per-user stats pass."""
    key, mech, p = jax.random.key(2), ul.OLH(6, 1.0), np.full(6, 1 / 6)
    res = ul.simulate(key, mech, p=p, n=200, reps=2, methods=("em", "emp"), block_size=128)
    assert stats_drawn and _registry.get_method("em", mech).input == "reports"
    np.testing.assert_array_equal(np.asarray(res.stats), _per_user_stats(key, mech, p=p, n=200))


@pytest.mark.parametrize("mech", [ul.URAP(1100, range(40), 3.0), ul.RAPPOR(1100, 7.0)], ids=["urap", "rappor"])
def test_sizing_prepass_matches_the_reports(mech):
    """The compact route's sizing pre-pass (chunks, kept rows and their product-part ones, widest report per block)
    equals what the reports drawn with its chunk count hold, and that chunk count finishes every user's process."""
    key, n, bs = jax.random.fold_in(jax.random.key(4), 0), 700, 128
    plan = _plan.make_plan(jax.random.key(4), mech, p=np.full(mech.d, 1.0 / mech.d), n=n, block_size=bs,
                           path="per_user")
    items_s = _reports._StaticItems(mech.compact().params[0])
    args = (mech, key, plan.data, jnp.int32(n), plan.iid, bs, plan.num_blocks)
    per = np.asarray(_reports._chunks_needed(*args, items_s))
    nc = int(per[:, 0].max())
    ones = np.asarray(_reports._compact_reports(*args, nc))
    more = np.asarray(_reports._compact_reports(*args, nc + 1))
    np.testing.assert_array_equal(more[:, :ones.shape[1]], ones)  # nc chunks finish every user's process
    assert (more[:, ones.shape[1]:] == mech.d).all()
    prod, _ = _support.unary_parts(mech)
    prod = np.append(prod, False)  # padding (d) is no one
    for b, blk in enumerate(ones.reshape(plan.num_blocks, bs, -1)):
        real = blk < mech.d
        users = min(bs, n - b * bs)
        outside = np.any(real & ~prod[blk], axis=1)  # uRAP's invertible rows: not in the support lists
        want = [users - outside.sum(), (prod[blk] & ~outside[:, None]).sum(), real.sum(axis=1).max()]
        np.testing.assert_array_equal(per[b, 1:], want)


def test_compact_reports_that_fit_no_device_form_are_refused(monkeypatch):
    """A compact route whose reports of one repetition fit ``held_report_bytes`` in neither exact form is refused
    with an error naming the budget and the remedy: there is no host loop over repetitions."""
    mech = ul.URAP(1100, range(40), 6.0)
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "held_report_bytes", 1000)
    with pytest.raises(ValueError, match=r"held_report_bytes = 1000 .*reduce n, or draw the reports with ul.perturb"):
        ul.simulate(jax.random.key(1), mech, p=np.full(1100, 1 / 1100), n=300, reps=2, methods=("em",),
                    block_size=128)
