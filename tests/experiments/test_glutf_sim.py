"""``uldp_jax/experiments/_glutf_sim.py``: 003's simulated Fig 4 declared as a ``ul.study`` call (issue 20 item 5):
its MSE theory column is the fixed-model closed form the old hand-written loop computed."""

import numpy as np
import pytest

from uldp_jax import experiments
from uldp_jax.experiments import _datasets, _glutf
from uldp_jax.experiments._runner import Context


def _quick(name):
    exp = experiments.get_experiment(name)
    return exp.run(experiments.make_config(exp, quick=True), Context(progress=False))


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
