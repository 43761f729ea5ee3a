"""RHR (Chen, Kairouz, Özgür 2020): its channel (2^b-ary RR of a block index and a Hadamard sign), closed-form
variance against the exact channel moments, b = 1 as the one-bit Hadamard mechanism, no GLUTF base for b >= 2,
EM, the count path, and minilek/private_frequency_oracles (tests/mechanisms/hadamard/_minilek_ref.py, a port):
same sampler law, same estimate on the same reports once minilek's int truncation is taken out."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401
from uldp_jax.mechanisms.core import comm_bits
from uldp_jax.mechanisms.hadamard._hadamard import hadamard_matrix

from tests.engine.test_counts_path import check_moments, exact_moments
from tests.mechanisms.hadamard import _minilek_ref as ref

# (d, eps, b): one block (b = 1), blocks of 2 (b = log2 K), padded and unpadded domains
CASES = [(6, 1.0, 2), (8, 2.0, 3), (13, 0.7, 1), (16, 3.0, 4), (12, 2.5, 2)]


def _dense_channel(d, eps, b):
    """Q(u B + r | x) = (q + (p - q) 1[u = 2 (x // B) + 1[H_B[x % B, r] = 1]]) / B, written out."""
    K = 1 << (d - 1).bit_length()
    B, m = K >> (b - 1), 2**b
    p = np.exp(eps) / (np.exp(eps) + m - 1)
    q = 1.0 / (np.exp(eps) + m - 1)
    Q = np.zeros((d, 2 * K))
    for x in range(d):
        for r in range(B):
            v = 2 * (x // B) + (hadamard_matrix(B)[x % B, r] > 0)
            for u in range(m):
                Q[x, u * B + r] = (p if u == v else q) / B
    return Q


@pytest.mark.parametrize("d,eps,b", CASES)
def test_channel_audit_and_bits(d, eps, b, x64):
    m = ul.RHR(d, eps, b=b)
    np.testing.assert_allclose(ul.channel(m).Q, _dense_channel(d, eps, b), rtol=1e-13, atol=0)
    rep = ul.audit(m)
    assert rep.ok and rep.tight and rep.kind == "ldp"
    assert comm_bits(m) == b and m.num_outputs == 2 * m.K


@pytest.mark.parametrize("d,eps,b", CASES)
def test_variance_is_the_closed_form(d, eps, b, x64):
    m = ul.RHR(d, eps, b=b)
    rng = np.random.default_rng(0)
    for p in [np.full(d, 1.0 / d), rng.dirichlet(np.ones(d) * 0.5)]:
        for model in ("iid", "fixed"):
            exact = ul.theory.exact_item_mse(m, p, 400.0, model=model)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 400.0, model)), exact, rtol=1e-10)
        np.testing.assert_allclose(np.asarray(ul.theory.rhr_item_nvar(eps, p, b, m.K)),
                                   400.0 * ul.theory.exact_item_mse(m, p, 400.0), rtol=1e-10)
        np.testing.assert_allclose(float(ul.theory.mse(m, p, 400.0)), ul.theory.exact_mse(m, p, 400.0), rtol=1e-10)


def test_channel_products_and_debias_are_exact(x64):
    m = ul.RHR(12, 1.3, b=3)
    Q = ul.channel(m).Q
    rng = np.random.default_rng(1)
    p, w = rng.dirichlet(np.ones(12)), rng.normal(size=Q.shape[1])
    np.testing.assert_allclose(np.asarray(m.channel_matvec(jnp.asarray(p))), p @ Q, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(m.channel_rmatvec(jnp.asarray(w))), Q @ w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(ul.mechanisms.core.debias(m, jnp.asarray(p @ Q), 1.0)), p, atol=1e-13)


def test_one_bit_is_the_hadamard_mechanism(x64):
    """b = 1: one block, the sign of H_K[x, r] through binary RR, i.e. HM; report u K + r is HM's 2 r + (1 - u)."""
    d, eps = 7, 1.2
    m, hm = ul.RHR(d, eps, b=1), ul.HM(d, eps)
    r, u = np.arange(m.K), np.arange(2)[:, None]
    np.testing.assert_allclose(ul.channel(m).Q, ul.channel(hm).Q[:, (2 * r + 1 - u).reshape(-1)], rtol=1e-14)
    p = np.random.default_rng(2).dirichlet(np.ones(d))
    np.testing.assert_allclose(float(ul.theory.mse(m, p, 10.0)), float(ul.theory.mse(hm, p, 10.0)), rtol=1e-12)


def test_not_a_glutf_base_for_two_or_more_bits(x64):
    """Items in one block are supported by each other's reports w.p. (p + q)/2, across blocks w.p. q: no single
    q*, so RHR is not pure (003 Def 6) and GLUTF refuses it; its one-bit case is HM, a valid base (audited)."""
    m = ul.RHR(8, 2.0, b=2)
    assert m.pure() is None
    F = ul.channel(m).Q @ ul.theory.support_matrix(m)
    P, Qp = np.exp(2.0) / (np.exp(2.0) + 3), 1 / (np.exp(2.0) + 3)
    np.testing.assert_allclose(np.diag(F), P)
    np.testing.assert_allclose(F[0, 1:4], (P + Qp) / 2)  # same block (B = 4)
    np.testing.assert_allclose(F[0, 4:], Qp)  # other block
    with pytest.raises(TypeError, match="pure LDP"):
        ul.glutf(m, 12, tuple(range(8)))
    g = ul.glutf(ul.HM(3, 1.0), 6, (0, 2, 4))
    rep = ul.audit(g)
    assert rep.ok and rep.tight and rep.kind == "uldp"


def test_em_is_the_exact_channel_mle(x64):
    m = ul.RHR(6, 1.5, b=2)
    xs = jnp.asarray(np.repeat(np.arange(6), [500, 300, 100, 60, 40, 0]), jnp.int32)
    ys = ul.perturb(jax.random.key(1), m, xs)
    Q = ul.channel(m).Q
    c = np.bincount(np.asarray(ys), minlength=Q.shape[1]).astype(float)
    p = np.full(6, 1 / 6)
    for _ in range(5000):
        p = p * (Q @ (c / (p @ Q))) / c.sum()
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "em"), np.float64), p, atol=1e-3)


