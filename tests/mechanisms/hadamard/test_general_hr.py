"""General Hadamard response (Acharya, Sun, Zhang 2019, any eps): layout (the block rule:
tests/mechanisms/hadamard/test_general_forms.py), exact channel, audit, sampler against the channel (chi-square
through ``ul.testing``), FWHT decoding against a dense reference, closed-form variance against exact channel moments,
count samplers, reduction to ``HR`` at one block, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.hadamard import _hadamard, _general_forms as forms

CASES = [(5, 1.0, None), (16, 4.0, None), (10, 2.0, 3), (7, 0.3, None), (30, 6.0, None), (9, 3.0, 1)]


def dense_channel(d, eps, B):
    """The paper's channel, entry by entry: 2e/(b c) on C_x (the row's +1 set in x's block), 2/(b c) elsewhere."""
    b = 1
    while B * (b - 1) < d:
        b *= 2
    e, c = np.exp(eps), 2 * B - 1 + np.exp(eps)
    H = _hadamard.hadamard_matrix(b)
    Q = np.empty((d, B * b))
    for x in range(d):
        j, r = divmod(x, b - 1)
        for y in range(B * b):
            in_c = y // b == j and H[r + 1, y % b] > 0
            Q[x, y] = (2 * e if in_c else 2.0) / (b * c)
    return Q


