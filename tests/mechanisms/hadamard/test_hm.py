"""HM, the one-bit Hadamard mechanism: its channel and closed forms, support counts, EM, GLUTF over it, and
pure-LDP's ``HadamardMechServer`` (t = 1), ported, on the same reports."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.hadamard._hadamard import hadamard_matrix


def test_channel_is_binary_rr_of_a_uniform_coefficient():
    m = ul.HM(6, 1.5)
    Q = ul.channel(m).Q
    H = hadamard_matrix(8, rows=np.arange(6))
    keep = np.exp(1.5) / (np.exp(1.5) + 1)
    np.testing.assert_allclose(Q[:, 0::2], np.where(H > 0, keep, 1 - keep) / 8, rtol=1e-14)
    np.testing.assert_allclose(Q[:, 1::2], np.where(H < 0, keep, 1 - keep) / 8, rtol=1e-14)
    rep = ul.audit(m)
    assert rep.ok and rep.tight
    assert ul.mechanisms.core.comm_bits(m) == 4.0  # log2 K + 1


def test_closed_forms_match_the_exact_channel():
    m = ul.HM(6, 0.8)
    p = np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0])
    for model in ("iid", "fixed"):
        np.testing.assert_allclose(float(ul.theory.mse(m, p, 500, model=model)),
                                   ul.theory.exact_mse(m, p, 500, model=model), rtol=1e-6)
    c = np.tanh(0.4)
    np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 500)), (1 / c**2 - p**2) / 500, rtol=1e-6)


def test_support_counts_are_the_reports_supporting_each_item():
    m = ul.HM(5, 1.0)
    ys = ul.perturb(jax.random.key(0), m, jnp.asarray(np.arange(300) % 5, jnp.int32))
    sup = np.asarray(m.support(ys))
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), sup.sum(axis=0))
    keep, q = m.pure_probs()[:2]
    assert keep == pytest.approx(np.exp(1) / (np.exp(1) + 1)) and q == 0.5


@pytest.mark.slow
def test_glutf_over_hm_is_audited_uldp():
    g = ul.glutf(ul.HM(3, 1.0), 6, (0, 2, 4))
    rep = ul.audit(g)
    assert rep.ok and rep.tight and rep.kind == "uldp" and rep.invertible_ok
    assert ul.check(g, draws=2000).ok


@pytest.mark.slow
def test_em_is_the_exact_channel_mle():
    m = ul.HM(4, 1.0)
    xs = jnp.asarray(np.repeat(np.arange(4), [500, 300, 150, 50]), jnp.int32)
    ys = ul.perturb(jax.random.key(1), m, xs)
    Q = ul.channel(m).Q
    c = np.bincount(np.asarray(ys), minlength=Q.shape[1]).astype(float)
    p = np.full(4, 0.25)
    for _ in range(20000):
        p = p * (Q @ (c / (p @ Q))) / c.sum()
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "em"), np.float64), p, atol=2e-4)


# ---- pure-LDP 1.2.0's Hadamard mechanism (t = 1), ported: pure-LDP is not in the test extra -------------------
def _pure_ldp_estimate(reports, d, eps):
    """``HadamardMechServer(eps, d, t=1)``: ``aggregated[j] += sign``; ``fwht(aggregated / (2p - 1))[x] / t`` with
    ``p = (e^eps + 2^(t-1) - 1)/(e^eps + 2^t - 1)`` (= e/(e+1) at t = 1); counts, not frequencies. Its client draws
    ``j`` uniform in ``[0, d)`` and the sign ``(-1)^popcount(x & j)``, kept w.p. ``e/(e+1)`` (d a power of two)."""
    agg = np.zeros(d)
    np.add.at(agg, reports[:, 0], reports[:, 1])
    p = (np.exp(eps) + 2**0 - 1) / (np.exp(eps) + 2**1 - 1)
    return hadamard_matrix(d) @ (agg / (2 * p - 1))


def test_pure_ldp_estimate_is_ours_times_n():
    d, eps, n = 8, 2.0, 4000
    m = ul.HM(d, eps)
    xs = jnp.asarray(np.random.default_rng(0).integers(0, d, n), jnp.int32)
    ys = np.asarray(ul.perturb(jax.random.key(2), m, xs))
    theirs = _pure_ldp_estimate(np.stack([ys // 2, 1 - 2 * (ys % 2)], axis=1), d, eps)
    np.testing.assert_allclose(np.asarray(ul.estimate(m, jnp.asarray(ys), "emp"), np.float64) * n, theirs,
                               rtol=1e-5, atol=1e-3)
