"""Collaborative sampling (003 §6.3): pilot theta_N estimate and final MSE against the true-theta run."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax import theory as th

D, S, EPS, N, REPS = 40, 8, 1.0, 100_000, 8


def _p():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.dirichlet(np.ones(S)) * 0.3, rng.dirichlet(np.ones(D - S)) * 0.7])


@pytest.mark.parametrize("mech", [ul.URAP(D, tuple(range(S)), EPS), ul.USS(D, tuple(range(S)), EPS)],
                         ids=["URAP", "USS"])
def test_collaborative_sampling(mech):
    p = _p()
    theta_n = float(p[S:].sum())
    res = ul.tuning.collaborative_simulate(jax.random.key(0), mech, p=p, n=N, reps=REPS, pilot=0.05)
    assert res.estimates.shape == (REPS, D) and res.n_pilot == 5000 and res.n_main == 95_000
    # theta_N from 5% of the users: within a few percent (003 Table 2 reports 0.4%-4.4%).
    theta_hat = np.asarray(res.theta_hat, np.float64)  # unbiased (the clip at [0, 1] is far away): a t-test
    assert testing.within_se(theta_hat.mean(), theta_n, theta_hat.std(ddof=1) / np.sqrt(REPS), dof=REPS - 1)
    # Predicted risk of the protocol given the realised theta_hat, and the true-theta run with all users.
    with jax.enable_x64(True):
        pred = []
        for v in res.params:
            tuned = ul.replace(mech, **{th.family_of(mech).param: int(v) if isinstance(mech, ul.USS) else float(v)})
            pred.append((res.n_pilot * float(th.mse(mech, p, 1.0)) + res.n_main * float(th.mse(tuned, p, 1.0))) / N**2)
        true_run = float(th.mse(ul.tune(mech, p=p), p, N))
    loss = np.sum((np.asarray(res.estimates, np.float64) - p) ** 2, axis=1)
    se = loss.std(ddof=1) / np.sqrt(REPS)
    assert testing.within_se(loss.mean(), np.mean(pred), se, dof=REPS - 1), (loss.mean(), np.mean(pred), se)
    # the pilot's cost and theta_hat's error are small (003 Fig 6): the mean predicted risk (random through
    # theta_hat) is not above 1.05 x the true-theta run's (one-sided t check, SE from the repetitions)
    pred_se = np.std(pred, ddof=1) / np.sqrt(REPS)
    assert testing.at_most(np.mean(pred), 1.05 * true_run, pred_se, dof=REPS - 1), (np.mean(pred), true_run, pred_se)


def test_fixed_model_and_main_only():
    """xs=... (fixed model, split once at random); combine='main' returns the main users' estimates."""
    d, s = D, S
    xs = np.random.default_rng(1).integers(0, d, 20_000).astype(np.int32)
    mech = ul.URAP(d, tuple(range(s)), 2.0)
    res = ul.tuning.collaborative_simulate(jax.random.key(1), mech, xs=xs, reps=3, pilot=0.1, combine="main")
    target = np.bincount(xs, minlength=d) / xs.size
    np.testing.assert_allclose(res.target, target)
    assert (res.n_pilot, res.n_main) == (2000, 18_000)
    np.testing.assert_array_equal(np.asarray(res.estimates), np.asarray(res.main_estimates))
    theta_hat = np.asarray(res.theta_hat, np.float64)  # the pilot is a uniform subset: unbiased for theta_N
    assert testing.within_se(theta_hat.mean(), target[s:].sum(), theta_hat.std(ddof=1) / np.sqrt(3), dof=2)
    with jax.enable_x64(True):
        want = [float(th.optimal_theta(2.0, s, float(t))) for t in np.asarray(res.theta_hat)]
    np.testing.assert_allclose(res.params, want, rtol=1e-6)


def test_bad_input():
    mech = ul.URAP(D, tuple(range(S)), EPS)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="pilot"):
        ul.tuning.collaborative_simulate(key, mech, p=_p(), n=1000, pilot=1.5)
    with pytest.raises(ValueError, match="combine"):
        ul.tuning.collaborative_simulate(key, mech, p=_p(), n=1000, combine="mean")
    with pytest.raises(TypeError, match="mech"):
        ul.tuning.collaborative_simulate(key, ul.URR(D, (0,), EPS), p=_p(), n=1000)
    with pytest.raises(ValueError, match="p"):
        ul.tuning.collaborative_simulate(key, mech, p=np.ones(D), n=1000)
    with pytest.raises(TypeError, match="key"):
        ul.tuning.collaborative_simulate(None, mech, p=_p(), n=1000)
