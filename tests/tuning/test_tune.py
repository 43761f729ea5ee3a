"""Gradient tuning (optax) reaches the closed-form optima; bad input; audits; grids."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import uldp_jax as ul
from uldp_jax import theory as th
from uldp_jax import tuning

D = 12
CASES = [(0.5, 3, 0.3), (2.0, 8, 0.9), (5.0, 8, 0.56), (1.0, 5, 0.0)]


def _sens(s):
    return tuple(range(s))


@pytest.mark.parametrize("eps,s,tn", CASES)
def test_tune_reaches_closed_form_continuous(eps, s, tn):
    with jax.enable_x64(True):
        for mech, attr, opt, risk in [
            (ul.URAP(D, _sens(s), eps), "theta", th.optimal_theta, th.urap_nmse),
            (ul.UUE(D, _sens(s), eps, p=0.2), "p", th.optimal_p, th.uue_nmse),
            (ul.UWheel(D, _sens(s), eps, l=0.6), "l", th.optimal_l, th.uwheel_nmse),
        ]:
            tuned = ul.tune(mech, theta_n=tn)
            assert type(tuned) is type(mech)
            got, want = float(getattr(tuned, attr)), float(opt(eps, s, tn))
            np.testing.assert_allclose(got, want, rtol=1e-3)
            np.testing.assert_allclose(float(th.nmse(tuned, tn)), float(risk(eps, s, tn, want)), rtol=1e-6)


@pytest.mark.parametrize("eps,s,tn", CASES)
def test_tune_reaches_closed_form_integer(eps, s, tn):
    with jax.enable_x64(True):
        if s >= 2:
            tuned = ul.tune(ul.USS(D, _sens(s), eps, k=1), theta_n=tn)
            assert tuned.k == th.optimal_k(eps, s, tn)
            ks = np.arange(1, s)
            assert tuned.k == ks[np.argmin([float(th.uss_nmse(eps, s, tn, float(k))) for k in ks])]
        tuned = ul.tune(ul.ULH(D, _sens(s), eps, g=2), theta_n=tn)
        assert tuned.g == th.optimal_g(eps, s, tn)
        gs = np.arange(2, 400)
        assert tuned.g == gs[np.argmin(np.asarray(th.ulh_nmse(eps, s, tn, gs.astype(float))))]


def test_tune_ldp_mechanisms():
    with jax.enable_x64(True):
        for mech, attr, want in [(ul.RAPPOR(6, 1.0), "theta", th.optimal_theta(1.0, 6, 0.0)),
                                 (ul.UE(6, 1.0, p=0.3), "p", th.optimal_theta(1.0, 6, 0.0)),
                                 (ul.Wheel(6, 2.0, l=0.5), "l", th.optimal_l(2.0, 6, 0.0))]:
            np.testing.assert_allclose(float(getattr(ul.tune(mech), attr)), float(want), rtol=1e-3)
        assert ul.tune(ul.SS(8, 1.0, k=1)).k == th.optimal_k(1.0, 8, 0.0)
        assert ul.tune(ul.OLH(6, 2.0, g=2)).g == th.optimal_g(2.0, 6, 0.0)


def test_tune_with_full_distribution_and_l1():
    p = np.random.default_rng(0).dirichlet(np.ones(D))
    mech = ul.URAP(D, _sens(4), 2.0)
    with jax.enable_x64(True):
        tn = float(p[4:].sum())
        np.testing.assert_allclose(float(ul.tune(mech, p=p).theta), float(th.optimal_theta(2.0, 4, tn)), rtol=1e-3)
        t1 = ul.tune(mech, p=p, objective="l1")
        grid = np.linspace(0.05, 0.95, 9001)
        vals = [float(th.l1(ul.URAP(D, _sens(4), 2.0, theta=t), p, 1.0)) for t in grid[::10]]
        coarse = grid[::10][int(np.argmin(vals))]
        fine = grid[np.abs(grid - coarse) < 2e-3]
        best = fine[np.argmin([float(th.l1(ul.URAP(D, _sens(4), 2.0, theta=t), p, 1.0)) for t in fine])]
        np.testing.assert_allclose(float(t1.theta), best, atol=2e-4)
        assert abs(float(t1.theta) - float(ul.tune(mech, p=p).theta)) > 1e-3  # l1 and mse optima differ


def test_grid_vmap_over_eps_and_s():
    eps = np.array([0.3, 1.0, 2.0, 5.0, 8.0])
    s = np.array([3.0, 10.0, 50.0, 424.0, 1000.0])
    with jax.enable_x64(True):
        f = jax.jit(jax.vmap(lambda e, ss: tuning.optimize("URAP", e, ss, 0.56)))
        theta, _ = f(eps, s)
        np.testing.assert_allclose(np.asarray(theta), np.asarray(th.optimal_theta(eps, s, 0.56)), rtol=1e-6)
        g, _ = jax.jit(jax.vmap(lambda e, ss: tuning.optimize("ULH", e, ss, 0.56)))(eps, s)
        assert [int(v) for v in np.asarray(g)] == [th.optimal_g(e, int(ss), 0.56) for e, ss in zip(eps, s)]


def test_joint_minimize():
    with jax.enable_x64(True):
        def loss(x):
            return th.urap_nmse(2.0, 20.0, 0.6, x["theta"]) + th.uue_nmse(2.0, 20.0, 0.6, x["p"])

        out, info = jax.jit(lambda: tuning.minimize(loss, {"theta": 0.2, "p": 0.9}, {"theta": (0, 1), "p": (0, 1)}))()
        np.testing.assert_allclose(float(out["theta"]), float(th.optimal_theta(2.0, 20, 0.6)), rtol=1e-6)
        np.testing.assert_allclose(float(out["p"]), float(th.optimal_p(2.0, 20, 0.6)), rtol=1e-6)
        assert info.loss.shape == (tuning.DEFAULT_STEPS,)

        def coupled(x):  # a curved valley: the optimum in y moves with x
            return 1.0 + (x["x"] - 0.3) ** 2 + 10.0 * (x["y"] - x["x"] ** 2) ** 2

        # Coupled problems converge faster with L-BFGS (optax.lbfgs and its zoom line search).
        out, _ = jax.jit(lambda: tuning.minimize(coupled, {"x": 0.9, "y": 0.1}, {"x": (0, 1), "y": (0, 1)},
                                                 steps=100, optimizer=optax.lbfgs()))()
        np.testing.assert_allclose([float(out["x"]), float(out["y"])], [0.3, 0.09], atol=1e-6)


def test_tuned_mechanisms_pass_audit():
    sens = (0, 1, 2)
    with jax.enable_x64(True):
        for mech in [ul.URAP(6, sens, 3.0), ul.UUE(6, sens, 3.0, p=0.3), ul.USS(6, sens, 3.0, k=2),
                     ul.ULH(6, sens, 1.0, g=2, family="full"), ul.UWheel(6, sens, 1.0, l=0.5, num_hashes=8),
                     ul.RAPPOR(5, 2.0)]:
            tuned = ul.tune(mech, theta_n=0.5, audit=True)
            rep = ul.audit(tuned)
            assert rep.ok and rep.tight, (type(mech).__name__, rep)


def test_bad_input():
    mech = ul.URAP(6, (0, 1), 1.0)
    with pytest.raises(ValueError, match="objective"):
        ul.tune(mech, theta_n=0.5, objective="mae")
    with pytest.raises(ValueError, match="p"):
        ul.tune(mech, p=np.array([0.5, 0.5, 0.5, 0, 0, 0]))
    with pytest.raises(ValueError, match="p"):
        ul.tune(mech, p=np.ones(5) / 5)
    with pytest.raises(ValueError, match="theta_n"):
        ul.tune(mech, theta_n=1.5)
    with pytest.raises(ValueError, match="theta_n"):
        ul.tune(mech, theta_n=-0.1)
    with pytest.raises(TypeError, match="mech"):
        ul.tune(ul.URR(6, (0, 1), 1.0), theta_n=0.5)
    with pytest.raises(TypeError, match="mech"):
        ul.tune(ul.GRR(6, 1.0))
    with pytest.raises(TypeError, match="mech"):
        ul.tune(object(), theta_n=0.5)
    with pytest.raises(ValueError, match="p="):
        ul.tune(mech, theta_n=0.5, objective="l1")
    with pytest.raises(ValueError, match="z_rule"):
        ul.tune(ul.USS(6, (0, 1, 2), 1.0, k=1, z_rule="zero"), theta_n=0.5)
    grid = jax.vmap(lambda e: ul.URAP(6, (0, 1), e))(jnp.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="eps"):
        ul.tune(grid, theta_n=0.5)
    with pytest.raises(ValueError, match="name"):
        tuning.optimize("URR", 1.0, 3.0, 0.5)
