"""PI-RAPPOR (Feldman, Talwar 2021): pairwise-independent support bits (own p*, every other 1/q), OUE's variance at
q = e^eps + 1, the closed form against the exact channel, support counts through the report histogram, GLUTF over
it, EM, the iid count path, and minilek/private_frequency_oracles (tests/mechanisms/unary/_minilek_pi_rappor.py,
a port): same sizes, same randomizer law and estimate where the two coincide (e^eps = q - 1), its dynamic program
equal to our aggregate; elsewhere minilek keeps the own bit at 1/2 and is only ln(q - 1)-LDP (its exact channel)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401
from uldp_jax.mechanisms.core import comm_bits
from uldp_jax.mechanisms.unary import _pi_rappor

from tests.mechanisms.unary import _minilek_pi_rappor as ref

# (d, eps, q): q = 2 (small eps), t = 1, 2, 3; padded and q = e^eps + 1 exactly
CASES = [(6, 1.0, 3), (8, float(np.log(4.0)), 5), (13, 0.3, 2), (20, 2.0, 7), (7, 3.0, 11), (30, 1.2, 3),
         (40, 1.0, 3)]  # the last: d > t q^2, support counts by the digit program


@pytest.mark.parametrize("d,eps,q", CASES)
def test_support_is_pairwise_independent_and_audit_tight(d, eps, q, x64):
    m = ul.PIRAPPOR(d, eps, q=q)
    F = ul.channel(m).Q @ ul.theory.support_matrix(m)
    P = np.exp(eps) / (np.exp(eps) + q - 1)
    np.testing.assert_allclose(np.diag(F), P, rtol=1e-12)
    np.testing.assert_allclose(F[~np.eye(d, dtype=bool)], 1.0 / q, rtol=1e-12)
    rep = ul.audit(m)
    assert rep.ok and rep.tight and rep.kind == "ldp"
    assert comm_bits(m) == pytest.approx((m.t + 1) * np.log2(q)) and q**m.t > d >= q ** (m.t - 1) - 1
    assert m.pure_probs()[:2] == pytest.approx((P, 1.0 / q))


@pytest.mark.parametrize("d,eps,q", CASES)
def test_variance_is_the_closed_form(d, eps, q, x64):
    m = ul.PIRAPPOR(d, eps, q=q)
    rng = np.random.default_rng(0)
    for p in [np.full(d, 1.0 / d), rng.dirichlet(np.ones(d) * 0.5)]:
        for model in ("iid", "fixed"):
            exact = ul.theory.exact_item_mse(m, p, 300.0, model=model)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 300.0, model)), exact, rtol=1e-10)
        np.testing.assert_allclose(np.asarray(ul.theory.pi_rappor_item_nvar(eps, p, q)),
                                   300.0 * ul.theory.exact_item_mse(m, p, 300.0), rtol=1e-10)


def test_oues_variance_at_q_equal_e_eps_plus_one(x64):
    """At q = e^eps + 1 the own bit is 1/2 and the others 1/q = 1/(e^eps + 1): OUE's probabilities and variance,
    with (t + 1) log2 q bits instead of d."""
    for q, d in [(3, 8), (5, 24), (7, 40)]:
        eps = float(np.log(q - 1.0))
        m, oue = ul.PIRAPPOR(d, eps, q=q), ul.OUE(d, eps)
        p = np.random.default_rng(q).dirichlet(np.ones(d))
        np.testing.assert_allclose(float(ul.theory.mse(m, p, 50.0)), float(ul.theory.mse(oue, p, 50.0)), rtol=1e-12)
        assert m.pure_probs()[0] == pytest.approx(0.5) and comm_bits(m) < d


def test_aggregate_is_the_support_counts_in_chunks(monkeypatch):
    m = ul.PIRAPPOR(30, 1.2, q=3)
    ys = ul.perturb(jax.random.key(0), m, jnp.asarray(np.arange(3000) % 30, jnp.int32))
    dense = np.asarray(m.support(ys))
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), dense.sum(axis=0))
    monkeypatch.setattr(_pi_rappor, "CHUNK_ENTRIES", 64)  # 2 coefficient vectors a chunk, a ragged last chunk
    w = jnp.asarray(np.arange(3000) % 3 == 0, jnp.int32)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys, w)), dense[np.asarray(w) > 0].sum(axis=0))


@pytest.mark.parametrize("d,q", [(40, 3), (30, 2), (100, 5), (10, 3), (7, 11)])
def test_digit_program_is_the_direct_sum(d, q):
    """minilek's dynamic program (``O(t q^(t+2))``) and the direct sum over every item's cells (``O(q^t d)``) give
    the same support counts of any histogram; ``support_counts`` picks the cheaper."""
    m = ul.PIRAPPOR(d, 1.0, q=q)
    hist = jnp.asarray(np.random.default_rng(d).integers(0, 50, m.num_outputs), jnp.int32)
    np.testing.assert_array_equal(np.asarray(m._digit_program(hist)), np.asarray(m._direct_counts(hist)))


@pytest.mark.parametrize("d,q", [(40, 3), (20, 7)])
def test_channel_matvec_is_p_times_the_channel(d, q, x64):
    m = ul.PIRAPPOR(d, 1.0, q=q)
    p = np.random.default_rng(1).dirichlet(np.ones(d), size=2)
    np.testing.assert_allclose(np.asarray(m.channel_matvec(jnp.asarray(p))), p @ ul.channel(m).Q, rtol=1e-12)


def test_glutf_over_pi_rappor_is_uldp(x64):
    g = ul.glutf(ul.PIRAPPOR(4, 1.0, q=3), 7, (0, 2, 3, 5))
    rep = ul.audit(g)
    assert rep.ok and rep.tight and rep.kind == "uldp" and rep.invertible_ok
    p = np.full(7, 1 / 7)
    np.testing.assert_allclose(float(ul.theory.mse(g, p, 100.0)), ul.theory.exact_mse(g, p, 100.0), rtol=1e-6)


def test_em_is_the_exact_channel_mle(x64):
    m = ul.PIRAPPOR(5, 1.5, q=3)
    xs = jnp.asarray(np.repeat(np.arange(5), [500, 300, 150, 50, 0]), jnp.int32)
    ys = ul.perturb(jax.random.key(1), m, xs)
    Q = ul.channel(m).Q
    c = np.bincount(np.asarray(ys), minlength=Q.shape[1]).astype(float)
    p = np.full(5, 0.2)
    for _ in range(5000):
        p = p * (Q @ (c / (p @ Q))) / c.sum()
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "em"), np.float64), p, atol=1e-3)


def test_iid_count_path_moments_are_exact():
    """Support counts of dependent bits: mean n w S and covariance n (S' diag(w) S - (w S)'(w S)) of one report's
    law w = p Q, from the exact channel (a mean check and a covariance check, ``ul.testing.within_se``)."""
    m, n, reps = ul.PIRAPPOR(6, 1.0, q=3), 2000, 600
    p = np.array([0.3, 0.0, 0.25, 0.05, 0.1, 0.3])
    res = ul.simulate(jax.random.key(2), m, p=p, n=n, reps=reps, path="counts")
    with jax.enable_x64(True):
        Q, S = ul.channel(m).Q, ul.theory.support_matrix(m)
    w = p @ Q
    mean, cov = n * w @ S, n * ((S.T * w) @ S - np.outer(w @ S, w @ S))
    stats = np.asarray(res.stats, np.float64)
    diag = np.diag(cov)
    assert ul.testing.within_se(stats.mean(0), mean, np.sqrt(diag / reps))
    assert ul.testing.within_se(np.cov(stats.T), cov, np.sqrt((np.outer(diag, diag) + cov**2) / reps))


# ---- minilek/private_frequency_oracles, ported -------------------------------------------------------------------
def test_minileks_sizes_and_default_q():
    for d, eps in [(1024, 2.0), (1000, 5.0), (20, 1.0), (10, 1.5)]:
        q, t, K = ref.sizes(d, eps)
        m = ul.PIRAPPOR(d, eps)
        assert (m.q, m.t) == (q, t) and K == q**t - 1
    with pytest.raises(ValueError, match="q=None needs a concrete"):
        jax.vmap(lambda e: ul.PIRAPPOR(10, e))(jnp.asarray([1.0, 2.0]))


def test_same_law_and_estimate_as_minilek_at_e_eps_equal_q_minus_one(x64):
    d, eps = 20, float(np.log(4.0))  # q = 5, t = 2: minilek's own-bit 1/2 is e^eps / (e^eps + q - 1)
    m = ul.PIRAPPOR(d, eps)
    assert m.q == ref.sizes(d, eps)[0] == 5
    np.testing.assert_allclose(ref.channel(d, eps), ul.channel(m).Q, rtol=1e-12)
    rng = np.random.default_rng(3)
    for x in (0, 13):
        counts = np.bincount([ref.local_randomizer(rng, x, d, eps) for _ in range(4000)], minlength=m.num_outputs)
        assert ul.testing.fits(ul.testing.chi_square(counts, ul.channel(m).Q[x]))
    ys = np.asarray(ul.perturb(jax.random.key(4), m, jnp.asarray(np.arange(400) % d, jnp.int32)))
    ours = np.asarray(ul.estimate(m, jnp.asarray(ys), "emp"), np.float64)
    theirs = np.array([ref.estimate_freq(x, ys, d, eps) for x in range(d)]) / len(ys)
    np.testing.assert_allclose(theirs, ours, rtol=1e-10, atol=1e-12)
    dp = ref.dp_bottom_up(np.bincount(ys, minlength=m.num_outputs), d, eps)
    np.testing.assert_array_equal(np.asarray(dp[:d]), np.asarray(m.aggregate(jnp.asarray(ys))))


def test_minilek_spends_less_than_eps_elsewhere(x64):
    """At eps = 2 both use q = 7; minilek's own bit stays 1/2, so its channel is ln 6-LDP (< 2: budget left
    unused) and its variance is higher than ours, which spends eps (p* = e^2/(e^2 + 6))."""
    d, eps = 8, 2.0
    m = ul.PIRAPPOR(d, eps)
    Qm = ref.channel(d, eps)
    lq = np.log(Qm)
    np.testing.assert_allclose(np.max(lq[:, None, :] - lq[None, :, :]), np.log(m.q - 1.0), rtol=1e-12)
    theirs = (1 / m.q) * (1 - 1 / m.q) / (0.5 - 1 / m.q) ** 2  # n Var at p_x = 0, minilek's alpha, beta
    assert float(ul.theory.pi_rappor_item_nvar(eps, np.eye(d)[1], m.q)[0]) < 0.8 * theirs  # p_0 = 0


@pytest.mark.parametrize("kwargs,match", [
    (dict(d=7, eps=1.0, q=4), "q=4"),
    (dict(d=7, eps=1.0, q=1), "q=1"),
    (dict(d=7, eps=1.0, q=50021), "q=50021"),
    (dict(d=2**20, eps=1.0, q=46337), "2\\^31"),
    (dict(d=1, eps=1.0, q=3), "d=1"),
    (dict(d=7, eps=-1.0, q=3), "eps"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ul.PIRAPPOR(**kwargs)


def test_closed_forms_refuse_bad_arguments():
    with pytest.raises(ValueError, match="q=4"):
        ul.theory.pi_rappor_item_nvar(1.0, np.full(4, 0.25), 4)
    with pytest.raises(ValueError, match="eps"):
        ul.theory.pi_rappor_probs(0.0, 3)
    with pytest.raises(ValueError, match="sum to 1"):
        ul.theory.pi_rappor_item_nvar(1.0, np.full(4, 0.5), 3)


def test_reports_are_checked():
    m = ul.PIRAPPOR(6, 1.0, q=3)
    with pytest.raises(ValueError, match="ys in \\[0, 27\\)"):
        ul.estimate(m, jnp.asarray([0, 27], jnp.int32), "emp")
    with pytest.raises(TypeError, match="ys"):
        ul.estimate(m, jnp.asarray([0.5, 1.0]), "emp")


def test_extreme_eps(x64):
    for eps in (1e-3, 40.0):
        m = ul.PIRAPPOR(6, eps)
        rep = ul.audit(m)
        assert rep.ok and rep.tight
        p = np.random.default_rng(5).dirichlet(np.ones(6))
        stats = ul.channel(m).Q @ ul.theory.support_matrix(m)
        np.testing.assert_allclose(np.asarray(ul.mechanisms.core.debias(m, jnp.asarray(p @ stats), 1.0)), p,
                                   atol=1e-9)
