"""THE (thresholding with histogram encoding, Wang et al. 2017 §4.3): probabilities, the default threshold, the
exact (non-tight) audit, closed forms against channel moments, EM on THE's own likelihood, GLUTF over it, and
pure-LDP's and multi-freq-ldpy's THE (ported below) on the same reports."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import fminbound

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.mechanisms.unary._the import optimal_theta, the_exact_eps, the_nvar


def _paper_var(theta, eps):
    """Wang et al.'s Var* of THE as pure-LDP's ``HEServer.__find_optimal_theta`` and multi-freq-ldpy's
    ``find_tresh`` write it (both minimise it with SciPy's bounded search on [0.5, 1])."""
    return (2 * math.exp(eps * theta / 2) - 1) / (1 + math.exp(eps * (theta - 0.5)) - 2 * math.exp(eps * theta / 2)) ** 2


@pytest.mark.parametrize("eps", [1e-3, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 50.0])
def test_default_threshold_is_the_papers_optimum(eps):
    m = ul.THE(8, eps)
    theta = float(m.theta)
    with jax.enable_x64(True):
        var = lambda t: float(the_nvar(np.float64(eps), np.float64(t)))  # noqa: E731  (q(1-q)/(p-q)^2, stable)
        assert var(theta) <= min(var(theta - 1e-3), var(theta + 1e-3))  # a minimum, also where SciPy's is not
        np.testing.assert_allclose(var(theta), _paper_var(theta, eps), rtol=1e-6 if eps < 20 else 1e-3)
    if 0.1 <= eps <= 8:  # SciPy's bounded search (the peers' optimiser) is accurate here; at 1e-3 the objective
        # is flat to rounding (SciPy stops 2e-5 off) and at 50 the paper's formula cancels catastrophically
        np.testing.assert_allclose(theta, fminbound(_paper_var, 0.5, 1.0, args=(eps,), xtol=1e-12), atol=1e-6)


def test_probabilities_are_the_laplace_tails():
    eps, theta = 2.0, 0.7
    m = ul.THE(5, eps, theta=theta)
    p, q = (float(v) for v in m.probs())
    b = 2.0 / eps  # P(1 + Lap(b) > theta), P(Lap(b) > theta)
    np.testing.assert_allclose(p, 1 - 0.5 * math.exp(-(1 - theta) / b), rtol=1e-6)
    np.testing.assert_allclose(q, 0.5 * math.exp(-theta / b), rtol=1e-6)


@pytest.mark.parametrize("theta", [0.0, 0.5, 0.8, 1.0])
def test_audit_is_exact_and_not_tight(theta):
    m = ul.THE(4, 2.0, theta=theta)
    rep = ul.audit(m)
    assert rep.ok and not rep.tight
    a = 1.0  # eps / 2
    exact = math.log((2 * math.exp(a * (1 - theta)) - 1) * (2 * math.exp(a * theta) - 1))
    np.testing.assert_allclose(rep.eps, exact, rtol=1e-9)
    np.testing.assert_allclose(float(the_exact_eps(2.0, theta)), exact, rtol=1e-5)
    assert ul.audit(m, E=np.where(np.eye(4, dtype=bool), 0.0, exact * (1 - 1e-6))).ok is False


def test_closed_form_risk_and_variance_match_the_exact_channel():
    m = ul.THE(5, 1.5)
    p = np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    exact = ul.theory.exact_mse(m, p, 1000, model="fixed")
    closed = float(ul.theory.mse(m, p, 1000, model="fixed"))
    np.testing.assert_allclose(closed, exact, rtol=1e-6)
    pp, q = (float(v) for v in m.probs())
    np.testing.assert_allclose(1000 * exact, (pp * (1 - pp) + 4 * q * (1 - q)) / (pp - q) ** 2, rtol=1e-5)


def _dense_em(Q, counts, iters=20000):
    """EM on the dense exact channel (the reference MLE): p <- p * (Q (c / (p Q))) / n."""
    p = np.full(Q.shape[0], 1.0 / Q.shape[0])
    n = counts.sum()
    for _ in range(iters):
        p = p * (Q @ (counts / (p @ Q))) / n
    return p


def test_em_is_the_exact_channel_mle():
    m = ul.THE(4, 1.0)
    xs = jnp.asarray(np.repeat(np.arange(4), [600, 250, 100, 50]), jnp.int32)
    ys = ul.perturb(jax.random.key(0), m, xs)
    Q = ul.channel(m).Q
    cols = ul.testing.report_index(m, ys)
    ref = _dense_em(Q, np.bincount(cols, minlength=Q.shape[1]).astype(float))
    got = np.asarray(ul.estimate(m, ys, "em"), np.float64)
    np.testing.assert_allclose(got, ref, atol=2e-4)


def test_glutf_over_the_is_uldp():
    g = ul.glutf(ul.THE(3, 1.0), 6, (0, 2, 4))
    rep = ul.audit(g)
    assert rep.ok and rep.kind == "uldp" and rep.invertible_ok
    assert ul.check(g, draws=2000).ok


def test_bad_theta_is_refused():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="theta"):
            ul.THE(4, 1.0, theta=bad)


