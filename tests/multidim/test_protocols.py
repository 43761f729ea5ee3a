"""SPL, SMP and RS+FD: exact audits, sampler vs channel, exact unbiasedness and variance of the marginals, joint."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md
from uldp_jax import testing

CASES = {
    "spl-grr-34": lambda: md.spl(ul.GRR, (3, 4), 1.0),
    "spl-oue-232": lambda: md.spl(ul.OUE, (2, 3, 2), 1.5),
    "spl-sue-34": lambda: md.spl(ul.SUE, (3, 4), 2.0),
    "smp-grr-34": lambda: md.smp(ul.GRR, (3, 4), 1.0),
    "smp-oue-232": lambda: md.smp(ul.OUE, (2, 3, 2), 1.5),
    "rsfd-grr-34": lambda: md.rsfd(ul.GRR, (3, 4), 1.0),
    "rsfd-grr-232": lambda: md.rsfd(ul.GRR, (2, 3, 2), 0.5),
    "rsfd-ouez-232": lambda: md.rsfd(ul.OUE, (2, 3, 2), 1.0, fake="z"),
    "rsfd-suez-34": lambda: md.rsfd(ul.SUE, (3, 2), 2.0, fake="z"),
    "rsfd-ouer-232": lambda: md.rsfd(ul.OUE, (2, 3, 2), 1.0, fake="r"),
    "rsfd-suer-34": lambda: md.rsfd(ul.SUE, (3, 2), 2.0, fake="r"),
}


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("name", CASES)
def test_exact_audit_certifies_the_whole_report(name):
    m = CASES[name]()
    a = ul.audit(m)
    assert a.ok and a.tight, a
    assert a.kind == "ldp"


def test_rsfd_whole_report_is_the_amplified_eps_not_the_papers():
    """Tuples that differ in every attribute reach ratio e^{eps'} on y = x; the paper's eps bounds one attribute."""
    m = md.rsfd(ul.GRR, (3, 4), 1.0)
    a = ul.audit(m)
    assert a.eps == pytest.approx(float(md.amplified_eps(1.0, 2)), rel=1e-9)
    assert m.target_eps == pytest.approx(1.0)
    Q, _ = m.channel_matrix()
    L = np.log(Q)
    x, x1 = md.encode(np.array([[0, 0], [0, 1]]), (3, 4))  # differ in one attribute: above eps for GRR (1.044)
    assert np.max(L[x] - L[x1]) == pytest.approx(1.0442121130212403, rel=1e-9)
    z = md.rsfd(ul.OUE, (3, 2), 1.0, fake="z")  # OUE-z, one attribute apart: exactly eps
    Qz = np.log(z.channel_matrix()[0])
    X = np.stack(np.unravel_index(np.arange(z.d), z.domains), 1)
    one = (X[:, None] != X[None]).sum(-1) == 1
    R = np.max(Qz[:, None, :] - Qz[None, :, :], axis=-1)
    assert R[one].max() == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("name", ["spl-oue-232", "smp-grr-34", "rsfd-grr-232", "rsfd-ouez-232", "rsfd-suer-34"])
def test_sampler_matches_channel(name, key):
    m = CASES[name]()
    for x, k in zip((0, m.d - 1), jax.random.split(key, 2)):
        assert testing.fits(testing.sampler_vs_channel(k, m, x, 30_000))


def test_sampler_check_rejects_a_wrong_channel(key):
    """Power: RS+FD's draws tested against SPL's channel (same report space) must be rejected."""
    m = md.rsfd(ul.GRR, (3, 4), 1.0)
    res = testing.sampler_vs_channel(key, m, 5, 30_000, Q=md.spl(ul.GRR, (3, 4), 1.0).channel_matrix()[0])
    assert not testing.fits(res, alpha=1e-3)


def _per_report(m):
    """g[y]: each attribute's estimate from one report y (n = 1): the estimators are per-user averages."""
    M = m.num_outputs
    eye = jnp.eye(M)
    return [np.asarray(jax.vmap(lambda h: m.marginals(h, 1)[j])(eye)) for j in range(len(m.domains))]


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("smp")])
def test_marginals_exactly_unbiased_and_variance_closed_form(name):
    m = CASES[name]()
    Q, _ = m.channel_matrix()
    p = np.random.default_rng(3).dirichlet(np.ones(m.d))
    pi = p @ Q
    g = _per_report(m)
    ps = md.marginals_of(p, m.domains)
    n = 1000
    var = m.marginal_variance(ps, n)
    for j in range(len(m.domains)):
        mean = pi @ g[j]
        np.testing.assert_allclose(mean, ps[j], atol=1e-10)
        exact = (pi @ g[j] ** 2 - mean**2) / n
        np.testing.assert_allclose(np.asarray(var[j]), exact, rtol=1e-9)


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("smp")])
def test_smp_marginals_unbiased_given_nj_and_variance_at_n_over_k(name):
    m = CASES[name]()
    p = np.random.default_rng(4).dirichlet(np.ones(m.d))
    ps = md.marginals_of(p, m.domains)
    k, n = len(m.domains), 900
    var = m.marginal_variance(ps, n)
    off = 0
    for j, o in enumerate(m.oracles):
        Qj = np.asarray(o.channel_matrix()[0])
        pij = np.asarray(ps[j]) @ Qj  # column law given attribute j was sampled
        h = np.zeros((o.num_outputs, m.num_outputs))
        h[np.arange(o.num_outputs), off + np.arange(o.num_outputs)] = 1.0
        gj = np.asarray(jax.vmap(lambda v: m.marginals(v)[j])(jnp.asarray(h)))
        np.testing.assert_allclose(pij @ gj, ps[j], atol=1e-10)
        np.testing.assert_allclose(np.asarray(var[j]), (pij @ gj**2 - (pij @ gj) ** 2) / (n / k), rtol=1e-9)
        off += o.num_outputs