def dense_decode(mech, counts):
    """pure-LDP's decoder with the dense matrix: p_x = 2(c f(C_x) - 1)/(e - 1) - (c f(X_j) - 2)/(e - 1)."""
    e, B, b = np.exp(float(mech.eps)), mech.num_blocks, mech.b
    c = 2 * B - 1 + e
    f = counts / counts.sum()
    Q = dense_channel(mech.d, float(mech.eps), B)
    f_c = (Q > Q.min(axis=1, keepdims=True)).astype(float) @ f  # frequency of C_x
    f_block = f.reshape(B, b).sum(axis=1)[np.arange(mech.d) // (b - 1)]
    return 2 * (c * f_c - 1) / (e - 1) - (c * f_block - 2) / (e - 1)


@pytest.mark.parametrize("d,eps,B", CASES)
def test_channel_is_the_papers_and_audit_is_tight(d, eps, B):
    mech = ul.HadamardResponse(d, eps) if B is None else ul.HadamardResponse(d, eps, num_blocks=B)
    Q = ul.channel(mech).Q
    np.testing.assert_allclose(Q, dense_channel(d, eps, mech.num_blocks), rtol=1e-12)
    rep = ul.audit(mech)
    assert rep.ok and rep.tight and rep.eps == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("d,eps,B", CASES)
def test_fwht_decode_equals_dense_reference(d, eps, B, x64):
    mech = ul.HadamardResponse(d, eps, num_blocks=B) if B else ul.HadamardResponse(d, eps)
    counts = np.random.default_rng(d).integers(0, 50, size=mech.num_outputs)
    np.testing.assert_allclose(np.asarray(ul.mechanisms.core.debias(mech, jnp.asarray(counts), counts.sum())),
                               dense_decode(mech, counts), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("d,eps,B", CASES)
def test_closed_form_variance_and_products_match_channel_moments(d, eps, B, x64, moments):
    mech = ul.HadamardResponse(d, eps, num_blocks=B) if B else ul.HadamardResponse(d, eps)
    p = np.random.default_rng(1).dirichlet(np.ones(d))
    mean, cov, Q, _ = moments(mech, p)
    np.testing.assert_allclose(mean, p, atol=1e-12)  # unbiased
    np.testing.assert_allclose(np.asarray(mech.item_variance(jnp.asarray(p), 1.0)), np.diag(cov), rtol=1e-10)
    risk = float(forms.l2_risk(eps, jnp.asarray(p), mech.num_blocks))
    assert risk == pytest.approx(np.trace(cov), rel=1e-10)
    assert float(ul.theory.mse(mech, p, 1, model="iid")) == pytest.approx(np.trace(cov), rel=1e-8)
    w = np.random.default_rng(2).normal(size=mech.num_outputs)
    np.testing.assert_allclose(np.asarray(mech.channel_matvec(jnp.asarray(p))), p @ Q, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(mech.channel_rmatvec(jnp.asarray(w))), Q @ w, atol=1e-14)


def test_one_block_is_hr(x64):
    """num_blocks = 1 is 004's high-privacy HR: same channel, same estimate, same variance."""
    g, h = ul.HadamardResponse(6, 0.7, num_blocks=1), ul.HR(6, 0.7)
    np.testing.assert_allclose(ul.channel(g).Q, ul.channel(h).Q, rtol=1e-12)
    counts = jnp.asarray(np.random.default_rng(0).integers(0, 30, size=8))
    debias = ul.mechanisms.core.debias
    np.testing.assert_allclose(np.asarray(debias(g, counts, 100)), np.asarray(debias(h, counts, 100)), rtol=1e-12)


@pytest.mark.parametrize("d,eps,B", [(10, 2.0, 3), (16, 4.0, None), (7, 0.3, None)])
def test_sampler_matches_channel(d, eps, B, key):
    mech = ul.HadamardResponse(d, eps, num_blocks=B) if B else ul.HadamardResponse(d, eps)
    for x in (0, d // 2, d - 1):
        res = ul.testing.sampler_vs_channel(jax.random.fold_in(key, x), mech, x, 20000)
        assert ul.testing.fits(res), (x, res)


def test_sampler_rejects_a_wrong_eps(key):
    mech = ul.HadamardResponse(10, 2.0, num_blocks=3)
    wrong = ul.channel(ul.HadamardResponse(10, 2.3, num_blocks=3)).Q
    assert ul.testing.sampler_vs_channel(key, mech, 4, 40000, Q=wrong).pvalue < 1e-6


@pytest.mark.parametrize("model", ["counts", "iid"])
def test_count_samplers_match_the_channel(model, key, x64):
    """The count paths draw the exact report histogram: chi-square of the pooled histogram against n p Q."""
    mech = ul.HadamardResponse(10, 2.0, num_blocks=3)
    counts = jnp.asarray([300, 0, 100, 50, 250, 0, 100, 100, 50, 50], jnp.float64)
    p = counts / counts.sum()
    if model == "counts":
        draw = jax.jit(lambda k: mech.counts().fixed(k, counts))
    else:
        draw = jax.jit(lambda k: mech.counts().iid(k, counts.sum(), p))
    stats = sum(np.asarray(draw(jax.random.fold_in(key, r))) for r in range(20))
    assert stats.sum() == 20 * 1000
    res = ul.testing.chi_square(stats, np.asarray(mech.channel_matvec(p)))
    assert ul.testing.fits(res), res


def test_grid_needs_explicit_blocks():
    with pytest.raises(ValueError, match="num_blocks"):
        jax.vmap(lambda e: ul.HadamardResponse(8, e))(jnp.asarray([1.0, 2.0]))
    grid = jax.vmap(lambda e: ul.HadamardResponse(8, e, num_blocks=4))(jnp.asarray([1.0, 2.0]))
    assert ul.mechanisms.core.grid_shape(grid) == (2,)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(d=1, eps=1.0), ValueError, "d"),
    (dict(d=4.0, eps=1.0), TypeError, "d"),
    (dict(d=4, eps=0.0), ValueError, "eps"),
    (dict(d=4, eps=float("nan")), ValueError, "eps"),
    (dict(d=4, eps=1.0, num_blocks=0), ValueError, "num_blocks"),
    (dict(d=4, eps=1.0, num_blocks=9), ValueError, "num_blocks"),
    (dict(d=4, eps=1.0, num_blocks=2.0), TypeError, "num_blocks"),
])
def test_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ul.HadamardResponse(**kwargs)


def test_bad_reports_and_items(key):
    mech = ul.HadamardResponse(6, 2.0, num_blocks=2)
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.array([0, 6]))
    with pytest.raises(ValueError, match="ys"):
        ul.estimate(mech, jnp.array([0, mech.num_outputs]))


def test_large_eps_is_finite():
    mech = ul.HadamardResponse(20, 100.0, num_blocks=8)
    assert np.all(np.isfinite(np.asarray(mech.item_variance(jnp.full(20, 0.05), 10))))
    assert ul.audit(mech).ok