def test_count_path_moments_are_exact():
    m = ul.RHR(6, 1.0, b=2)
    counts = np.array([300, 0, 1200, 50, 7, 443])
    res = ul.simulate(jax.random.key(0), m, xs=np.repeat(np.arange(6), counts), reps=600, path="counts")
    check_moments(res.stats, *exact_moments(m, counts=counts))


# ---- minilek/private_frequency_oracles, ported -------------------------------------------------------------------
def test_minileks_sizes_and_default_bits():
    for d, eps in [(1024, 2.0), (1000, 0.3), (16, 10.0), (5, 1.0), (2, 4.0)]:
        K, b, block_size, B = ref.sizes(d, eps, 99)
        m = ul.RHR(d, eps)
        assert (m.K, m.b, m.B) == (K, b, B) and block_size * B == K
    with pytest.raises(ValueError, match="b=None needs a concrete"):
        jax.vmap(lambda e: ul.RHR(10, e))(jnp.asarray([1.0, 2.0]))


def test_default_bits_are_at_or_next_to_the_least_variance():
    d = 1024
    p = np.full(d, 1.0 / d)
    for eps in (0.5, 1.0, 2.0, 3.0, 5.0, 8.0):
        risks = [float(ul.theory.rhr_item_nvar(eps, p, b, d).sum()) for b in range(1, 11)]
        assert abs(ul.RHR(d, eps).b - (1 + int(np.argmin(risks)))) <= 1, (eps, risks)


def test_minileks_randomizer_has_our_channel(x64):
    d, eps, b = 8, 2.0, 2
    Q = ul.channel(ul.RHR(d, eps, b=b)).Q
    rng = np.random.default_rng(3)
    for x in (0, 5):
        counts = np.bincount([ref.local_randomizer(rng, x, d, eps, b) for _ in range(4000)], minlength=Q.shape[1])
        assert ul.testing.fits(ul.testing.chi_square(counts, Q[x]))


