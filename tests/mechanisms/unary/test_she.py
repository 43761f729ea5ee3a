"""SHE / HE (histogram encoding, Wang et al. 2017 §4.3): the density audit (tight at 2/eps, refusing a smaller
Laplace scale), the sampler's Laplace law, the unbiased estimate and its closed-form variance, the exact counts
law (a scaled difference of Gammas), EM on the exact Laplace likelihood, and pure-LDP's SHE (ported) on the same
reports."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import uldp_jax as ul
from uldp_jax import testing


def test_audit_is_tight_at_the_default_scale_and_refuses_a_smaller_one():
    rep = ul.audit(ul.SHE(5, 2.0))
    assert rep.ok and rep.tight and rep.source == "density" and rep.eps == pytest.approx(2.0, rel=1e-12)
    leaky = ul.SHE(5, 2.0, scale=0.9)  # 2 / 0.9 = 2.22 > 2
    rep = ul.audit(leaky)
    assert not rep.ok and rep.eps == pytest.approx(2 / 0.9, rel=1e-12) and rep.excess > 0
    assert not ul.check(leaky).ok and "audit" in ul.check(leaky).failed
    safer = ul.audit(ul.SHE(5, 2.0, scale=1.5))  # more noise than needed: private, not tight
    assert safer.ok and not safer.tight and safer.eps == pytest.approx(2 / 1.5)
    assert ul.HE(5, 2.0) == ul.SHE(5, 2.0)


def test_density_ratio_supremum_is_attained():
    """The module's bound 2/b from scipy's Laplace log-density: never exceeded, and reached at y_x >= 1, y_x' <= 0."""
    b, d = 0.8, 3
    rng = np.random.default_rng(0)
    y = rng.uniform(-3, 4, size=(20000, d))
    logf = lambda x: stats.laplace.logpdf(y - np.eye(d)[x], scale=b).sum(axis=1)  # noqa: E731
    ratios = logf(0) - logf(1)
    assert ratios.max() <= 2 / b + 1e-12
    corner = (y[:, 0] >= 1) & (y[:, 1] <= 0)
    np.testing.assert_allclose(ratios[corner], 2 / b, rtol=1e-12)
    np.testing.assert_allclose(ul.SHE(d, 2.0, scale=b).density_log_ratios(), np.where(np.eye(d), 0, 2 / b))


def test_sampler_follows_the_laplace_law():
    m = ul.SHE(3, 1.5)
    xs = jnp.asarray(np.repeat(np.arange(3), 4000), jnp.int32)
    ys = np.asarray(m.perturb_batch(jax.random.key(0), xs), np.float64)
    noise = (ys - np.eye(3)[np.asarray(xs)]).ravel()
    edges = np.linspace(-6, 6, 25) * float(m.scale)
    cdf = stats.laplace.cdf(np.concatenate([[-np.inf], edges, [np.inf]]), scale=float(m.scale))
    counts = np.bincount(np.searchsorted(edges, noise), minlength=edges.size + 1)
    assert testing.fits(testing.chi_square(counts, np.diff(cdf)))
    assert not testing.fits(testing.chi_square(counts, np.diff(stats.laplace.cdf(
        np.concatenate([[-np.inf], edges, [np.inf]]), scale=1.1 * float(m.scale)))))


def test_estimate_is_unbiased_with_the_closed_form_variance():
    m = ul.SHE(4, 1.0)
    p = np.array([0.5, 0.25, 0.15, 0.1])
    n = 4000
    xs = jnp.asarray(np.repeat(np.arange(4), (p * n).astype(int)), jnp.int32)
    keys = jax.random.split(jax.random.key(1), 200)
    est = jax.jit(jax.vmap(lambda k: ul.estimate_from_stats(m, m.aggregate(m.perturb_batch(k, xs)), n, "emp")))(keys)
    est = np.asarray(est, np.float64)
    var = np.asarray(ul.theory.item_variance(m, p, n, model="fixed"), np.float64)
    np.testing.assert_allclose(var * n, 2 * 4.0, rtol=1e-6)  # fixed counts: only the Laplace variance 2 b^2
    assert testing.within_se(est.mean(axis=0), p, np.sqrt(var / 200))
    np.testing.assert_allclose(float(ul.theory.mse(m, p, n, model="fixed")), var.sum(), rtol=1e-6)
    np.testing.assert_allclose(float(ul.theory.mse(m, p, n)), var.sum() + (1 - (p**2).sum()) / n, rtol=1e-6)


