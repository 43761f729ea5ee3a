"""One plan per simulate call (issue 20 item 2): methods resolved once, the grid signature, and the engine's
repetition kernel and layout reused by the report path, collaborative sampling and PUM simulation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import _registry
from uldp_jax.pum import _mechanism as _pum
from uldp_jax.engine import _layout, _plan

P8 = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0.0])


def test_each_method_is_resolved_once_per_call(monkeypatch):
    calls = []
    emp = _registry.get_method("emp")

    def resolver(mech):
        calls.append(type(mech).__name__)
        return emp._replace(resolver=None)

    monkeypatch.setitem(_registry._METHODS, "counted", emp._replace(resolver=resolver))
    for path in ("per_user", "counts"):
        calls.clear()
        res = ul.simulate(jax.random.key(0), ul.GRR(8, 1.0), p=P8, n=500, reps=2, methods=("emp", "counted"),
                          path=path)
        assert calls == ["GRR"], (path, calls)
        np.testing.assert_array_equal(np.asarray(res.estimates["counted"]), np.asarray(res.estimates["emp"]))


def test_grid_signature_needs_the_axis_on_every_leaf():
    grid = jax.vmap(lambda e: ul.GRR(8, e))(jnp.array([1.0, 2.0, 3.0]))
    assert _layout.grid_size(ul.GRR(8, 1.0)) is None and _layout.grid_size(grid) == 3
    user = ul.PUM(8, [0, 1], 3, 1.0).user(np.array([3, -1, 5]))  # eps () and personal int[3]
    assert _layout.grid_size(user) is None
    users = jax.tree_util.tree_map(lambda v: np.stack([np.asarray(v)] * 2), user)  # a grid of 2 users
    assert _layout.grid_size(users) == 2
    nested = jax.tree_util.tree_map(lambda v: np.broadcast_to(np.asarray(v), (2, 3) + np.shape(v)), ul.GRR(8, 1.0))
    with pytest.raises(ValueError, match="1-D grid"):
        _layout.grid_size(nested)


@pytest.mark.slow
def test_pum_user_mechanism_runs_in_simulate():
    """A user mechanism with a vector field (PUM's ``user(personal)``) is one mechanism, not a grid of 3."""
    pum = ul.PUM(8, [0, 1], 3, 1.0)
    user = pum.user(np.array([3, -1, 5]))
    key = jax.random.key(4)
    res = ul.simulate(key, user, p=P8, n=700, reps=2)
    assert res.stats.shape == (2, ul.mechanisms.core.num_stats(user)) and res.estimates["emp"].shape == (2, 8)
    np.testing.assert_array_equal(np.asarray(res.stats).sum(1), 700)
    # the same users through the common mechanism: the user's reports are Q_cmn's on f_pre(x)
    xs = np.arange(700) % 8
    mine = ul.simulate_stats(key, user, xs=xs, reps=2)[0]
    zs = _pum.preprocess_np(8, xs, np.broadcast_to(np.array([3, -1, 5]), (700, 3)))
    cmn = ul.simulate_stats(key, pum.cmn, xs=zs, reps=2, path="per_user")[0]
    np.testing.assert_array_equal(np.asarray(mine), np.asarray(cmn))
    users = jax.tree_util.tree_map(lambda v: np.stack([np.asarray(v)] * 2), user)  # a grid: common random numbers
    both = ul.simulate_stats(key, users, p=P8, n=700, reps=2)[0]
    assert both.shape == (2, 2, ul.mechanisms.core.num_stats(user))
    np.testing.assert_array_equal(np.asarray(both[1]), np.asarray(res.stats))


def test_plan_is_decided_once():
    plan = _plan.make_plan(jax.random.key(0), ul.URAP(8, [0, 1], 1.0), p=P8, n=3000, reps=5,
                           methods=("emp", "em"), block_size=256)
    assert plan.path == "per_user" and plan.needs_reports and plan.methods["em"].input == "reports"
    assert plan.num_blocks == 12 and plan.grid is None and plan.rep_chunk == 5
    counts = _plan.make_plan(jax.random.key(0), ul.GRR(8, 1.0), p=P8, n=3000, methods=("emp",))
    assert counts.path == "counts" and counts.data is None and not counts.needs_reports
    with pytest.raises(ValueError, match="per-report likelihoods"):
        _plan.make_plan(jax.random.key(0), ul.URAP(8, [0, 1], 1.0), p=P8, n=10, methods=("em",), path="counts")


@pytest.mark.slow
def test_collab_stages_are_the_engines_per_user_kernel():
    mech = ul.URAP(8, [0, 1], 1.0)
    key = jax.random.key(5)
    res = ul.tuning.collaborative_simulate(key, mech, p=P8, n=4000, reps=3, pilot=0.25)
    stats = ul.simulate_stats(jax.random.fold_in(key, 0), mech, p=P8, n=res.n_pilot, reps=3, path="per_user")[0]
    want = ul.estimate_from_stats(mech, stats, res.n_pilot, "emp")
    np.testing.assert_allclose(np.asarray(res.pilot_estimates), np.asarray(want), rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_pum_report_methods_use_the_engines_report_path():
    pum = ul.PUM(6, [0, 1], 1, 2.0, base="urap")
    rng = np.random.default_rng(0)
    xs = rng.integers(0, 6, 300)
    personal = np.where(rng.random((300, 1)) < 0.3, rng.integers(2, 6, (300, 1)), -1)
    key = jax.random.key(6)
    got = ul.simulate_pum(key, pum, xs, personal, reps=2, method="em", block_size=128)
    zs = _pum.preprocess_np(6, xs, personal)
    want = ul.simulate(key, pum.cmn, xs=zs, reps=2, methods=("em",), block_size=128).estimates["em"]
    np.testing.assert_array_equal(np.asarray(got.r), np.asarray(want))


def test_x64_jit_closing_over_a_mechanism_does_not_break_simulate():
    """Issue 26 item 6: a function jitted under ``jax.enable_x64`` that closes over a mechanism, called twice,
    left JAX's cached float64 copy of the mechanism's NumPy leaf behind, and ``simulate(path="counts")`` then
    failed with RuntimeProgramInputMismatch (f32 against f64)."""
    mech = ul.GRR(8, 1.0)
    p = np.full(8, 1 / 8)
    with jax.enable_x64(True):
        f = jax.jit(lambda k: ul.fastpath.sample_counts_iid(k, mech, jnp.float64(100.0), jnp.asarray(p)))
        f(jax.random.key(0))
        f(jax.random.key(1))
    key = jax.random.key(2)
    got = ul.simulate(key, mech, p=p, n=100, reps=2, path="counts")
    want = ul.simulate(key, ul.GRR(8, 1.0), p=p, n=100, reps=2, path="counts")
    np.testing.assert_array_equal(np.asarray(got.stats), np.asarray(want.stats))
    np.testing.assert_array_equal(np.asarray(got.estimates["emp"]), np.asarray(want.estimates["emp"]))
    per_user = ul.simulate(key, mech, p=p, n=100, reps=2, path="per_user")
    assert per_user.estimates["emp"].dtype == jnp.float32


def test_auto_takes_the_cheaper_exact_path():
    """Issue 26 item 2: HighLowHR with fixed users at large d has d x K multinomial cells per repetition on the
    counts path; "auto" runs it per user. A large iid population of GRR still takes the counts path, a few users
    per user; path= still forces."""
    hl = ul.HighLowHR(2048, list(range(64)), 1.0)
    xs = np.arange(5000) % 2048
    assert _plan.resolve_path("auto", hl, False, False, 5000) == "per_user"
    assert _plan.make_plan(jax.random.key(0), hl, xs=xs).path == "per_user"
    assert _plan.make_plan(jax.random.key(0), hl, xs=xs, path="counts").path == "counts"
    grr = ul.GRR(625, 1.0)
    p = np.full(625, 1 / 625)
    assert _plan.make_plan(jax.random.key(0), grr, p=p, n=10**6).path == "counts"
    assert _plan.make_plan(jax.random.key(0), grr, p=p, n=50).path == "per_user"
    costs = _plan.path_costs(hl, 5000, False)
    assert costs["counts"][0] > costs["per_user"][0] and costs["counts"][1] == 32 * 2048 * hl.num_outputs


def test_small_calls_draw_few_repetitions_and_blocks():
    """Issue 26 item 1: a reps=1 counts-path call draws one repetition (buckets from 1, not a floor of 64); per
    user, the chunk size does not depend on n and the blocks past the full chunks run one at a time, so a small n
    draws only its own blocks, bit-identical to any chunking."""
    grr = ul.GRR(625, 1.0)
    plan = _plan.make_plan(jax.random.key(0), grr, p=np.full(625, 1 / 625), n=10**6, reps=1)
    assert plan.path == "counts" and plan.rep_len == 1
    assert _plan.make_plan(jax.random.key(0), grr, p=np.full(625, 1 / 625), n=10**6, reps=5).rep_len == 6
    assert {_plan.choose_chunk_blocks(grr, 1024, b) for b in (1, 5, 98, 300)} == {64}
    oue = ul.OUE(16, 1.0)
    p = np.full(16, 1 / 16)
    key = jax.random.key(8)
    runs = [ul.simulate_stats(key, oue, p=p, n=n, reps=2, path="per_user", block_size=64, chunk_blocks=c)[0]
            for n, c in ((1000, None), (1000, 1), (1000, 4), (1000, 16))]
    for r in runs[1:]:
        np.testing.assert_array_equal(np.asarray(r), np.asarray(runs[0]))
