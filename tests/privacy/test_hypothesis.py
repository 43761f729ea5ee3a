"""Hypothesis-testing view (004 Theorem 1): trade-off curves, the privacy-implied region, and the audit."""

import itertools

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.privacy import achievable, pairwise_log_ratios, satisfies_tradeoff, tradeoff_eps

MECHS = [ul.HR(5, 1.0), ul.HighLowHR(6, (1, 4), 0.8), ul.BlockHR([[0, 2], [1, 3, 4]], 1.5), ul.GRR(4, 0.7),
         ul.BinaryCA(0.3, 2.0), ul.Mangat(1.0)]


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: type(m).__name__)
def test_curve_eps_equals_pairwise_log_ratios(mech):
    """The tightest (eps_xx', eps_x'x) of Theorem 1 equal the channel's worst log-ratios, for every pair."""
    Q = ul.channel(mech).Q
    L = pairwise_log_ratios(Q)
    for x, xa in itertools.permutations(range(Q.shape[0]), 2):
        e1, e2 = tradeoff_eps(ul.tradeoff_curve(mech, x, xa))
        assert e1 == pytest.approx(max(L[x, xa], 0.0), rel=1e-9) or (e1 == L[x, xa] == np.inf)
        assert e2 == pytest.approx(max(L[xa, x], 0.0), rel=1e-9) or (e2 == L[xa, x] == np.inf)


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: type(m).__name__)
def test_theorem1_agrees_with_audit(mech):
    """Q is E-LDP iff every pair's curve obeys eqs 7-8 (Theorem 1); checked against ul.audit(mech, E=E)."""
    Q = ul.channel(mech).Q
    d = Q.shape[0]
    E = mech.privacy_spec().E
    for scale in (1.0, 0.9):
        Es = E * scale
        thm1 = all(satisfies_tradeoff(ul.tradeoff_curve(Q, x, xa), Es[x, xa], Es[xa, x])
                   for x, xa in itertools.permutations(range(d), 2))
        assert thm1 == ul.audit(mech, E=Es).ok == (scale == 1.0)


def test_deterministic_rules_lie_in_both_regions():
    """Every decision rule (subset of outputs where X_hat = x) is achievable and inside the eqs 7-8 region."""
    mech = ul.HighLowHR(5, (0, 2), 1.0)
    Q = ul.channel(mech).Q
    m = Q.shape[1]
    for x, xa, E_pair in ((0, 3, (1.0, np.inf)), (3, 0, (np.inf, 1.0)), (0, 2, (1.0, 1.0))):
        curve, region = ul.tradeoff_curve(Q, x, xa), ul.privacy_tradeoff(*E_pair)
        subsets = np.array(list(itertools.product([0, 1], repeat=m)), dtype=bool)
        p_fa = subsets @ Q[xa]
        p_md = 1.0 - subsets @ Q[x]
        assert np.all(achievable(curve, p_fa, p_md, tol=1e-12))
        assert np.all(achievable(region, p_fa, p_md, tol=1e-12))
        # The curve's vertices are attained by those rules (it is the exact lower boundary).
        for fa, md in zip(curve.p_fa, curve.p_md):
            assert np.min(np.abs(p_fa - fa) + np.abs(p_md - md)) < 1e-12


def test_hlldp_asymmetry():
    """Sensitive x vs non-sensitive x': eps_xx' = eps, eps_x'x = inf (a report in [S + t) \\ [S] reveals x')."""
    mech = ul.HighLowHR(6, (1, 4), 0.8)
    assert tradeoff_eps(ul.tradeoff_curve(mech, 1, 0)) == (pytest.approx(0.8), np.inf)
    reg = ul.privacy_tradeoff(0.8, np.inf)
    np.testing.assert_allclose(reg.p_fa, [0.0, np.exp(-0.8), 1.0])  # only eq 8 binds: e^eps P_FA + P_MD >= 1
    np.testing.assert_allclose(reg.p_md, [1.0, 0.0, 0.0])
    curve = ul.tradeoff_curve(mech, 1, 0)
    assert np.all(achievable(reg, curve.p_fa, curve.p_md, tol=1e-12))


def test_privacy_region_limits():
    r = ul.privacy_tradeoff(0.0, 0.0)
    assert (r.p_fa[1], r.p_md[1]) == (0.5, 0.5)
    r = ul.privacy_tradeoff(np.inf, np.inf)
    assert (r.p_fa[1], r.p_md[1]) == (0.0, 0.0)
    r = ul.privacy_tradeoff(1.0, 1.0)
    assert r.p_md[1] == pytest.approx(1 / (np.e + 1))


def test_bad_input():
    Q = ul.channel(ul.HR(4, 1.0)).Q
    with pytest.raises(ValueError, match="x_alt"):
        ul.tradeoff_curve(Q, 1, 1)
    with pytest.raises(ValueError, match="x_alt"):
        ul.tradeoff_curve(Q, 0, 4)
    with pytest.raises(TypeError, match="x"):
        ul.tradeoff_curve(Q, 0.5, 1)
    with pytest.raises(ValueError, match="Q"):
        ul.tradeoff_curve(Q * 2, 0, 1)
    with pytest.raises(ValueError, match="eps_alt_x"):
        ul.privacy_tradeoff(1.0, -1.0)
    with pytest.raises(TypeError, match="eps_x_alt"):
        ul.privacy_tradeoff("a", 1.0)
