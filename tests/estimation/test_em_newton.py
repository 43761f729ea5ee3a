"""Projected Newton on the per-report bit-vector likelihoods (``_em_newton``): it stops on its certificate, the
certificate bounds the log-likelihood still to gain, it reaches the float64 MLE in few passes, and plain EM
steps from its answer gain nothing."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import _em, _em_core, _em_newton, _em_reduced


def _reports(mech, n, seed):
    d = mech.d
    p = np.arange(1, d + 1, dtype=np.float64) ** 2
    p[: d // 4] = 0.0  # items whose MLE is (near) 0
    xs = jax.random.choice(jax.random.key(seed), d, (n,), p=jnp.asarray(p / p.sum())).astype(jnp.int32)
    return ul.perturb(jax.random.key(seed + 1), mech, xs)


def _loglik(mech, ys, p):
    """Float64 mean log-likelihood of RAPPOR's product-Bernoulli model; per-bit rates read off RAPPOR(2)'s channel."""
    q = np.asarray(ul.channel(ul.RAPPOR(2, float(mech.eps))).Q, np.float64)  # columns: bit codes y0 + 2 y1
    keep, flip = q[0, 1] + q[0, 3], q[0, 2] + q[0, 3]  # P(y_x = 1 | x), P(y_j = 1 | x != j)
    bits = np.asarray(ul.to_dense(ys) if isinstance(ys, ul.CompactBits) else ys, np.float64)
    base = np.sum(bits * np.log(flip) + (1 - bits) * np.log(1 - flip), axis=1)
    ratio = np.where(bits > 0, keep / flip, (1 - keep) / (1 - flip))  # P(y | x) / P(y | no bit is x's)
    return float(np.mean(base + np.log(ratio @ (np.asarray(p, np.float64) / np.sum(p)))))


@pytest.mark.parametrize("eps", [pytest.param(0.5, marks=pytest.mark.slow), 4.0])  # 0.5: 12-14 s in full runs
def test_newton_stops_on_its_certificate(eps):
    mech = ul.RAPPOR(24, eps)
    ys = _reports(mech, 20_000, 3)
    p_hat, info = _em.em(mech, ys, return_info=True)
    assert bool(info.converged)
    assert info.gap is not None and float(info.gap) <= _em_newton.default_gap_tol(p_hat.dtype)
    assert int(info.num_evals) < 200  # plain EM needs thousands of passes at eps = 0.5 (rate ~0.99x per step)
    assert float(jnp.min(p_hat)) >= 0.0 and abs(float(jnp.sum(p_hat)) - 1.0) < 1e-5


@pytest.mark.slow
def test_certificate_bounds_the_remaining_gain():
    """At an early iterate (2 steps) the reported gap is >= the float64 log-likelihood still to gain."""
    mech = ul.RAPPOR(16, 1.0)
    ys = _reports(mech, 8_000, 5)
    p_early, early = _em.em(mech, ys, return_info=True, max_iters=2)
    p_mle = _em.em(mech, ys)
    remaining = _loglik(mech, ys, p_mle) - _loglik(mech, ys, p_early)
    assert remaining >= -1e-6
    assert float(early.gap) >= remaining - 1e-6
    assert not bool(early.converged)


@pytest.mark.slow
def test_newton_at_least_plain_em_loglik():
    mech = ul.RAPPOR(24, 1.0)
    ys = _reports(mech, 20_000, 7)
    p_newton = _em.em(mech, ys)
    # plain EM steps started at Newton's answer cannot raise the log-likelihood further (a stationary point)
    p_polished = _em.em(mech, ys, init=p_newton, accelerate=False, max_iters=200, tol=1e-30)
    assert _loglik(mech, ys, p_newton) >= _loglik(mech, ys, p_polished) - 1e-7


@pytest.mark.slow
def test_failed_newton_hands_over_to_squarem():
    """A Hessian model under which every Newton direction fails (not positive definite): after ``MAX_PASSES``
    passes of EM fallbacks ``solve`` hands over to SQUAREM and still lands on the MLE that ``em`` finds."""
    from uldp_jax.estimation import _em_core, _em_reports
    from uldp_jax.estimation._em_packed import packed_gain, packed_grad

    mech = ul.RAPPOR(16, 1.0)
    ys = _reports(mech, 8_000, 11)
    data = _em_reports._pack_dense(mech, ys)
    eps = jnp.asarray(mech.eps, jnp.float32)
    grad, gain = packed_grad(jnp.exp(-eps), data, None, -eps), packed_gain(jnp.exp(-eps), data)
    n = jnp.sum(data.weight) + jnp.sum(data.inverted)
    update = _em_newton.as_update(grad, data.inverted, n)
    p0 = _em_core.start_point(jnp.full(16, 1.0 / 16, jnp.float32))
    p_hat, info = _em_newton.solve(grad, lambda p: -jnp.eye(16, dtype=p.dtype), gain, update, data.inverted, n, p0,
                                   _em_core.REPORT_TOL, 10_000)
    assert bool(info.converged) and int(info.num_evals) > _em_newton.MAX_PASSES
    np.testing.assert_allclose(np.asarray(p_hat), np.asarray(_em.em(mech, ys)), atol=1e-5)
    assert _loglik(mech, ys, p_hat) >= _loglik(mech, ys, _em.em(mech, ys)) - 1e-7


def _census_like(mech, n, seed):
    """Few heavy items, many tiny ones and a block of zeros (001's census proxy has 49 of 400 items at 0)."""
    d = mech.d
    p = 1.0 / np.arange(1, d + 1) ** 1.5
    p[d // 2: d // 2 + d // 8] = 0.0
    p[-d // 4:] *= 1e-3
    xs = jax.random.choice(jax.random.key(seed), d, (n,), p=jnp.asarray(p / p.sum())).astype(jnp.int32)
    return ul.perturb(jax.random.key(seed + 1), mech, xs)


@pytest.fixture(scope="module")
def large_eps_case():
    """RAPPOR(96, 10) on 60,000 census-like reports and the log-likelihood that 3,000 plain EM steps reach: the
    reference costs ~16 s, so both layouts compare against one computation of it."""
    mech = ul.RAPPOR(96, 10.0)
    ys = _census_like(mech, 60_000, 21)
    return mech, ys, _loglik(mech, ys, _em.em(mech, ys, accelerate=False, max_iters=3000, tol=1e-30))


@pytest.mark.parametrize("layout", ["rows", "packed"])
@pytest.mark.slow
def test_large_eps_rappor_converges_on_its_certificate(layout, large_eps_case):
    """RAPPOR at eps = 10 (most reports: the true bit and a few noise bits, so a few reports with all ones on
    tiny items carry much of the curvature): before the exact Hessian products the subsampled model failed
    nearly every trial (census: 431 steps, 1,175 passes, then SQUAREM)."""
    from uldp_jax.estimation import _em_reports

    mech, ys, plain_loglik = large_eps_case
    p_hat, info = _em_reports.em_reports(mech, ys, layout=layout)
    assert bool(info.converged) and float(info.gap) <= _em_newton.default_gap_tol(p_hat.dtype)
    assert int(info.num_steps) <= 15 and int(info.num_evals) <= 120  # no hand-over to SQUAREM
    assert _loglik(mech, ys, p_hat) >= plain_loglik - 1e-7


@pytest.mark.slow
def test_gradient_pass_sums_without_drift():
    """The float32 gradient of RAPPOR at eps = 10 (most reports of the top item have the same ``1/D``) is within
    1e-6 relative of float64's: a plain float32 scatter-add drifted by ~3e-5 at 2e5 reports, more than the
    certificate's 1e-6."""
    from uldp_jax.estimation import _em_reports
    from uldp_jax.estimation._em_packed import packed_grad
    from uldp_jax.estimation._em_passes import support_grad

    d, eps, n = 32, 10.0, 200_000
    mech = ul.RAPPOR(d, eps)
    ys = _census_like(mech, n, 31)
    p = np.asarray(_em.em(mech, ys), np.float64)
    bits = np.asarray(ys, np.float64)
    t = np.exp(-eps)
    lik = t + (1 - t) * bits
    g64 = (1.0 / (lik @ p)) @ lik
    t32 = jnp.exp(-jnp.float32(eps))
    for grad in (support_grad(t32, _em_reports.to_support(mech, ys, layout="rows"), None, -jnp.float32(eps)),
                 packed_grad(t32, _em_reports._pack_dense(mech, ys), None, -jnp.float32(eps))):
        g32, _ = grad(jnp.asarray(p, jnp.float32))
        assert np.max(np.abs(np.asarray(g32, np.float64) - g64) / g64) < 1e-6


def test_urap_newton_on_the_sensitive_items_and_the_non_sensitive_total():
    """uRAP: every product-part report sees only the non-sensitive items' total, so the MLE splits that total in
    proportion to the invertible counts ``N_x`` (exactly 0 where ``N_x = 0``), and Newton runs on the ``s + 1``
    reduced coordinates (``_em_reduced``). At eps = 0.1 with many sensitive items the Hessian is ill-conditioned:
    Newton with its forcing term converges on its certificate instead of handing over to SQUAREM."""
    d, s, n = 400, 120, 20_000
    mech = ul.URAP(d, list(range(s)), 0.1)
    p = np.arange(1, d + 1, dtype=np.float64) ** -1.0
    xs = jax.random.choice(jax.random.key(11), d, (n,), p=jnp.asarray(p / p.sum())).astype(jnp.int32)
    ys = ul.perturb(jax.random.key(12), mech, xs)
    p_hat, info = _em.em(mech, ys, return_info=True)
    assert bool(info.converged) and float(info.gap) <= _em_newton.default_gap_tol(p_hat.dtype)
    assert int(info.num_evals) < _em_newton.MAX_PASSES  # Newton's own certificate, no SQUAREM hand-over
    bits = np.asarray(ys)
    inv = bits[:, s:].sum(0).astype(np.float64)  # non-sensitive bits: each identifies its user's item
    est = np.asarray(p_hat, np.float64)
    assert np.all(est[s:][inv == 0] == 0.0)
    np.testing.assert_allclose(est[s:], est[s:].sum() * inv / inv.sum(), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("kind, layout", [("RAPPOR", "rows"), ("uRAP", "columns")])
@pytest.mark.slow
def test_row_passes_equal_the_gathering_passes(kind, layout):
    """``_em_passes.support_rows`` (``_em_newton.RowPasses``): the gain gathers only the step and returns every
    report's ``s_i`` at ``p_b``, equal to gathering ``p_b`` afresh; the gradient and the model at given rows equal
    those that gather; and Newton with them takes the same steps to the same MLE as without."""
    from uldp_jax.estimation import _em_hessian, _em_reports, _threshold
    from uldp_jax.estimation._em_passes import support_gain, support_grad, support_pass, support_rows

    d, eps = 16, 2.0
    mech = ul.RAPPOR(d, eps) if kind == "RAPPOR" else ul.URAP(d, list(range(10)), eps)
    rep = _em_reports.to_support(mech, _reports(mech, 3000, 5), layout=layout)
    t = jnp.exp(-jnp.float32(eps))
    rows = support_rows(t, rep, None, -jnp.float32(eps))
    rng = np.random.default_rng(0)
    p_a = rng.dirichlet(np.ones(d))
    p_a[2] = 0.0
    p_a, p_b = jnp.asarray(p_a / p_a.sum(), jnp.float32), jnp.asarray(rng.dirichlet(np.ones(d)), jnp.float32)
    g_a, l_a, r_a = rows.grad(p_a, None)
    g_ref, l_ref = support_grad(t, rep, None, -jnp.float32(eps))(p_a)
    np.testing.assert_array_equal(np.asarray(g_a), np.asarray(g_ref))
    assert float(l_a) == float(l_ref)
    change, r_b = rows.gain(p_a, p_b, r_a)
    np.testing.assert_allclose(float(change), float(support_gain(t, rep)(p_a, p_b)), rtol=1e-5)
    _, _, r_fresh = rows.grad(p_b, None)
    np.testing.assert_allclose(np.asarray(r_b), np.asarray(r_fresh), rtol=0, atol=1e-6)
    g_b, l_b, kept = rows.grad(p_b, r_b)
    assert kept is r_b
    g_fresh, l_fresh = support_grad(t, rep, None, -jnp.float32(eps))(p_b)
    np.testing.assert_allclose(np.asarray(g_b), np.asarray(g_fresh), rtol=2e-5)
    np.testing.assert_allclose(float(l_b), float(l_fresh), rtol=1e-5)
    hvp, model = _em_hessian.hessian_of(t, support_pass(rep))
    m_rows, m_fresh = model(p_b, r_b), model(p_b)
    np.testing.assert_allclose(np.asarray(m_rows.a), np.asarray(m_fresh.a), rtol=2e-5)
    np.testing.assert_allclose(float(m_rows.c0), float(m_fresh.c0), rtol=2e-5)
    # Newton with and without the rows (float32 throughout): the same number of steps and the same answer
    grad, gain = support_grad(t, rep, None, -jnp.float32(eps)), support_gain(t, rep)
    n = jnp.sum(rep.weight) + jnp.sum(rep.inverted)
    p0 = _em_core.start_point(_threshold.empirical_threshold(mech, rep.stats.astype(jnp.float32), n, 0.05))
    hessian = (hvp, model)
    if kind == "RAPPOR":
        update = _em_newton.as_update(grad, rep.inverted, n)
        solve = functools.partial(_em_newton.solve, grad, None, gain, update, rep.inverted, n, p0, 1e-9, 200, hessian)
    else:
        solve = functools.partial(_em_reduced.solve, grad, None, gain, jnp.arange(10), rep.inverted, n, p0, 1e-9,
                                  200, hessian)
    with_rows, without = jax.jit(lambda: solve(None, rows))(), jax.jit(lambda: solve(None, None))()
    for _, info in (with_rows, without):  # converged on Newton's certificate, no hand-over to SQUAREM
        assert bool(info.converged) and int(info.num_evals) < 200, info
    assert abs(int(with_rows[1].num_steps) - int(without[1].num_steps)) <= 1
    np.testing.assert_allclose(np.asarray(with_rows[0]), np.asarray(without[0]), rtol=0, atol=1e-5)


@pytest.mark.parametrize("form", ["support", "rows", "packed", "dense"])
def test_gain_of_a_step_that_revives_items(form):
    """The precise gain counts reports whose ones all lie on items at 0 (``s = 0``): a step that gives those
    items mass raises their ``D`` from ``t * total`` by ``(1 - t) ds``. It used to take their ratio as that of
    the totals, so reviving an item looked like a loss and Newton stalled (uRAP at eps = 10 on the Foursquare
    proxy: 40 failed steps, then SQUAREM 2.5e-4 nats per report short of the MLE). Against float64 directly."""
    from uldp_jax.estimation import _em_reports
    from uldp_jax.estimation._em_passes import dense_gain, support_gain, support_rows

    d, eps = 8, 10.0
    mech = ul.RAPPOR(d, eps)
    ys = _reports(mech, 4000, 41)
    p_a = np.arange(1, d + 1, dtype=np.float64)
    p_a[[0, 1, 6]] = 0.0  # items 0, 1 (p = 0 in _reports' truth too) and 6 (most users): their reports have s = 0
    p_b = p_a.copy()
    p_b[[0, 6]] = [0.5, 3.0]
    p_a, p_b = p_a / p_a.sum(), p_b / p_b.sum()
    t = jnp.exp(-jnp.float32(eps))
    pa, pb = jnp.asarray(p_a, jnp.float32), jnp.asarray(p_b, jnp.float32)
    if form in ("support", "rows"):
        rep = _em_reports.to_support(mech, ys, layout="rows")
        if form == "support":
            gain = float(support_gain(t, rep)(pa, pb))
        else:
            rows = support_rows(t, rep, None, -jnp.float32(eps))
            gain = float(rows.gain(pa, pb, rows.grad(pa, None)[2])[0])
    elif form == "packed":
        from uldp_jax.estimation._em_packed import packed_gain
        gain = float(packed_gain(t, _em_reports._pack_dense(mech, ys))(pa, pb))
    else:
        bits = jnp.asarray(np.asarray(ys), bool)
        gain = float(dense_gain(t, bits, jnp.ones(bits.shape[0]), jnp.zeros(d), 1000)(pa, pb))
    exact = _loglik(mech, ys, p_b) - _loglik(mech, ys, p_a)
    assert exact > 1.0  # the revived items' reports dominate: a large gain
    np.testing.assert_allclose(gain, exact, rtol=1e-4)
