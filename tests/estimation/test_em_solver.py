"""``solver=`` ("auto", "em", "squarem", "newton") on every EM entry point, ``accelerate`` kept as its alias: each
solver reaches the same MLE; ``accelerate=False`` is ``solver="em"`` exactly; impossible pairs are refused."""

import jax
import numpy as np
import pytest

import uldp_jax as ul

MECHS = {"RAPPOR": lambda: ul.RAPPOR(10, 2.0), "URAP": lambda: ul.URAP(12, [0, 3, 5], 1.0),
         "OLH": lambda: ul.OLH(12, 1.0), "GRR": lambda: ul.GRR(12, 1.0)}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in ("RAPPOR", "URAP") else n
                                  for n in sorted(MECHS)])
def test_every_solver_reaches_the_same_mle(name):
    mech = MECHS[name]()
    ys = ul.perturb(jax.random.key(0), mech, np.arange(600) % mech.d)
    solvers = ["auto", "em", "squarem"] + ([] if mech.report_kind == "item" else ["newton"])
    est = {s: np.asarray(ul.estimate(mech, ys, "em", solver=s, tol=1e-12)) for s in solvers}
    for s in solvers:
        np.testing.assert_allclose(est[s], est["auto"], atol=5e-5, err_msg=s)
    # the aliases, exactly: plain EM to tol=1e-12 takes hundreds of steps, so the alias is compared at 200 steps
    # (the same program either way) rather than paying that run twice
    short = dict(tol=1e-12, max_iters=200)
    np.testing.assert_array_equal(np.asarray(ul.estimate(mech, ys, "em", accelerate=False, **short)),
                                  np.asarray(ul.estimate(mech, ys, "em", solver="em", **short)))
    np.testing.assert_array_equal(np.asarray(ul.estimate(mech, ys, "em", accelerate=True, tol=1e-12)), est["auto"])


def test_bad_solvers_are_refused():
    grr = ul.GRR(12, 1.0)
    ys = ul.perturb(jax.random.key(1), grr, np.arange(100) % 12)
    with pytest.raises(ValueError, match="no Newton solver"):
        ul.estimate(grr, ys, "em", solver="newton")
    with pytest.raises(ValueError, match="solver="):
        ul.estimate(grr, ys, "em", solver="lbfgs")
    rappor = ul.RAPPOR(10, 1.0)
    with pytest.raises(ValueError, match="accelerate=False means solver='em'"):
        ul.estimate(rappor, ul.perturb(jax.random.key(1), rappor, np.arange(100) % 10), "em", solver="newton",
                    accelerate=False)
