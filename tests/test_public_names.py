"""Public names that had no test, each against an independent reference (hand-derived numbers, scipy, exact
channels), and the tuning/registration entry points end to end."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as sps

import uldp_jax as ul
from uldp_jax import theory as th
from uldp_jax import tuning
from uldp_jax.estimation import _registry


def test_nonprivate_risks_against_simulation_free_references():
    p = np.array([0.5, 0.3, 0.2])
    with jax.enable_x64(True):
        np.testing.assert_allclose(float(th.nonprivate_nmse(p)), 1 - 0.25 - 0.09 - 0.04, rtol=1e-12)
        np.testing.assert_allclose(float(th.nonprivate_l2(p, 200)), 0.62 / 200, rtol=1e-12)
        # E|Bin(n, p)/n - p| summed over items, exactly from scipy's binomial pmf, vs the normal approximation
        n = 4000
        exact = sum(np.sum(sps.binom.pmf(k := np.arange(n + 1), n, px) * np.abs(k / n - px)) for px in p)
        np.testing.assert_allclose(float(th.nonprivate_l1(p, n)), exact, rtol=2e-3)


def test_format_recommendations_lists_every_recommendation():
    recs = ul.recommend(10, 3, 2.0, 0.5)
    text = tuning.format_recommendations(recs)
    lines = text.strip().splitlines()
    assert len(lines) >= len(recs)
    for r in recs:
        assert any(r.name in ln for ln in lines), r.name
    for r in recs:  # each row: name, mse (6 significant digits), bits
        row = next(ln for ln in lines if ln.startswith(r.name))
        assert float(row[len(r.name):].split()[0]) == pytest.approx(r.mse, rel=1e-5)
        assert float(row.split()[-1]) == pytest.approx(r.comm_bits, abs=0.006)


def test_tune_return_info_reports_the_objective():
    mech = ul.URAP(6, [0, 1], 1.0)
    new, info = ul.tune(mech, theta_n=0.6, return_info=True)
    assert isinstance(new, ul.URAP) and set(info.params) == {"theta"}
    theta = info.params["theta"]
    assert float(np.asarray(new.theta)) == pytest.approx(theta)
    with jax.enable_x64(True):
        # objective value and the starting value are the closed-form MSE (checked against the exact channel)
        p = np.r_[np.full(2, 0.2), np.full(4, 0.15)]
        exact_new = th.exact_mse(new, p, 1.0, "fixed")
        exact_old = th.exact_mse(mech, p, 1.0, "fixed")
    # n * MSE_fixed at n = 1, from the exact channel (independent of the closed form tune minimises)
    np.testing.assert_allclose(info.objective, exact_new, rtol=1e-6)
    np.testing.assert_allclose(info.initial, exact_old, rtol=1e-6)
    assert exact_new <= exact_old
    assert np.all(np.isfinite(info.loss_trace)) and info.loss_trace.ndim == 1


def test_register_method_end_to_end():
    calls = []

    def half(mech, stats, n):
        calls.append(n)
        return jnp.full((mech.d,), 0.5)

    _registry.register_method("test-half", half, doc="constant 0.5")
    try:
        assert "test-half" in ul.estimation.method_names()
        mech = ul.GRR(4, 1.0)
        est = ul.estimate(mech, ul.perturb(jax.random.key(0), mech, jnp.arange(4)), "test-half")
        np.testing.assert_array_equal(np.asarray(est), 0.5)
        res = ul.simulate(jax.random.key(1), mech, p=np.ones(4) / 4, n=10, reps=2, methods=("emp", "test-half"))
        np.testing.assert_array_equal(np.asarray(res.estimates["test-half"]), 0.5)
        assert 4 in calls
        with pytest.raises(ValueError, match="input"):
            _registry.register_method("test-bad", half, input="nope")
    finally:
        _registry._METHODS.pop("test-half", None)