def test_counts_law_is_the_aggregate_law():
    """``counts().fixed`` and ``reports().sample`` (both n_j + b (G - G')) against aggregating per-user reports:
    two-sample KS per item."""
    m = ul.SHE(3, 2.0)
    counts = jnp.asarray([30.0, 15.0, 5.0])
    xs = jnp.asarray(np.repeat(np.arange(3), [30, 15, 5]), jnp.int32)
    keys = jax.random.split(jax.random.key(2), 3000)
    with jax.enable_x64(True):
        fixed = ul.mechanisms.core._records.counts_of(m).fixed
        a = np.asarray(jax.vmap(lambda k: fixed(k, jnp.asarray(counts, jnp.float64)))(keys))
    b = np.asarray(jax.vmap(lambda k: m.aggregate(m.perturb_batch(jax.random.fold_in(k, 1), xs)))(keys))
    c = np.asarray(jax.vmap(lambda k: ul.mechanisms.core.sample_stats(m, jax.random.fold_in(k, 2), xs, None))(keys))
    for j in range(3):  # the exact counts law and the per-user path's report-free statistic, against the reports
        assert testing.fits(stats.ks_2samp(a[:, j], b[:, j]), alpha=testing.ALPHA / 6)
        assert testing.fits(stats.ks_2samp(c[:, j], b[:, j]), alpha=testing.ALPHA / 6)


def test_em_on_the_laplace_likelihood_is_the_mle():
    """EM's fixed point maximises the exact log-likelihood: no feasible direction on the simplex improves it."""
    m = ul.SHE(3, 2.0)
    xs = jnp.asarray(np.repeat(np.arange(3), [500, 300, 200]), jnp.int32)
    ys = ul.perturb(jax.random.key(3), m, xs)
    p_em = np.asarray(ul.estimate(m, ys, "em"), np.float64)
    y = np.asarray(ys, np.float64)
    L = np.stack([stats.laplace.pdf(y - np.eye(3)[x], scale=1.0).prod(axis=1) for x in range(3)], axis=1)
    grad = L.T @ (1.0 / (L @ p_em))  # KKT: grad_x = n on the support, <= n off it
    np.testing.assert_allclose(grad[p_em > 1e-6], len(y), rtol=1e-3)
    assert np.all(grad[p_em <= 1e-6] <= len(y) * (1 + 1e-3))


def test_bad_inputs_are_refused():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale"):
            ul.SHE(4, 1.0, scale=bad)
    m = ul.SHE(4, 1.0)
    with pytest.raises(TypeError, match="ys"):
        ul.mechanisms.core.check_reports(m, np.zeros((5, 3), np.float32))
    with pytest.raises(ValueError, match="finite"):
        ul.mechanisms.core.check_reports(m, np.full((5, 4), np.nan, np.float32))
    assert ul.mechanisms.core.comm_bits(m) == 32 * 4


# ---- pure-LDP's SHE (HEServer without thresholding), ported: pure-LDP is not in the test extra ----------------
def _pure_ldp_she(noisy):
    """pure-LDP 1.2.0 ``HEServer(use_the=False)``: ``aggregated_data += priv_data``; ``estimate`` returns the sum
    (counts, not frequencies). multi-freq-ldpy 0.2.5 ``HE_Aggregator_MI(use_thresh=False)`` clips the sum at 0 and
    renormalises (a post-processing of the same sum, not the unbiased estimate)."""
    return noisy.sum(axis=0)


def test_pure_ldp_she_is_our_aggregate_times_n():
    m = ul.SHE(5, 1.0)
    xs = jnp.asarray(np.random.default_rng(4).integers(0, 5, 3000), jnp.int32)
    ys = ul.perturb(jax.random.key(4), m, xs)
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "emp")) * 3000, _pure_ldp_she(np.asarray(ys)),
                               rtol=1e-4, atol=1e-2)
