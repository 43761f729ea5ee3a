"""EM reaches the MLE at its default settings in float32 mode (x64 disabled): within 1e-5 in max-norm of a float64
maximiser, for symmetric and asymmetric channels, boundary MLEs, bit vectors, hashed and subset reports; its
log-likelihood is at least float64 IBU's (within 1e-6 nats per report)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import _em


def _ibu64(Q, c, iters=400_000):
    """Float64 iterative Bayesian update (multi-freq-ldpy's IBU), run to its float64 fixed point."""
    Q, c = np.asarray(Q, np.float64), np.asarray(c, np.float64)
    p = np.full(Q.shape[0], 1.0 / Q.shape[0])
    for _ in range(iters):
        m = p @ Q
        p_next = p * (Q @ np.where(c > 0, c / np.where(m > 0, m, 1.0), 0.0)) / c.sum()
        if np.max(np.abs(p_next - p)) < 1e-16:
            return p_next
        p = p_next
    return p


def _loglik(Q, c, p):
    p = np.asarray(p, np.float64)
    p = p / p.sum()
    m = p @ Q
    pos = c > 0
    return float(np.sum(c[pos] * np.log(m[pos])) / c.sum())


def _check(Q, c, p_hat):
    assert jnp.asarray(p_hat).dtype == jnp.float32  # float32 mode
    want = _ibu64(Q, c)
    p = np.asarray(p_hat, np.float64)
    np.testing.assert_allclose(p, want, atol=1e-5, rtol=0)
    assert _loglik(Q, c, p) >= _loglik(Q, c, want) - 1e-6


def _items(d, n, seed, p=None):
    p = np.arange(1, d + 1, dtype=np.float64) if p is None else np.asarray(p, np.float64)
    return jax.random.choice(jax.random.key(seed), d, (n,), p=jnp.asarray(p / p.sum())).astype(jnp.int32)


def test_grr_float32_reaches_mle():
    """The issue's case: GRR, eps = 1, 16 items, 10,000 reports (a slow EM: rate ~0.999 per step)."""
    mech = ul.GRR(16, 1.0)
    ys = ul.perturb(jax.random.key(4), mech, _items(16, 10_000, 3))
    p_hat, info = _em.em(mech, ys, return_info=True)
    assert bool(info.converged) and int(info.num_steps) > 8
    _check(ul.channel(mech).Q, np.bincount(np.asarray(ys), minlength=16), p_hat)


def test_boundary_mle_is_zero():
    """The issue's boundary case: items whose MLE is 0 end within 1e-5 of 0."""
    mech = ul.GRR(10, 1.0)
    c = np.array([30, 5, 0, 12, 400, 250, 90, 60, 0, 153])
    p_hat = ul.estimate_from_stats(mech, jnp.asarray(c), int(c.sum()), "em")
    _check(ul.channel(mech).Q, c, p_hat)


def test_asymmetric_channel_urr():
    mech = ul.URR(10, (0, 1, 2), 0.5)
    ys = ul.perturb(jax.random.key(6), mech, _items(10, 5000, 5))
    _check(ul.channel(mech).Q, np.bincount(np.asarray(ys), minlength=mech.num_outputs), ul.estimate(mech, ys, "em"))


def _pattern_counts(mech, ys):
    bits = np.asarray(ul.to_dense(ys) if isinstance(ys, ul.CompactBits) else ys)
    code = bits.astype(np.int64) @ (1 << np.arange(mech.d))
    return np.bincount(code, minlength=ul.channel(mech).Q.shape[1])


@pytest.mark.parametrize("mech", [ul.RAPPOR(6, 1.0), ul.URAP(6, (0, 2, 3), 1.0)], ids=lambda m: type(m).__name__)
def test_bit_vectors(mech):
    ys = ul.perturb(jax.random.key(8), mech, _items(6, 4000, 7))
    _check(ul.channel(mech).Q, _pattern_counts(mech, ys), ul.estimate(mech, ys, "em"))


@pytest.mark.parametrize("mech", [ul.OLH(6, 1.0, num_hashes=8), ul.SS(6, 1.0, k=2)], ids=lambda m: type(m).__name__)
def test_hashed_and_subset_reports(mech):
    """OLH with a small hash family (the channel's columns are the (seed, value) pairs) and SS (the subsets)."""
    ys = ul.perturb(jax.random.key(10), mech, _items(6, 4000, 9))
    Q = ul.channel(mech).Q
    if isinstance(mech, ul.OLH):
        code = np.asarray(ys.seed, np.int64) * mech.g + np.asarray(ys.value, np.int64)
    else:
        code = ul.testing.report_index(mech, ys)
    _check(Q, np.bincount(code, minlength=Q.shape[1]), ul.estimate(mech, ys, "em"))
