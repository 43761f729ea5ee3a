"""The empirical estimator: exact unbiasedness from channels and Monte Carlo risk vs 001 Props 15 and 18."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing


def _support_prob(mech):
    """f[x, j] = P(stat j incremented | input x), from the exact channel (items: y == j; bits: bit j)."""
    ch = ul.channel(mech)
    if mech.report_kind == "bits":
        bits = ul.mechanisms.core._reports.bits_table(ul.mechanisms.core.num_stats(mech)).astype(float)
        return ch.Q @ bits
    return ch.Q


MECHS = [ul.GRR(6, 0.7), ul.RAPPOR(5, 1.5), ul.OUE(5, 0.4), ul.URR(7, [1, 5], 1.2), ul.URAP(6, [0, 3], 2.0),
         ul.URAP(6, [2], 0.5, theta=0.35), ul.Warner(1.0), ul.Mangat(0.8), ul.BinaryCA(0.4, 1.7)]


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: type(m).__name__)
def test_empirical_estimator_is_unbiased_exactly(mech):
    with jax.enable_x64(True):
        a, b = (np.asarray(v, np.float64) for v in mech.estimator().affine)
        p = np.random.default_rng(0).dirichlet(np.ones(mech.d))
        expected_stats = p @ _support_prob(mech)  # E[stats] / n
        np.testing.assert_allclose((expected_stats - b) / a, p, rtol=1e-10, atol=1e-12)


def _prop15(mech, p, n):
    e, s = np.exp(float(mech.eps)), mech.s
    pS = p[list(mech.sensitive)].sum()
    return (2 * (e - 1) * (s - pS) + s * (s - 1)) / (n * (e - 1) ** 2) + (1 - np.sum(p**2)) / n


def _prop18(mech, p, n):
    h, s = np.exp(float(mech.eps) / 2), mech.s
    pS = p[list(mech.sensitive)].sum()
    return (1 + ((s + 1) * h - 1) / (h - 1) ** 2 - pS / (h - 1) - np.sum(p**2)) / n


@pytest.mark.parametrize("mech,prop", [(ul.URR(20, [0, 3, 7, 11], 1.0), _prop15),
                                       (ul.URAP(20, [0, 3, 7, 11], 1.0), _prop18)],
                         ids=["uRR-Prop15", "uRAP-Prop18"])
@pytest.mark.slow
def test_monte_carlo_l2_matches_001_props(mech, prop):
    """iid model; 400 reps of n=2000; the mean of l2^2 is within the per-check level of the proposition (t, 399 dof)."""
    p = np.random.default_rng(1).dirichlet(np.ones(20))
    n, reps = 2000, 400
    res = ul.simulate(jax.random.key(0), mech, p=p, n=n, reps=reps)
    l2 = np.asarray(ul.metrics.l2sq(res.estimates["emp"], jnp.asarray(p, jnp.float32)), np.float64)
    se = l2.std(ddof=1) / np.sqrt(reps)
    assert testing.within_se(l2.mean(), prop(mech, p, n), se, dof=reps - 1), (l2.mean(), prop(mech, p, n), se)
    # The library's own iid variance formula agrees with the proposition exactly.
    with jax.enable_x64(True):
        var = np.asarray(ul.estimation.empirical_variance(mech, jnp.asarray(p), n)).sum()
    np.testing.assert_allclose(var, prop(mech, p, n), rtol=1e-9)


def test_estimate_checks_reports():
    mech = ul.URR(5, [0], 1.0)
    with pytest.raises(ValueError, match="ys"):
        ul.estimate(mech, jnp.array([0, 7]))
    with pytest.raises(TypeError, match="ys"):
        ul.estimate(mech, jnp.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="ys"):
        ul.estimate(ul.RAPPOR(4, 1.0), jnp.zeros((10, 5), bool))
    with pytest.raises(TypeError, match="ys"):
        ul.estimate(ul.RAPPOR(4, 1.0), jnp.zeros((10, 4), jnp.int32))
    with pytest.raises(ValueError, match="method"):
        ul.estimate(mech, jnp.array([0, 1]), method="nope")


def test_channel_inverse_fallback_matches_closed_form():
    mech = ul.URR(6, [1, 2], 1.0)
    ys = ul.perturb(jax.random.key(0), mech, jnp.arange(3000, dtype=jnp.int32) % 6)
    counts = np.asarray(ul.aggregate(mech, ys))
    closed = np.asarray(ul.estimate(mech, ys), np.float64)
    generic = ul.estimation.channel_inverse(ul.channel(mech).Q, counts)
    np.testing.assert_allclose(closed, generic, atol=1e-5)


def test_chi_square_helper_detects_impossible_outputs():
    res = testing.chi_square(np.array([10, 0, 3]), np.array([0.5, 0.5, 0.0]))
    assert res.pvalue == 0.0
