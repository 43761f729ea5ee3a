"""Optimal binary E-LDP mechanism (004 eq 9): tight on both constraints, Warner and Mangat as limits, eq 23."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.privacy import pairwise_log_ratios
from uldp_jax.testing import sampler_vs_channel

PAIRS = [(1.0, 1.0), (0.5, 2.0), (3.0, 0.2), (1e-3, 1e-3), (30.0, 1.0)]


@pytest.mark.parametrize("e12,e21", PAIRS)
def test_tight_on_both_constraints(e12, e21):
    mech = ul.BinaryCA(e12, e21)
    Q = ul.channel(mech).Q
    np.testing.assert_allclose(Q.sum(axis=1), 1.0)
    L = pairwise_log_ratios(Q)
    assert L[0, 1] == pytest.approx(e12, rel=1e-9) and L[1, 0] == pytest.approx(e21, rel=1e-9)
    E = np.array([[0.0, e12], [e21, 0.0]])
    rep = ul.audit(mech, E=E)
    assert rep.ok and rep.tight
    assert not ul.audit(mech, E=np.array([[0.0, e12 * 0.99], [e21, 0.0]])).ok
    assert not ul.audit(mech, E=np.array([[0.0, e12], [e21 * 0.99, 0.0]])).ok


def test_eq9_closed_form():
    e12, e21 = 0.7, 1.9
    a, b = np.exp(e21), np.exp(-e12)
    Q = np.array([[a - 1, 1 - b], [b * (a - 1), a * (1 - b)]]) / (a - b)
    np.testing.assert_allclose(ul.channel(ul.BinaryCA(e12, e21)).Q, Q, rtol=1e-12)


def test_warner_is_the_symmetric_case():
    eps = 1.3
    e = np.exp(eps)
    W = np.array([[e, 1.0], [1.0, e]]) / (e + 1)
    np.testing.assert_allclose(ul.channel(ul.BinaryCA(eps, eps)).Q, W, rtol=1e-12)
    np.testing.assert_allclose(ul.channel(ul.Warner(eps)).Q, W, rtol=1e-12)
    assert ul.audit(ul.BinaryCA(eps, eps), E=ul.ldp_matrix(2, eps)).tight


def test_mangat_is_the_limit_eps12_to_inf():
    eps21 = 0.8
    p = np.exp(-eps21)
    M = np.array([[1 - p, p], [0.0, 1.0]])
    np.testing.assert_allclose(ul.channel(ul.BinaryCA(np.inf, eps21)).Q, M, atol=1e-15)
    np.testing.assert_allclose(ul.channel(ul.Mangat(eps21)).Q, M, atol=1e-15)
    errs = [np.abs(ul.channel(ul.BinaryCA(e12, eps21)).Q - M).max() for e12 in (2.0, 5.0, 10.0, 20.0, 40.0)]
    assert np.all(np.diff(errs) <= 0) and errs[-1] < 1e-15


@pytest.mark.parametrize("e12,e21", PAIRS + [(np.inf, 1.0)])
def test_eq23_error_corner(e12, e21):
    """App. B eq 23 (docs/errata.md#004-app-b-eq-23-the-binary-mechanisms-error-corner): the decision X_hat = Y attains P_MD = (e^e12 - 1)/(e^(e12 + e21) - 1)."""
    curve = ul.tradeoff_curve(ul.BinaryCA(e12, e21), 0, 1)
    ref = ul.privacy_tradeoff(e12, e21)
    np.testing.assert_allclose(curve.p_fa, ref.p_fa, atol=1e-12)
    np.testing.assert_allclose(curve.p_md, ref.p_md, atol=1e-12)
    if np.isfinite(e12):
        assert curve.p_md[1] == pytest.approx(np.expm1(e12) / np.expm1(e12 + e21), rel=1e-9)
        assert curve.p_fa[1] == pytest.approx(np.expm1(e21) / np.expm1(e12 + e21), rel=1e-9)
    else:
        assert curve.p_md[1] == pytest.approx(np.exp(-e21)) and curve.p_fa[1] == 0.0


def test_optimal_region_contains_every_eldp_binary_channel():
    """Theorem 2: every E-LDP binary mechanism's error region lies inside BinaryCA's (here 2 -> 4 outputs)."""
    e12, e21 = 0.6, 1.4
    opt = ul.tradeoff_curve(ul.BinaryCA(e12, e21), 0, 1)
    rng, found = np.random.default_rng(0), 0
    for _ in range(400):
        Q = rng.dirichlet(np.full(4, 4.0), size=2)
        L = pairwise_log_ratios(Q)
        if L[0, 1] > e12 or L[1, 0] > e21:
            continue
        found += 1
        c = ul.tradeoff_curve(Q, 0, 1)
        assert np.all(ul.privacy.achievable(opt, c.p_fa, c.p_md, tol=1e-9))
    # a plain bound, not a statistical check: a draw is accepted with probability ~0.377 (2e5 draws, stat5), so
    # P(found < 20 of 400) = Binom(400, 0.377).cdf(19) ~ 7e-55
    assert found >= 20


@pytest.mark.parametrize("batched", [True, False])
def test_sampler_vs_channel(batched, key):
    mech = ul.BinaryCA(0.5, 2.0)
    for x in (0, 1):
        assert testing.fits(sampler_vs_channel(jax.random.fold_in(key, x), mech, x, 20000, batched))
    wrong = ul.channel(ul.BinaryCA(0.5, 1.0)).Q
    assert sampler_vs_channel(key, mech, 0, 20000, batched, Q=wrong).pvalue < 1e-6


@pytest.mark.parametrize("e12,e21,match", [(-1.0, 1.0, "eps12"), (1.0, -0.5, "eps21"), (np.nan, 1.0, "eps12"),
                                           (1.0, np.nan, "eps21")])
def test_bad_input(e12, e21, match):
    with pytest.raises(ValueError, match=match):
        ul.BinaryCA(e12, e21)
    with pytest.raises(ValueError, match="eps"):
        ul.privacy_tradeoff(-1.0, 1.0)
