"""Tuned uRAP vs 001's default theta at the Census setting (s = 424, eps = 5, theta_N = 0.56): ~70% lower MSE."""

import jax
import numpy as np

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax import theory as th

D, S, EPS, THETA_N = 1200, 424, 5.0, 0.56


def _p():
    sens = np.arange(D) < S
    return np.where(sens, (1 - THETA_N) / S, THETA_N / (D - S))


def test_closed_form_gain():
    p = _p()
    default = ul.URAP(D, tuple(range(S)), EPS)
    tuned = ul.tune(default, p=p)
    with jax.enable_x64(True):
        r0, r1 = float(th.mse(default, p, 1.0, "fixed")), float(th.mse(tuned, p, 1.0, "fixed"))
    assert 0.68 < 1 - r1 / r0 < 0.72, 1 - r1 / r0


def test_monte_carlo_confirms_gain():
    """iid model, n = 10000 users, 8 repetitions each; the suite's per-check level (Student t, 7 dof)."""
    p = _p()
    n, reps = 10000, 8
    # 001's default theta, passed explicitly so both mechanisms share one compiled simulation.
    default = ul.URAP(D, tuple(range(S)), EPS, theta=float(1 / (1 + np.exp(-EPS / 2))))
    tuned = ul.tune(default, p=p)
    key = jax.random.key(0)
    losses = {}
    for name, mech in [("default", default), ("tuned", tuned)]:
        res = ul.simulate(key, mech, p=p, n=n, reps=reps)
        loss = np.sum((np.asarray(res.estimates["emp"], np.float64) - p) ** 2, axis=1)
        with jax.enable_x64(True):
            want = float(th.mse(mech, p, n, "iid"))
        se = loss.std(ddof=1) / np.sqrt(reps)
        assert testing.within_se(loss.mean(), want, se, dof=reps - 1), (name, loss.mean(), want, se)
        losses[name] = loss
    # each mean loss is within the budget of its iid risk (above); the gain those risks predict (deterministic):
    with jax.enable_x64(True):
        gain = 1 - float(th.mse(tuned, p, n, "iid")) / float(th.mse(default, p, n, "iid"))
    assert 0.65 < gain < 0.75, gain
