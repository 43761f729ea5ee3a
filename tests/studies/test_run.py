"""``ul.study`` (``uldp_jax/studies/_run.py``; issue 20, item 3): the contract, the key
schedule, compile counts, theory z-scores, outputs."""

import csv
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _cache, testing
from uldp_jax.engine import _engine as engine
from uldp_jax.studies import _metrics

D = 16
S = (0, 1, 2, 3)
P = np.random.default_rng(0).dirichlet(np.ones(D))
COLUMNS = ["mechanism", "eps", "n", "sample", "method", "metric", "mean", "se", "theory", "z", "reps",
           "compile_s", "run_s"]


def _contract_study(key=jax.random.key(0), **kw):
    args = dict(eps=[0.5, 1.0, 2.0, 4.0], n=[1000, 5000], reps=6, methods=("emp", "emp+thr"), p=P,
                metrics=("mse",))
    args.update(kw)
    return ul.study(key, {"GRR": lambda eps: ul.GRR(D, eps), "uRR": lambda eps: ul.URR(D, S, eps)}, **args)


@pytest.mark.slow
def test_contract_rows():
    res = _contract_study()
    rows = res.rows()
    assert len(rows) == len(res) == 2 * 4 * 2 * 2 * 1
    assert list(rows[0]) == COLUMNS
    for r in rows:
        assert {"mechanism", "eps", "n", "method", "metric", "mean", "se", "theory", "z", "reps"} <= set(r)
        assert r["reps"] == 6 and r["sample"] == "iid" and r["mean"] > 0 and r["se"] >= 0
        if r["method"] == "emp":
            assert r["theory"] > 0 and r["z"] == pytest.approx((r["mean"] - r["theory"]) / r["se"])
        else:
            assert math.isnan(r["theory"]) and math.isnan(r["z"])
    assert {(r["mechanism"], r["eps"], r["n"]) for r in rows} == {
        (m, e, n) for m in ("GRR", "uRR") for e in (0.5, 1.0, 2.0, 4.0) for n in (1000, 5000)}
    assert res.values.shape == (len(rows), 6)
    assert res.config["sample"] == "iid" and res.version == ul.__version__


def _metric_values(sim, method, i, grid):
    est = np.asarray(sim.estimates[method])
    return _metrics.evaluate("mse", "mse", est[i] if grid else est, np.asarray(sim.target, np.float64))


@pytest.mark.parametrize("path", ["per_user", "counts"])
@pytest.mark.slow
def test_rows_equal_per_point_simulate_calls(path):
    """Key schedule: mechanism m at n-index j uses fold_in(fold_in(key, m), j); each point's values equal a
    ``ul.simulate`` call on that point alone with that key, bit for bit (threefry), on both paths: the statistics
    and the estimates (the engine estimates a counts-path grid point by point with the single mechanism's jitted
    function), and those of the grid call."""
    key = jax.random.key(3)
    res = _contract_study(key, n=[700, 3000], reps=3, simulate_options={"path": path})
    rows = res.rows()
    for m_idx, (name, fac) in enumerate([("GRR", lambda e: ul.GRR(D, e)), ("uRR", lambda e: ul.URR(D, S, e))]):
        for j, n in enumerate((700, 3000)):
            key_mj = jax.random.fold_in(jax.random.fold_in(key, m_idx), j)
            grid = jax.tree_util.tree_map(lambda *ls: jnp.stack(ls), *[fac(e) for e in (0.5, 1.0, 2.0, 4.0)])
            sim_grid = ul.simulate(key_mj, grid, p=P, n=n, reps=3, methods=("emp", "emp+thr"), path=path)
            for i, eps in enumerate((0.5, 1.0, 2.0, 4.0)):
                sim = ul.simulate(key_mj, fac(eps), p=P, n=n, reps=3, methods=("emp", "emp+thr"), path=path)
                np.testing.assert_array_equal(np.asarray(sim.stats), np.asarray(sim_grid.stats[i]))
                for method in ("emp", "emp+thr"):
                    (k,) = [k for k, r in enumerate(rows) if (r["mechanism"], r["eps"], r["n"], r["method"]) ==
                            (name, eps, n, method)]
                    np.testing.assert_array_equal(res.values[k], _metric_values(sim_grid, method, i, True))
                    np.testing.assert_array_equal(res.values[k], _metric_values(sim, method, 0, False))
                    np.testing.assert_array_equal(np.asarray(sim.estimates[method]),
                                                  np.asarray(sim_grid.estimates[method][i]))
                    assert rows[k]["mean"] == float(np.mean(res.values[k]))


