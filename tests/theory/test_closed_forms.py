"""Closed-form risks (uldp_jax.theory) against exact channel moments, to 1e-9 relative (float64)."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import theory as th

RTOL = 1e-9


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _p(d, seed=0, zero=None):
    p = np.random.default_rng(seed).dirichlet(np.ones(d))
    if zero is not None:
        p[zero] = 0.0
        p /= p.sum()
    return p


def _mechs(eps):
    sens = (0, 2, 3)
    yield ul.GRR(5, eps)
    yield ul.RAPPOR(5, eps)
    yield ul.UE(5, eps, p=0.3)
    yield ul.OUE(5, eps)
    yield ul.URR(6, sens, eps)
    yield ul.URR(6, (4,), eps)
    yield ul.URAP(6, sens, eps)
    yield ul.URAP(6, sens, eps, theta=0.25)
    yield ul.URAP(6, (1, 5), eps, theta=0.9)
    yield ul.SS(5, eps, k=2)
    yield ul.OLH(4, eps, g=3, family="full")
    yield ul.USS(6, sens, eps, k=1)
    yield ul.USS(6, sens, eps, k=2)
    yield ul.UUE(6, sens, eps, p=0.4)
    yield ul.ULH(6, sens, eps, g=2, family="full")
    yield ul.ULH(6, (1, 4), eps, g=3, family="full")
    yield ul.USS(6, sens, eps, k=2, z_rule="zero")
    yield ul.ULH(6, sens, eps, g=3, family="full", z_rule="published_unsafe")
    yield ul.glutf(ul.GRR(3, eps), 6, sens)
    yield ul.HR(5, eps)
    yield ul.HighLowHR(6, sens, eps)
    yield ul.BlockHR([[0, 1, 2], [3, 4], [5]], eps)


CASES = [(m, eps) for eps in (0.1, 1.0, 5.0) for m in _mechs(eps)]


@pytest.mark.parametrize("mech,eps", CASES, ids=[f"{type(m).__name__}-{e}-{i}" for i, (m, e) in enumerate(CASES)])
@pytest.mark.parametrize("model", ["iid", "fixed"])
def test_mse_equals_exact(mech, eps, model):
    for seed, zero in [(0, None), (1, [1]), (2, [0, 5 % mech.d])]:
        p = _p(mech.d, seed, zero)
        for n in (1.0, 1000.0):
            got = float(th.mse(mech, p, n, model))
            want = th.exact_mse(mech, p, n, model)
            np.testing.assert_allclose(got, want, rtol=RTOL)
        np.testing.assert_allclose(np.asarray(th.item_variance(mech, p, 7.0, model)),
                                   th.exact_item_variance(mech, p, 7.0, model), rtol=RTOL, atol=1e-300)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_murakami_l2_and_l1_match_dispatch(eps):
    d, sens = 6, (0, 2, 3)
    mask = np.isin(np.arange(d), sens)
    p = _p(d, 4)
    n = 500.0
    np.testing.assert_allclose(float(th.urr_l2(p, mask, eps, n)), th.exact_mse(ul.URR(d, sens, eps), p, n), rtol=RTOL)
    np.testing.assert_allclose(float(th.urap_l2(p, mask, eps, n)), th.exact_mse(ul.URAP(d, sens, eps), p, n),
                               rtol=RTOL)
    np.testing.assert_allclose(float(th.rr_l2(p, eps, n)), th.exact_mse(ul.GRR(d, eps), p, n), rtol=RTOL)
    np.testing.assert_allclose(float(th.rappor_l2(p, eps, n)), th.exact_mse(ul.RAPPOR(d, eps), p, n), rtol=RTOL)
    np.testing.assert_allclose(float(th.nonprivate_l2(p, n)), (1 - np.sum(p**2)) / n, rtol=RTOL)
    np.testing.assert_allclose(float(th.urr_l1(p, mask, eps, n)), float(th.l1(ul.URR(d, sens, eps), p, n)), rtol=RTOL)
    np.testing.assert_allclose(float(th.urap_l1(p, mask, eps, n)), float(th.l1(ul.URAP(d, sens, eps), p, n)),
                               rtol=RTOL)
    np.testing.assert_allclose(float(th.rr_l1(p, eps, n)), float(th.l1(ul.GRR(d, eps), p, n)), rtol=RTOL)
    np.testing.assert_allclose(float(th.rappor_l1(p, eps, n)), float(th.l1(ul.RAPPOR(d, eps), p, n)), rtol=RTOL)
    # l1 is the normal approximation: sqrt(2/pi) sum_j sd_j, with exact per-item variances.
    sd = np.sqrt(th.exact_item_variance(ul.URAP(d, sens, eps), p, n))
    np.testing.assert_allclose(float(th.urap_l1(p, mask, eps, n)), np.sqrt(2 / np.pi) * sd.sum(), rtol=RTOL)


def test_mse_differentiable_and_vmappable():
    p = _p(6, 5)
    g = jax.grad(lambda t: th.mse(ul.URAP(6, (0, 2), 1.0, theta=t), p, 100.0))(0.6)
    fd = (th.mse(ul.URAP(6, (0, 2), 1.0, theta=0.6 + 1e-6), p, 100.0)
          - th.mse(ul.URAP(6, (0, 2), 1.0, theta=0.6 - 1e-6), p, 100.0)) / 2e-6
    np.testing.assert_allclose(float(g), float(fd), rtol=1e-6)
    grid = jax.vmap(lambda e: ul.URR(6, (0, 2), e))(jnp.array([0.5, 1.0, 2.0]))
    out = th.mse(grid, p, 10.0)
    assert out.shape == (3,)
    np.testing.assert_allclose(np.asarray(out), [th.exact_mse(ul.URR(6, (0, 2), e), p, 10.0) for e in (0.5, 1, 2)],
                               rtol=RTOL)


def test_bad_input():
    m = ul.URR(5, (0,), 1.0)
    with pytest.raises(ValueError, match="p"):
        th.mse(m, np.array([0.5, 0.6, 0, 0, 0]), 10)
    with pytest.raises(ValueError, match="p"):
        th.mse(m, np.ones(4) / 4, 10)
    with pytest.raises(ValueError, match="model"):
        th.mse(m, np.ones(5) / 5, 10, model="gaussian")
    with pytest.raises(ValueError, match="n"):
        th.mse(m, np.ones(5) / 5, 0)
    with pytest.raises(ValueError, match="theta_n"):
        th.nmse(m, 1.5)
    with pytest.raises(TypeError, match="mech"):
        th.mse(ul.BinaryCA(0.5, 0.5) if False else object(), np.ones(5) / 5, 10)
    with pytest.raises(ValueError, match="model"):
        th.exact_mse(m, np.ones(5) / 5, 10, model="x")
