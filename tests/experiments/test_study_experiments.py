"""Paper sweeps declared as ``ul.study`` calls (issue 20 item 5): 003's simulated figures and 004 Fig 2 / Table 1.

The quick configurations run through the study and give the same rows as the hand-written loops they replace:
004 Fig 2's key schedule is the old loop's, so its values equal per-point ``ul.simulate`` calls; 003's MSE theory
column is the fixed-model closed form the old loop computed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import experiments
from uldp_jax.experiments import _context, _datasets, _glutf, _studies
from uldp_jax.experiments._runner import Context


def _quick(name):
    exp = experiments.get_experiment(name)
    return exp.run(experiments.make_config(exp, quick=True), Context(progress=False))


@pytest.mark.slow
def test_004_fig2_rows_equal_per_point_simulate_calls():
    cfg = experiments.make_config(experiments.get_experiment("004-fig2"), quick=True)
    rep = _quick("004-fig2")
    ns = [1000 * 2**i for i in cfg["powers"]]
    mechs = _context.fig2_mechanisms(cfg["k"], cfg["blocks"])
    p = _context._dist(cfg["distributions"][0], cfg["k"]).p
    assert len(rep.rows) == len(mechs) * len(ns) * len(cfg["methods"])
    for mi, (label, factory) in enumerate(mechs.items()):
        for ni, n in enumerate(ns):  # the loop's schedule: key(seed) -> distribution -> mechanism -> n
            res = ul.simulate(Context().key(0, mi, ni), factory(cfg["eps"]), p=p, n=n, reps=cfg["reps"],
                              methods=tuple(cfg["methods"]), path="per_user")
            tv = np.asarray(ul.metrics.tv(res.estimates["emp"], jnp.asarray(p, jnp.float32)), np.float64)
            (row,) = [r for r in rep.rows if r["mechanism"] == label and r["n"] == n and r["method"] == "emp"]
            np.testing.assert_allclose(row["value"], tv.mean(), rtol=1e-6)
            assert row["sample"] == "iid" and row["reps"] == cfg["reps"] and np.isfinite(row["theory"])


@pytest.mark.slow
def test_003_fig4_mse_theory_is_the_fixed_model_closed_form():
    cfg = experiments.make_config(experiments.get_experiment("003-fig4"), quick=True)
    rep = _quick("003-fig4")
    (ds,) = _datasets.resolve(cfg["datasets"], None, cfg.get("n"))
    xs = _glutf.fixed_users(ds.p, ds.n)
    target = np.bincount(xs, minlength=ds.d) / xs.size
    labels = cfg["mechanisms"] + cfg["published"]
    assert sorted(r["mechanism"] for r in rep.rows) == sorted(labels)
    for r in rep.rows:
        mech = _glutf.make(r["mechanism"], ds.d, ds.sensitive, r["eps"], ds.theta_n)
        np.testing.assert_allclose(r["theory"], _glutf.theory_mse(mech, target, xs.size), rtol=1e-9)
        np.testing.assert_allclose(r["value_sum"], r["value"] * ds.d, rtol=1e-12)
        assert r["sample"] == "fixed" and r["n"] == xs.size and r["z"] == pytest.approx(
            (r["value"] - r["theory"]) / r["se"])


def test_study_metrics_map_experiment_names():
    m = _studies.study_metrics(["mse", "tv", "l2sq", "mae", "f1@30"])
    assert m["mse"] == "mse" and m["tv"] == "tv" and m["l2sq"] == "l2"
    est, target = np.full((3, 40), 1 / 40, np.float32), np.linspace(1, 2, 40) / np.linspace(1, 2, 40).sum()
    np.testing.assert_allclose(m["mae"](est, target), np.abs(est - target).mean(-1), rtol=1e-5)
    assert m["f1@30"](est, target).shape == (3,)
    with pytest.raises(ValueError, match="Unknown metric 'rmse'"):
        _studies.study_metrics(["rmse"])
    small = {k: m[k] for k in ("mse", "mae")}
    res = ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(4, eps)}, eps=[1.0, 2.0], n=50, reps=2,
                   p=np.full(4, 0.25), metrics=small)
    rows = _studies.rows(res, dataset="x")
    assert len(rows) == 4 and {r["metric"] for r in rows} == set(small) and all(r["dataset"] == "x" for r in rows)
