"""The closed-form GRR MLE (water-filling, ``ul.estimation.grr_mle``) as an exact oracle for EM: EM on GRR converges
to it, it satisfies the KKT conditions of the exact log-likelihood, it is the unbiased estimate in the interior, and
it refuses bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import grr_mle, water_filling

CASES = [  # (d, eps, counts): interior, boundary (items at zero), one dominant item, ties; one d: one EM compile
    (6, 3.0, [300, 250, 200, 150, 100, 50]),
    (6, 1.0, [500, 40, 30, 30, 0, 0]),
    (6, 4.0, [1000, 1, 0, 0, 0, 2]),
    (6, 0.5, [60, 60, 10, 10, 5, 0]),
    (6, 10.0, [7, 0, 3, 0, 0, 0]),
]


def _loglik(p, c, keep, other):
    return float(np.sum(c * np.log(other + (keep - other) * p)))


@pytest.mark.parametrize("d,eps,counts", CASES)
def test_em_converges_to_the_closed_form_mle(d, eps, counts):
    with jax.enable_x64(True):
        m = ul.GRR(d, eps)
        c = jnp.asarray(counts, jnp.float64)
        mle = np.asarray(grr_mle(m, c, int(sum(counts))))
        em = np.asarray(ul.estimate_from_stats(m, jnp.asarray(counts, jnp.int32), sum(counts), "em",
                                               tol=1e-14, max_iters=200_000))
        keep, other = (float(v) for v in m.probs())
    np.testing.assert_allclose(mle.sum(), 1.0, atol=1e-12)
    assert np.all(mle >= 0)
    np.testing.assert_allclose(em, mle, atol=2e-5)
    assert _loglik(mle, np.asarray(counts), keep, other) >= _loglik(np.clip(em, 0, None), np.asarray(counts),
                                                                     keep, other) - 1e-9


@pytest.mark.parametrize("d,eps,counts", CASES)
def test_kkt_conditions_of_the_exact_likelihood(d, eps, counts):
    with jax.enable_x64(True):
        m = ul.GRR(d, eps)
        mle = np.asarray(grr_mle(m, jnp.asarray(counts, jnp.float64)))
        keep, other = (float(v) for v in m.probs())
    c = np.asarray(counts, float)
    grad = c * (keep - other) / (other + (keep - other) * mle)  # d loglik / d p_y
    lam = grad[mle > 0]
    np.testing.assert_allclose(lam, lam[0], rtol=1e-10)  # equal on the support
    assert np.all(grad[mle == 0] <= lam[0] * (1 + 1e-10))  # no better direction off it


def test_interior_mle_is_the_unbiased_estimate():
    with jax.enable_x64(True):
        m = ul.GRR(5, 3.0)
        c = jnp.asarray([300, 250, 200, 150, 100], jnp.float64)
        np.testing.assert_allclose(np.asarray(grr_mle(m, c)), np.asarray(ul.estimate_from_stats(m, c.astype(
            jnp.int32), 1000, "emp")), rtol=1e-12)


def test_batched_and_traced():
    m = ul.GRR(4, 2.0)
    c = jnp.asarray([[10, 5, 0, 1], [1, 1, 1, 1]], jnp.float32)
    got = jax.jit(lambda s: grr_mle(m, s))(c)
    for i in range(2):
        np.testing.assert_allclose(np.asarray(got[i]), np.asarray(grr_mle(m, c[i])), rtol=1e-6)
    keep, other = m.probs()
    np.testing.assert_allclose(np.asarray(water_filling(c, other / (keep - other))), np.asarray(got), rtol=1e-6)


def test_bad_inputs():
    m = ul.GRR(4, 1.0)
    with pytest.raises(TypeError, match="GRR"):
        grr_mle(ul.OUE(4, 1.0), jnp.ones(4))
    with pytest.raises(TypeError, match="GRR"):
        grr_mle(ul.URR(4, (0, 1), 1.0), jnp.ones(4))  # item reports, but not keep-or-uniform
    with pytest.raises(ValueError, match="length"):
        grr_mle(m, jnp.ones(3))
    with pytest.raises(ValueError, match="non-negative"):
        grr_mle(m, jnp.asarray([1.0, -1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="non-negative"):
        grr_mle(m, jnp.zeros(4))
    with pytest.raises(ValueError, match="sum to n"):
        grr_mle(m, jnp.ones(4), 5)