def test_traced_default_threshold_under_vmap():
    grid = jax.vmap(lambda e: ul.THE(4, e))(jnp.asarray([0.5, 2.0]))
    np.testing.assert_allclose(np.asarray(grid.theta), [ul.THE(4, 0.5).theta, ul.THE(4, 2.0).theta], atol=1e-4)
    np.testing.assert_allclose(np.asarray(optimal_theta(jnp.asarray(2.0))), ul.THE(4, 2.0).theta, atol=1e-4)


# ---- pure-LDP's and multi-freq-ldpy's THE, ported (neither is in the test extra) --------------------------------
def _peer_the(noisy, eps, theta):
    """pure-LDP 1.2.0 ``HEServer(use_the=True)`` (aggregate: bit j = noisy_j > theta; estimate (C - n q)/(p - q))
    and multi-freq-ldpy 0.2.5 ``HE_Aggregator_MI`` before its clip-and-normalise (``MI``: same formula), on HE
    reports ``e_x + Lap(2/eps)`` (their ``HEClient`` / ``HE_Client``)."""
    p = 1 - 0.5 * math.exp(eps / 2 * (theta - 1))
    q = 0.5 * math.exp(-theta * eps / 2)
    counts = (noisy > theta).sum(axis=0)
    return (counts - noisy.shape[0] * q) / (p - q) / noisy.shape[0]


def test_peers_estimate_equals_ours_on_the_same_reports():
    eps, d, n = 2.0, 6, 20000
    m = ul.THE(d, eps)
    rng = np.random.default_rng(0)
    xs = rng.choice(d, size=n, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    noisy = np.eye(d)[xs] + rng.laplace(scale=2 / eps, size=(n, d))
    ours = np.asarray(ul.estimate(m, jnp.asarray(noisy > float(m.theta)), "emp"), np.float64)
    np.testing.assert_allclose(ours, _peer_the(noisy, eps, float(m.theta)), rtol=1e-5, atol=1e-6)
    # and the thresholded Laplace reports follow THE's exact channel (the law our sampler draws directly)
    Q = ul.channel(ul.THE(d, eps)).Q
    sub = noisy[xs == 0][:4000] > float(m.theta)
    cols = (sub.astype(np.int64) << np.arange(d)).sum(axis=1)
    assert testing.fits(testing.chi_square(np.bincount(cols, minlength=Q.shape[1]), Q[0]))


def test_glutf_over_the_em_is_the_exact_channel_mle():
    """GLUTF's EM uses THE's own support ratio (``pure().ratio``), not e^{-eps}: with e^{-eps} it converged to
    [0.347, 0.295, 0.167, 0.099, 0.092] here, against the exact channel's MLE [0.371, 0.295, 0.161, 0.099, 0.074]."""
    g = ul.glutf(ul.THE(3, 2.0), 5, (0, 2, 4))
    xs = jnp.asarray(np.repeat(np.arange(5), [400, 300, 150, 100, 50]), jnp.int32)
    ys = ul.perturb(jax.random.key(0), g, xs)
    Q = ul.channel(g).Q
    cols = ul.mechanisms.core._records.likelihood_of(g).index(ys)
    ref = _dense_em(Q, np.bincount(cols, minlength=Q.shape[1]).astype(float))
    np.testing.assert_allclose(np.asarray(ul.estimate(g, ys, "em"), np.float64), ref, atol=2e-4)