def test_single_point_groups_equal_per_point_calls_on_the_counts_path():
    key = jax.random.key(4)
    res = ul.study(key, {"a": lambda eps: ul.GRR(D, 0.5), "b": lambda eps: ul.GRR(D, eps)}, eps=[1.5],
                   n=[900], reps=4, p=P)
    for m_idx, mech in enumerate((ul.GRR(D, 0.5), ul.GRR(D, 1.5))):
        sim = ul.simulate(jax.random.fold_in(jax.random.fold_in(key, m_idx), 0), mech, p=P, n=900, reps=4)
        np.testing.assert_array_equal(res.values[m_idx], _metric_values(sim, "emp", 0, False))


@pytest.mark.slow
def test_compile_count_is_bounded_over_a_sweep_with_olh():
    """eps and n are data: the kernels traced are one per static signature (OLH: one per distinct g), whatever
    the number of n values; a second sweep over new n values and eps traces nothing."""
    facs = {"GRR": lambda eps: ul.GRR(D, eps), "OUE": lambda eps: ul.OUE(D, eps), "OLH": lambda eps: ul.OLH(D, eps)}
    eps = [0.1, 0.2, 0.3, 0.5, 0.7]
    gs = {ul.OLH(D, e).g for e in eps}
    # a long-lived worker near the memory-map guard's threshold would free every compiled program mid-sweep
    # (and re-trace): free them now if it holds over 0.3 of vm.max_map_count, so the sweep cannot cross 0.5
    _cache.guard_map_limit(0.3, force=True)
    before = dict(engine.TRACE_COUNTS)
    ul.study(jax.random.key(0), facs, eps=eps, n=[1000, 4000, 16000], reps=3, p=P, methods=("emp", "emp+thr"))
    traced = {k: engine.TRACE_COUNTS[k] - before[k] for k in before}
    assert traced["counts"] <= 2, traced  # GRR, OUE: one grid kernel each, for all 5 eps and 3 n
    assert traced["per_user"] <= len(gs) < len(eps), (traced, gs)  # OLH: one kernel per g, not per point
    eps2 = [0.15, 0.25, 0.35, 0.45, 0.6]
    before = dict(engine.TRACE_COUNTS)
    ul.study(jax.random.key(1), facs, eps=eps2, n=[2000, 50000], reps=5, p=P)
    traced = {k: engine.TRACE_COUNTS[k] - before[k] for k in before}
    # counts: the repetition ids come in buckets from 1 (issue 26 item 1), so reps = 5 (bucket 6) is one new
    # kernel per group after reps = 3; n and eps are data
    assert traced == {"counts": 2, "per_user": len({ul.OLH(D, e).g for e in eps2} - gs)}, traced


def test_fixed_model_and_extra_parameters():
    xs = np.repeat(np.arange(D), 50).astype(np.int32)
    res = ul.study(jax.random.key(0), {"uRAP": lambda eps, theta: ul.URAP(D, S, eps, theta=theta)}, eps=[1.0, 2.0],
                   theta=[0.3, 0.6], xs=xs, reps=5, metrics=("mse", "tv"))
    rows = res.rows()
    assert len(rows) == 2 * 2 * 2 and {r["sample"] for r in rows} == {"fixed"} and {r["n"] for r in rows} == {800}
    assert {(r["eps"], r["theta"]) for r in rows} == {(e, t) for e in (1.0, 2.0) for t in (0.3, 0.6)}
    v, _ = _metrics.item_variance(ul.URAP(D, S, 1.0, theta=0.3), np.full(D, 1 / D), 800, "fixed")
    r = [r for r in rows if r["eps"] == 1.0 and r["theta"] == 0.3 and r["metric"] == "mse"][0]
    assert r["theory"] == pytest.approx(float(np.mean(v)))


def test_defaulted_factory_parameters_are_swept_only_with_a_grid():
    facs = {"uRAP": lambda eps, theta=None: ul.URAP(D, S, eps, theta=theta), "GRR": lambda eps, d=D: ul.GRR(d, eps)}
    res = ul.study(jax.random.key(0), facs, eps=[1.0], theta=[0.2, 0.4], n=300, reps=2, p=P)
    assert [(r["mechanism"], r["theta"]) for r in res.rows()] == [("uRAP", 0.2), ("uRAP", 0.4), ("GRR", None)]
    assert res.config["params"] == {"uRAP": ["eps", "theta"], "GRR": ["eps"]}


def test_user_metric_and_missing_parameter_columns():
    res = ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(D, eps), "OUE2": lambda: ul.OUE(D, 2.0)},
                   eps=[1.0], n=500, reps=3, p=P, metrics={"linf": lambda e, t: np.max(np.abs(e - t), axis=-1)})
    rows = res.rows()
    assert [r["eps"] for r in rows] == [1.0, None]
    assert all(math.isnan(r["theory"]) and r["metric"] == "linf" and r["mean"] > 0 for r in rows)
