"""emp+thr: Bonferroni significance threshold (001 §6.1, Wang et al. 2017) and the uniform remainder."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as sps

import uldp_jax as ul
from uldp_jax.estimation import apply_threshold, empirical_threshold, significance_threshold


def test_threshold_value_matches_null_variance():
    with jax.enable_x64(True):
        mech, n, alpha = ul.GRR(10, 1.0), 5000, 0.05
        a, b = (np.asarray(v) for v in mech.estimator().affine)
        sd = np.sqrt(b * (1 - b) / (n * a**2))
        want = sps.norm.ppf(1 - alpha / 10) * sd
        np.testing.assert_allclose(np.asarray(significance_threshold(mech, n, alpha)), want, rtol=1e-10)


def test_threshold_zero_on_invertible_items():
    """uRR non-sensitive items: b = 0, so any positive estimate is significant."""
    mech = ul.URR(6, (0, 1), 1.0)
    thr = np.asarray(significance_threshold(mech, 1000))
    assert np.all(thr[2:] == 0) and np.all(thr[:2] > 0)


def test_apply_threshold_hand_example():
    p_hat = jnp.array([0.5, 0.3, 0.05, -0.1, 0.02])
    thr = jnp.full(5, 0.1)
    out = np.asarray(apply_threshold(p_hat, thr))
    np.testing.assert_allclose(out, [0.5, 0.3, 0.2 / 3, 0.2 / 3, 0.2 / 3], rtol=1e-6)
    # Kept mass above 1: kept entries rescaled, the rest 0.
    out = np.asarray(apply_threshold(jnp.array([0.8, 0.6, 0.01]), jnp.full(3, 0.1)))
    np.testing.assert_allclose(out, [0.8 / 1.4, 0.6 / 1.4, 0.0], rtol=1e-6)
    # Nothing kept: uniform.
    np.testing.assert_allclose(np.asarray(apply_threshold(jnp.zeros(4), jnp.full(4, 0.1))), 0.25)


def test_emp_thr_on_simplex_and_registered():
    mech = ul.RAPPOR(20, 1.0)
    xs = jnp.arange(400, dtype=jnp.int32) % 5
    ys = ul.perturb(jax.random.key(0), mech, xs)
    est = np.asarray(ul.estimate(mech, ys, "emp+thr", alpha=0.1))
    assert est.shape == (20,) and np.all(est >= 0) and abs(est.sum() - 1) < 1e-5
    np.testing.assert_allclose(est, np.asarray(empirical_threshold(mech, mech.aggregate(ys), 400, 0.1)))


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_alpha(alpha):
    mech = ul.GRR(4, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        ul.estimate_from_stats(mech, jnp.array([1, 2, 3, 4]), 10, "emp+thr", alpha=alpha)


def test_alpha_type_error():
    with pytest.raises(TypeError, match="alpha"):
        significance_threshold(ul.GRR(4, 1.0), 10, alpha="0.05")