@pytest.mark.parametrize("name", ["spl-grr-34", "spl-oue-232"])
def test_spl_joint_estimate_exact(name):
    m = CASES[name]()
    Q, _ = m.channel_matrix()
    p = np.random.default_rng(5).dirichlet(np.ones(m.d))
    est = ul.mechanisms.core.debias(m, jnp.asarray(1000 * (p @ Q)), 1000)
    np.testing.assert_allclose(np.asarray(est), p, atol=1e-8)


def test_smp_joint_is_minimum_norm_with_unbiased_marginals():
    m = md.smp(ul.GRR, (3, 4), 1.0)
    Q, _ = m.channel_matrix()
    assert np.linalg.matrix_rank(Q) == 3 + 4 - 1 < m.d  # the joint is not identifiable
    p = np.random.default_rng(6).dirichlet(np.ones(m.d))
    est = np.asarray(ul.mechanisms.core.debias(m, jnp.asarray(1000 * (p @ Q)), 1000))
    for a, b in zip(md.marginals_of(est, m.domains), md.marginals_of(p, m.domains)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-8)


@pytest.mark.parametrize("name", ["spl-grr-34", "rsfd-grr-34", "smp-oue-232"])
def test_simulate_runs_on_the_engine_and_marginals_within_se(name, key):
    m = CASES[name]()
    p = np.random.default_rng(7).dirichlet(np.ones(m.d))
    n = 20_000
    with jax.enable_x64(False), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="SMP's statistic has rank")  # SMP's joint: not identifiable
        res = ul.simulate(key, m, p=p, n=n, reps=2)
    ps = md.marginals_of(p, m.domains)
    var = m.marginal_variance(ps, n)
    for r in range(2):
        est = m.marginals(jnp.asarray(res.stats[r], jnp.float64), n)
        for j in range(len(m.domains)):
            assert testing.within_se(np.asarray(est[j]), np.asarray(ps[j]), np.sqrt(np.asarray(var[j])))


def test_same_key_same_reports_and_different_keys_differ(key):
    m = md.rsfd(ul.GRR, (3, 4), 1.0)
    xs = jnp.arange(12, dtype=jnp.int32).repeat(10)
    a, b = m.perturb_batch(key, xs), m.perturb_batch(key, xs)
    c = m.perturb_batch(jax.random.fold_in(key, 1), xs)
    assert a.dtype == jnp.int32 and a.shape == xs.shape
    np.testing.assert_array_equal(a, b)
    assert (np.asarray(a) != np.asarray(c)).any()
    jit_a = jax.jit(lambda k, v: m.perturb_batch(k, v))(key, xs)
    np.testing.assert_array_equal(a, jit_a)


def test_eps_grid_vmaps_through_the_oracles():
    grid = jax.vmap(lambda e: md.spl(ul.GRR, (3, 4), e).oracles[0].eps)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(grid), [0.5, 1.0])
