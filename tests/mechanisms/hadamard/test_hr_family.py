"""Shared contract of HR, HighLowHR and BlockHR: samplers vs exact channels, audits, unbiasedness, exact risks.

Thresholds: chi-square p-value > 1e-3 for the true channel and < 1e-6 for a wrong-eps channel; Monte Carlo mean
squared l2 loss within 3 standard errors of the exact (iid) risk.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.testing import sampler_vs_channel
from uldp_jax.mechanisms.hadamard import _forms as T

MECHS = {
    "hr6": lambda eps=1.0: ul.HR(6, eps),
    "hr11": lambda eps=0.5: ul.HR(11, eps),
    "hl9": lambda eps=1.0: ul.HighLowHR(9, (1, 4, 6), eps),
    "hl7": lambda eps=2.0: ul.HighLowHR(7, (0, 1, 2, 3), eps),
    "hl_all": lambda eps=0.5: ul.HighLowHR(5, range(5), eps),
    "blk3": lambda eps=1.0: ul.BlockHR([[0, 3], [1, 2, 4, 5, 6], [7]], eps),
    "blk2": lambda eps=0.7: ul.BlockHR([range(4), range(4, 11)], eps),
}


def risk(mech, p, model="iid"):
    if isinstance(mech, ul.HR):
        return T.hr_l2_risk(mech.eps, p, model)
    if isinstance(mech, ul.HighLowHR):
        return T.highlow_hr_l2_risk(mech.eps, p, mech.sensitive, model)
    return T.block_hr_l2_risk(mech.eps, p, mech.blocks, model)


def dirichlet(d, seed):
    return np.random.default_rng(seed).dirichlet(np.ones(d))


@pytest.mark.parametrize("name", sorted(MECHS))
def test_shapes_dtypes_purity(name, key):
    mech = MECHS[name]()
    xs = jnp.arange(200, dtype=jnp.int32) % mech.d
    ys = mech.perturb_batch(key, xs)
    assert ys.shape == (200,) and ys.dtype == jnp.int32
    assert int(ys.min()) >= 0 and int(ys.max()) < mech.num_outputs
    np.testing.assert_array_equal(ys, jax.jit(mech.perturb_batch)(key, xs))  # jit / no-jit
    np.testing.assert_array_equal(ys, mech.perturb_batch(key, xs))  # same key, same draws
    assert np.any(np.asarray(ys) != np.asarray(mech.perturb_batch(jax.random.key(1), xs)))
    y1 = mech.perturb_batch(key, jnp.asarray([2], jnp.int32))
    assert y1.shape == (1,) and y1.dtype == jnp.int32
    st = mech.aggregate(ys)
    assert st.shape == (ul.mechanisms.core.num_stats(mech),) and st.dtype == jnp.int32 and int(st.sum()) == 200
    assert ul.mechanisms.core.comm_bits(mech) == pytest.approx(np.log2(mech.num_outputs))


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name", ["hr6", "hl9", "blk3"])
def test_sampler_vs_channel(name, batched, key):
    mech = MECHS[name]()
    wrong = ul.channel(MECHS[name](eps=1.6)).Q
    for x in range(mech.d):
        k = jax.random.fold_in(key, x)
        assert testing.fits(sampler_vs_channel(k, mech, x, 20000, batched)), x
    assert sampler_vs_channel(key, mech, 0, 20000, batched, Q=wrong).pvalue < 1e-6


@pytest.mark.parametrize("name", sorted(MECHS))
def test_audit_tight_and_misparameterised_fails(name):
    mech = MECHS[name]()
    rep = ul.audit(mech)
    assert rep.ok and rep.tight, rep
    assert rep.kind == {ul.HR: "ldp", ul.HighLowHR: "hlldp", ul.BlockHR: "bsldp"}[type(mech)]
    E = mech.privacy_spec().E
    assert ul.audit(mech, E=E).ok  # same verdict when every output counts as protected
    loose = ul.audit(MECHS[name](eps=float(mech.eps) * 1.2), E=E)
    assert not loose.ok and loose.excess > 0


@pytest.mark.parametrize("name", sorted(MECHS))
def test_estimator_unbiased_exact(name, x64, decoder):
    mech = MECHS[name]()
    Q = ul.channel(mech).Q
    np.testing.assert_allclose(Q @ decoder(mech), np.eye(mech.d), atol=1e-12)


@pytest.mark.parametrize("name", sorted(MECHS))
def test_exact_risk_matches_channel_moments(name, x64, moments):
    mech = MECHS[name]()
    for seed in range(3):
        p = dirichlet(mech.d, seed)
        mean, cov, Q, G = moments(mech, p)
        np.testing.assert_allclose(mean, p, atol=1e-12)
        assert float(risk(mech, p)) == pytest.approx(np.trace(cov), rel=1e-10)
        np.testing.assert_allclose(np.asarray(mech.item_variance(p, 1.0)), np.diag(cov), rtol=1e-10, atol=1e-12)
        # Fixed model: exactly n p(x) users hold x.
        fixed = sum(p[x] * np.trace(G.T @ (np.diag(Q[x]) - np.outer(Q[x], Q[x])) @ G) for x in range(mech.d))
        assert float(risk(mech, p, "fixed")) == pytest.approx(fixed, rel=1e-10)
        # "emp" through the registry uses the same estimator and its variance.
        np.testing.assert_allclose(np.asarray(ul.estimation.empirical_variance(mech, jnp.asarray(p), 1.0)),
                                   np.diag(cov), rtol=1e-10)


@pytest.mark.parametrize("name", ["hl9", "blk3"])  # HR is BlockHR with one block (same code path, same formula)
def test_monte_carlo_risk_within_3se(name, key):
    mech = MECHS[name]()
    p = dirichlet(mech.d, 7)
    n, reps = 2000, 300
    res = ul.simulate(key, mech, p=p, n=n, reps=reps)
    assert res.estimates["emp"].shape == (reps, mech.d)
    loss = np.asarray(ul.metrics.l2sq(res.estimates["emp"], jnp.asarray(p, jnp.float32)), np.float64)
    se = loss.std(ddof=1) / np.sqrt(reps)
    expected = float(risk(mech, p)) / n
    assert testing.within_se(loss.mean(), expected, se, dof=reps - 1), (loss.mean(), expected, se)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hr6", "hl7", "blk2"])
def test_estimate_from_reports_and_fixed_model(name, key):
    mech = MECHS[name]()
    xs = jnp.asarray(np.random.default_rng(0).integers(0, mech.d, 5000), jnp.int32)
    ys = ul.perturb(key, mech, xs)
    direct = np.asarray(ul.estimate(mech, ys, "emp"), np.float64)
    # References independent of debias(aggregate), the path under test (a 15%-biased decoder fails them):
    # stats are the report histogram, and the decoder is linear and unbiased on the exact channel: fed the
    # expected histogram n Q[x] it returns e_x; so the estimate is the histogram times those unit responses.
    Q = ul.channel(mech).Q
    hist = np.bincount(np.asarray(ys), minlength=Q.shape[1])
    np.testing.assert_array_equal(np.asarray(mech.aggregate(ys)), hist)
    emp = ul.estimation.get_method("emp", mech).fn
    with jax.enable_x64(True):
        unit = np.stack([np.asarray(emp(mech, jnp.asarray(Q[x] * 5000), 5000)) for x in range(mech.d)])
        np.testing.assert_allclose(unit, np.eye(mech.d), atol=1e-9)
        # the decoder is affine in the histogram: G[y] = response to one report of output y
        G = np.stack([np.asarray(emp(mech, jnp.asarray(np.eye(Q.shape[1])[y] * 5000.0), 5000))
                      for y in range(Q.shape[1])])
    np.testing.assert_allclose(Q @ G, np.eye(mech.d), atol=1e-9)  # unbiased: sum_y Q(y|x) G[y] = e_x
    np.testing.assert_allclose(direct, hist @ G / 5000, rtol=1e-4, atol=1e-5)
    assert testing.estimate_within_se(mech, direct, np.bincount(np.asarray(xs), minlength=mech.d) / 5000, 5000)
    if name == "blk2":  # the per-user fixed-model path of simulate (one compile is enough)
        res = ul.simulate(key, mech, xs=xs, reps=2)
        assert res.estimates["emp"].shape == (2, mech.d) and res.stats.shape == (2, ul.mechanisms.core.num_stats(mech))


def test_vmapped_eps_grid(key):
    grid = jax.vmap(lambda e: ul.HR(6, e))(jnp.array([0.5, 1.0, 2.0]))
    res = ul.simulate(key, grid, p=np.ones(6) / 6, n=2000, reps=2)
    assert res.estimates["emp"].shape == (3, 2, 6)
    # each grid member gives what that mechanism gives alone from the same stats (the linear decoder by hand:
    # unbiased on the exact channel, G[y] = decoder response to all users reporting y)
    for i, e in enumerate([0.5, 1.0, 2.0]):
        mech = ul.HR(6, e)
        emp = ul.estimation.get_method("emp", mech).fn
        with jax.enable_x64(True):
            G = np.stack([np.asarray(emp(mech, jnp.asarray(np.eye(mech.num_outputs)[y] * 2000.0), 2000))
                          for y in range(mech.num_outputs)])
        want = np.asarray(res.stats[i], np.float64) @ G / 2000
        np.testing.assert_allclose(np.asarray(res.estimates["emp"][i], np.float64), want, rtol=1e-4, atol=1e-5)


def test_large_eps_stable():
    for mech in (ul.HR(6, 50.0), ul.HighLowHR(6, (0, 1), 50.0), ul.BlockHR([[0, 1], [2, 3, 4]], 50.0)):
        run = jax.jit(lambda k, m: ul.mechanisms.core.debias(
            m, m.aggregate(m.perturb_batch(k, jnp.zeros(100, jnp.int32))), 100))
        p_hat = run(jax.random.key(0), mech)
        assert np.all(np.isfinite(np.asarray(p_hat))) and float(p_hat[0]) == pytest.approx(1.0)
    for mech in (ul.HR(6, 1e-3), ul.BlockHR([[0, 1], [2, 3, 4]], 1e-3)):
        assert np.all(np.isfinite(ul.channel(mech).Q)) and ul.audit(mech).ok


@pytest.mark.parametrize("name", sorted(MECHS))
def test_channel_products_match_dense(name, x64):
    """channel_matvec (p Q) and channel_rmatvec (Q w), the structured products EM needs, equal the dense ones."""
    mech = MECHS[name]()
    Q = ul.channel(mech).Q
    rng = np.random.default_rng(0)
    p, w = rng.dirichlet(np.ones(mech.d), size=2), rng.normal(size=(2, mech.num_outputs))
    np.testing.assert_allclose(np.asarray(jax.jit(mech.channel_matvec)(jnp.asarray(p))), p @ Q, atol=1e-14)
    np.testing.assert_allclose(np.asarray(jax.jit(mech.channel_rmatvec)(jnp.asarray(w))), w @ Q.T, atol=1e-13)


def test_estimation_methods_plug_in(key):
    """emp+thr and EM (via channel_matvec/rmatvec) run on HR-family stats and land on the simplex."""
    mech = ul.HighLowHR(8, (0, 3), 1.0)
    stats = mech.aggregate(mech.perturb_batch(key, jnp.arange(20000, dtype=jnp.int32) % 8))
    for m in ("emp+thr", "em"):
        est = np.asarray(jax.jit(lambda st, m=m: ul.estimate_from_stats(mech, st, 20000, m))(stats), np.float64)
        assert est.shape == (8,) and np.all(est >= -1e-6), m
        assert abs(est.sum() - 1.0) < 1e-4 and testing.estimate_within_se(mech, est, np.full(8, 1 / 8), 20000), m
