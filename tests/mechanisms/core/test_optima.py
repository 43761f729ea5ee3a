"""Closed-form optima (003 eqs 37, 43; docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta g*, l*, theta*) against brute-force minimisation."""

import jax
import numpy as np
import pytest

from uldp_jax import theory as th

CASES = [(0.5, 10, 0.3), (2.0, 50, 0.7), (5.0, 424, 0.56), (1.0, 3, 0.9), (3.0, 25, 0.95)]


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _argmin(fn, grid):
    vals = np.asarray(fn(grid))
    return grid[np.argmin(vals)]


@pytest.mark.parametrize("eps,s,tn", CASES)
def test_continuous_optima(eps, s, tn):
    x = np.linspace(1e-4, 1 - 1e-4, 100001)
    np.testing.assert_allclose(float(th.optimal_theta(eps, s, tn)), _argmin(lambda v: th.urap_nmse(eps, s, tn, v), x),
                               atol=2e-5)
    np.testing.assert_allclose(float(th.optimal_p(eps, s, tn)), _argmin(lambda v: th.uue_nmse(eps, s, tn, v), x),
                               atol=2e-5)
    np.testing.assert_allclose(float(th.optimal_l(eps, s, tn)), _argmin(lambda v: th.uwheel_nmse(eps, s, tn, v), x),
                               atol=2e-5)
    g = th.optimal_g_continuous(eps, s, tn)
    gg = np.linspace(1.01, 3 * float(g), 200001)
    np.testing.assert_allclose(float(g), _argmin(lambda v: th.ulh_nmse(eps, s, tn, v), gg), rtol=1e-3)
    kk = np.linspace(1, s - 1, 200001)
    kc = float(th.optimal_k_continuous(eps, s, tn))
    if 1 < kc < s - 1:
        np.testing.assert_allclose(kc, _argmin(lambda v: th.uss_nmse(eps, s, tn, v), kk), rtol=1e-3)


@pytest.mark.parametrize("eps,s,tn", CASES)
def test_integer_optima(eps, s, tn):
    ks = np.arange(1, s)
    assert th.optimal_k(eps, s, tn) == ks[np.argmin(np.asarray(th.uss_nmse(eps, s, tn, ks.astype(float))))]
    gs = np.arange(2, 2000)
    assert th.optimal_g(eps, s, tn) == gs[np.argmin(np.asarray(th.ulh_nmse(eps, s, tn, gs.astype(float))))]


def test_equivalences():
    eps, s, tn = 1.3, 20, 0.4
    g = 4.7
    e = np.exp(eps)
    # uLH(g) == uWheel(1/g) == uUE(p) with g - 1 = e (1 - p) / p (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp).
    np.testing.assert_allclose(float(th.ulh_nmse(eps, s, tn, g)), float(th.uwheel_nmse(eps, s, tn, 1 / g)), rtol=1e-12)
    p = e / (e + g - 1)
    np.testing.assert_allclose(float(th.ulh_nmse(eps, s, tn, g)), float(th.uue_nmse(eps, s, tn, p)), rtol=1e-12)
    # uSS with k = 1 is uRR (docs/errata.md#003-usss-optimal-subset-size).
    np.testing.assert_allclose(float(th.uss_nmse(eps, s, tn, 1.0)), float(th.urr_nmse(eps, s, tn)), rtol=1e-12)
    # 003 §6: Census (s = 424, theta = 0.56) optimal uUE p = .500 at eps = .5 and .518 at eps = 5.
    assert abs(float(th.optimal_p(0.5, 424, 0.56)) - 0.500) < 5e-4
    assert abs(float(th.optimal_p(5.0, 424, 0.56)) - 0.518) < 5e-4


def test_urap_gain_001_default():
    eps, s, tn = 5.0, 424, 0.56
    default = 1 / (1 + np.exp(-eps / 2))
    r0 = float(th.urap_nmse(eps, s, tn, default))
    r1 = float(th.urap_nmse(eps, s, tn, th.optimal_theta(eps, s, tn)))
    assert 0.65 < 1 - r1 / r0 < 0.75  # docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta: ~70%


def test_optima_vmap():
    eps = np.linspace(0.2, 5, 7)
    s = np.array([3.0, 10, 50, 100, 200, 424, 1000])
    out = jax.vmap(th.optimal_theta, in_axes=(0, 0, None))(eps, s, 0.5)
    assert out.shape == (7,) and np.all((np.asarray(out) > 0) & (np.asarray(out) < 1))
