"""Projected Newton past d = 2048 (``_em_newton.LowRank``: the preconditioner held as a diagonal plus a rank-2
part, solved by Woodbury; before it, a dense ``d x d`` model and its Cholesky factor kept such domains on SQUAREM):
the low-rank solve equals the dense one, and at d = 2560 float32 EM equals a float64 scipy MLE."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
import scipy.sparse

import uldp_jax as ul
from uldp_jax.estimation import _em, _em_newton


def _model(d, seed, indefinite=False):
    rng = np.random.default_rng(seed)
    b = rng.gamma(1.0, 1.0, d)
    t = 0.3
    u = t * (1 - t) * b * (-50.0 if indefinite else 1.0)
    return _em_newton.LowRank(jnp.asarray((1 - t) ** 2 * b, jnp.float32), jnp.float32(t * t * 3.0),
                              jnp.asarray(u, jnp.float32))


@pytest.mark.parametrize("indefinite", [False, True])
def test_low_rank_direction_equals_dense(indefinite):
    """``_direction`` with a ``LowRank`` model gives the dense model's direction (bound items, invertible
    counts and, for an indefinite model, the Jacobi fall-back included)."""
    d, n = 40, 1000.0
    rng = np.random.default_rng(1)
    model = _model(d, 2, indefinite)
    p = rng.dirichlet(np.ones(d))
    p[:5] = 1e-9  # candidates for binding
    q = rng.normal(size=d) * 0.1
    q[:3] = -1.0
    inv = np.zeros(d)
    inv[7] = 12.0
    g = np.asarray(model.dense()) + 0.5 * np.eye(d)  # the exact Gram part: not the model
    p, q, inv, g = (jnp.asarray(a, jnp.float32) for a in (p, q, inv, g))
    got = _em_newton._direction(p, q, model, inv, n, lambda v, cols: g @ v)
    want = _em_newton._direction(p, q, model.dense(), inv, n, lambda v, cols: g @ v)
    assert bool(got[1]) and bool(want[1]) and int(got[2]) == int(want[2])
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=2e-3,
                               atol=2e-3 * float(jnp.max(jnp.abs(want[0]))))


def test_low_rank_dense_form():
    model = _model(6, 3)
    m = np.asarray(model.dense())
    np.testing.assert_allclose(np.diag(m), np.asarray(model.diagonal()), rtol=1e-6)
    np.testing.assert_allclose(m, m.T)


@pytest.mark.slow
def test_newton_past_2048_items_reaches_the_scipy_mle():
    """RAPPOR(2560, eps 4), 20,000 reports, half the items with no mass: Newton (not SQUAREM) converges on its
    certificate in few passes and lands within 1e-5 (max-norm) of a float64 L-BFGS-B maximiser on the sparse
    reports, with a log-likelihood no lower (within 1e-7 nats per report)."""
    d, eps, n = 2560, 4.0, 20_000
    assert d > 2048
    mech = ul.RAPPOR(d, eps)
    w = np.arange(1, d + 1, dtype=np.float64) ** 2
    w[: d // 2] = 0.0
    xs = jax.random.choice(jax.random.key(3), d, (n,), p=jnp.asarray(w / w.sum())).astype(jnp.int32)
    ys = ul.perturb(jax.random.key(4), mech, xs)
    p_hat, info = _em.em(mech, ys, return_info=True)
    assert p_hat.dtype == jnp.float32
    assert bool(info.converged) and float(info.gap) <= _em_newton.default_gap_tol(p_hat.dtype)
    assert int(info.num_evals) <= 120  # SQUAREM needs thousands of passes here
    ones = np.asarray(ys.ones)
    rows = np.repeat(np.arange(n), ones.shape[1])
    keep = ones.ravel() < d
    y = scipy.sparse.csr_matrix((np.ones(keep.sum()), (rows[keep], ones.ravel()[keep])), shape=(n, d))
    t = np.exp(-eps)

    def nll(p):  # max l(p) - n sum(p) over p >= 0: its maximiser is the MLE on the simplex
        den = t * p.sum() + (1 - t) * (y @ p)
        grad = t * np.sum(1 / den) + (1 - t) * (y.T @ (1 / den))
        return -(np.sum(np.log(den)) - n * p.sum()) / n, -(grad - n) / n

    res = scipy.optimize.minimize(nll, np.full(d, 1.0 / d), jac=True, method="L-BFGS-B", bounds=[(0, None)] * d,
                                  options={"maxiter": 20_000, "ftol": 1e-16, "gtol": 1e-12, "maxcor": 30})
    want = res.x / res.x.sum()
    got = np.asarray(p_hat, np.float64)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)

    def loglik(p):
        return float(np.mean(np.log(t + (1 - t) * (y @ (p / p.sum())))))

    assert loglik(got) >= loglik(want) - 1e-7
