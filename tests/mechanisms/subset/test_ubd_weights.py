"""``uldp_jax/mechanisms/subset/_ubd_weights.py``: uBD's mixture weights (``ul.theory.ubd_weights``) are the saddle
point of Yoon, Park, Nam and Lee's minimax risk: no size and no random mixture does better at alpha*, the exact
worst case over every p is the minimax value, SciPy agrees on the inner problem, and one size appears exactly in
phy811's regimes."""

from __future__ import annotations

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.subset import _ubd_weights


# (d, s, eps): both regimes, one size (uSS) and a mixture of sizes, an alpha at 0, inside and at 1
CASES = [(6, 3, 1.0), (7, 4, 1.0), (8, 4, 1.5), (7, 3, 2.5), (8, 5, 0.7), (12, 2, 0.3), (9, 4, 0.5)]


@pytest.mark.parametrize("d,s,eps", CASES)
def test_weights_are_a_saddle_point(d, s, eps, x64):
    """t* minimises M(alpha*, .) over the simplex (no size and no random mixture does better), and P_alpha* is the
    worst case of the estimator built at alpha*: its exact worst case over every p is M(alpha*, t*)."""
    opt = ul.theory.ubd_weights(d, s, eps)
    A, c = _ubd_weights.info_terms(opt.alpha, d, s, eps, np.arange(1, s + 1))
    t = np.zeros(s)
    t[np.asarray(opt.sizes) - 1] = opt.weights
    best = _ubd_weights.risk(A, c, t)
    rivals = np.vstack([np.eye(s), np.random.default_rng(0).dirichlet(np.ones(s), 200)])
    assert best <= min(_ubd_weights.risk(A, c, r) for r in rivals) * (1 + 1e-12)
    m = ul.UBD(d, tuple(range(1, s + 1)), eps)
    worst, _ = ul.theory.exact_worst_mse(m)
    np.testing.assert_allclose(worst, opt.nmse, rtol=1e-8)
    np.testing.assert_allclose(ul.theory.ubd_minimax_nmse(d, s, eps, opt.sizes, opt.weights, opt.alpha), opt.nmse,
                               rtol=1e-12)


def test_weights_match_scipy_on_the_inner_problem():
    """The inner minimum over t agrees with SciPy's SLSQP (a test-only dependency) at the optimum's alpha."""
    optimize = pytest.importorskip("scipy.optimize")
    d, s, eps = 9, 5, 1.2
    opt = ul.theory.ubd_weights(d, s, eps)
    A, c = _ubd_weights.info_terms(opt.alpha, d, s, eps, np.arange(1, s + 1))
    res = optimize.minimize(lambda t: _ubd_weights.risk(A, c, t), np.full(s, 1.0 / s), method="SLSQP",
                            bounds=[(0, 1)] * s, constraints=[{"type": "eq", "fun": lambda t: t.sum() - 1}],
                            options={"ftol": 1e-15, "maxiter": 500})
    assert opt.nmse <= res.fun * (1 + 1e-9)
    np.testing.assert_allclose(opt.nmse, res.fun, rtol=1e-6)


@pytest.mark.parametrize("d,s,eps", [(10000, 1000, 1.0), (10000, 1000, 7.0), (50, 10, 50.0), (50, 10, 1e-3)])
def test_weights_regimes(d, s, eps):
    """One size (uSS) when e^eps <= sqrt((s-1)(s-2)/2) or >= d - s + sqrt((d-1)(d-2)/2) (phy811's mixture test),
    more than one in between; every weight positive, summing to 1, the risk finite."""
    opt = ul.theory.ubd_weights(d, s, eps)
    e = np.exp(eps)
    low, high = np.sqrt((s - 1) * (s - 2) / 2), d - s + np.sqrt((d - 1) * (d - 2) / 2)
    if e <= low or e >= high:
        assert len(opt.sizes) == 1
    else:
        assert len(opt.sizes) >= 2
    assert np.all(opt.weights > 0) and abs(opt.weights.sum() - 1) < 1e-12 and np.isfinite(opt.nmse)