def test_same_estimate_as_minilek_without_its_truncation(x64):
    """On the same reports minilek's decoder in exact arithmetic is n times our debias. As compiled it adds
    ``bit * factor`` into an int, truncating at every report: with one repeated report its count estimate is
    n floor(F) H-signs instead of n F, a bias the exact decoder does not have."""
    d, eps, b, n = 16, 2.0, 3, 800
    m = ul.RHR(d, eps, b=b)
    ys = ul.perturb(jax.random.key(4), m, jnp.asarray(np.arange(n) % d, jnp.int32))
    ours = np.asarray(ul.estimate(m, ys, "emp"), np.float64)
    np.testing.assert_allclose(ref.estimate_all_freqs(np.asarray(ys), d, eps, b, truncate=False) / n, ours,
                               rtol=1e-10, atol=1e-12)
    F = (np.exp(eps) + 2**b - 1) / (np.exp(eps) - 1)
    same = np.full(n, int(ys[0]))
    exact = ref.estimate_all_freqs(same, d, eps, b, truncate=False)
    np.testing.assert_allclose(ref.estimate_all_freqs(same, d, eps, b, truncate=True),
                               exact * np.floor(F) / F, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ul.estimate(m, jnp.asarray(same), "emp"), np.float64) * n, exact,
                               rtol=1e-6)


@pytest.mark.parametrize("kwargs,match", [
    (dict(d=8, eps=1.0, b=0), "b=0"),
    (dict(d=8, eps=1.0, b=4), "b=4"),
    (dict(d=5, eps=1.0, b=4), "b=4"),
    (dict(d=2, eps=1.0, b=2), "b=2"),
    (dict(d=1, eps=1.0, b=1), "d=1"),
    (dict(d=8, eps=0.0, b=1), "eps"),
    (dict(d=8, eps=float("nan"), b=1), "eps"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ul.RHR(**kwargs)
    with pytest.raises(TypeError, match="b=1.5"):
        ul.RHR(8, 1.0, b=1.5)


def test_closed_form_refuses_bad_arguments():
    p = np.full(6, 1 / 6)
    for kwargs, match in [(dict(b=2, K=6), "K=6"), (dict(b=2, K=4), "K=4"), (dict(b=4, K=8), "b=4"),
                          (dict(b=0, K=8), "b=0")]:
        with pytest.raises(ValueError, match=match):
            ul.theory.rhr_item_nvar(1.0, p, **kwargs)
    with pytest.raises(ValueError, match="eps"):
        ul.theory.rhr_item_nvar(-1.0, p, 2, 8)
    with pytest.raises(ValueError, match="sum to 1"):
        ul.theory.rhr_item_nvar(1.0, p * 2, 2, 8)


def test_sampler_is_pure_and_keyed():
    m = ul.RHR(16, 2.0, b=3)
    xs = jnp.asarray(np.arange(200) % 16, jnp.int32)
    a = jax.jit(m.perturb_batch)(jax.random.key(0), xs)
    assert a.dtype == jnp.int32 and a.shape == xs.shape
    np.testing.assert_array_equal(np.asarray(a), np.asarray(m.perturb_batch(jax.random.key(0), xs)))
    assert np.any(np.asarray(a) != np.asarray(m.perturb_batch(jax.random.key(1), xs)))
    assert int(a.min()) >= 0 and int(a.max()) < m.num_outputs


def test_reports_and_inputs_are_checked():
    m = ul.RHR(6, 1.0, b=2)
    with pytest.raises(ValueError, match="ys in \\[0, 16\\), got 16"):
        ul.estimate(m, jnp.asarray([0, 16], jnp.int32), "emp")
    with pytest.raises(TypeError, match="ys"):
        ul.estimate(m, jnp.asarray([0.5]), "emp")
    with pytest.raises(ValueError, match="xs in \\[0, 6\\), got 6"):
        ul.perturb(jax.random.key(0), m, jnp.asarray([0, 6], jnp.int32))
