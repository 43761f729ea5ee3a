"""Count-level fast path: exact first two moments against the channel, and agreement with the per-user path.

Thresholds: every comparison is one ``ul.testing.within_se`` check at the suite's per-check level
``ul.testing.ALPHA`` (Bonferroni over the entries compared): sample means against the exact means (SE from the exact
variance over R repetitions), sample covariances against the exact ones (SE of a sample covariance:
sqrt((S_jj S_kk + S_jk^2) / R)), fast-path against per-user moments (SE of the difference). Fixed keys, shifted
by ``--seed-shift`` when measuring false alarms.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import fastpath, testing

R = 600  # one repetition count everywhere: tests share compiled kernels


def _probs(mech):
    """``(P [d, m], is_item)``: channel rows for item mechanisms, P(bit j = 1 | x) for bit mechanisms."""
    if mech.report_kind == "item":
        return np.asarray(ul.channel(mech).Q, np.float64), True
    a, b = (np.asarray(v, np.float64) for v in mech.estimator().affine)
    return b[None, :] + np.diag(a), False


def exact_moments(mech, *, counts=None, p=None, n=None):
    P, is_item = _probs(mech)
    if counts is not None:  # fixed model: a sum over inputs of independent per-user reports
        w = np.asarray(counts, np.float64)
        mean = w @ P
        cov = np.diag(mean) - (P.T * w) @ P if is_item else np.diag(w @ (P * (1 - P)))
        return mean, cov
    p = np.asarray(p, np.float64)  # iid model: n iid users
    f = p @ P
    second = np.zeros((P.shape[1],) * 2) if is_item else (P.T * p) @ P
    np.fill_diagonal(second, f)
    return n * f, n * (second - np.outer(f, f))


def check_moments(stats, mean, cov):
    """Two statistical checks (``ul.testing.within_se``): the sample mean and the sample covariance."""
    stats = np.asarray(stats, np.float64)
    r = stats.shape[0]
    diag = np.maximum(np.diag(cov), 1e-12)
    se = np.sqrt(diag / r)
    assert testing.within_se(stats.mean(0), mean, se), f"mean off by {(np.abs(stats.mean(0) - mean) / se).max():.2f} SE"
    se_cov = np.sqrt((np.outer(diag, diag) + cov**2) / r)
    dev_cov = np.abs(np.cov(stats.T) - cov) / se_cov
    assert testing.within_se(np.cov(stats.T), cov, se_cov), f"covariance off by {dev_cov.max():.2f} SE"


def check_same_law(fast, slow, cov):
    """Fast vs per-user sample moments, two checks: means and covariances within SEs of their differences."""
    r = fast.shape[0]
    diag = np.maximum(np.diag(cov), 1e-12)
    assert testing.within_se(fast.mean(0), slow.mean(0), np.sqrt(2 * diag / r))
    se_cov = np.sqrt(2 * (np.outer(diag, diag) + cov**2) / r)
    assert testing.within_se(np.cov(fast.T), np.cov(slow.T), se_cov)


COUNTS6 = np.array([300, 0, 1200, 50, 7, 443])
FIXED = [
    ul.GRR(6, 1.0),
    ul.OUE(6, 0.5),
    ul.URR(6, [1, 4], 2.0),
    ul.URAP(6, [0, 3], 1.0),
    ul.HR(6, 1.0),
]


@pytest.mark.parametrize("mech", FIXED, ids=lambda m: type(m).__name__)
def test_fixed_model_moments_exact(mech):
    xs = np.repeat(np.arange(6), COUNTS6)
    res = ul.simulate(jax.random.key(0), mech, xs=xs, reps=R, path="counts")
    assert res.stats.dtype == jnp.int32
    check_moments(res.stats, *exact_moments(mech, counts=COUNTS6))


def test_binary_fixed_and_iid_moments_exact():
    mech = ul.BinaryCA(0.7, 2.0)
    counts = np.array([900, 100])
    res = ul.simulate(jax.random.key(1), mech, xs=np.repeat([0, 1], counts), reps=R, path="counts")
    assert np.all(np.asarray(res.stats).sum(1) == 1000)
    check_moments(res.stats, *exact_moments(mech, counts=counts))


P6 = np.array([0.3, 0.0, 0.25, 0.05, 0.1, 0.3])


@pytest.mark.parametrize("mech", [ul.GRR(6, 1.0), ul.URAP(6, [0, 3], 1.0), ul.HR(6, 1.0)],
                         ids=lambda m: type(m).__name__)
def test_iid_model_moments_exact(mech):
    res = ul.simulate(jax.random.key(2), mech, p=P6, n=2500, reps=R, path="counts")
    check_moments(res.stats, *exact_moments(mech, p=P6, n=2500))


@pytest.mark.parametrize("mech,model", [(ul.GRR(6, 1.0), "iid"), (ul.URAP(6, [0, 3], 1.0), "fixed")],
                         ids=["GRR-iid", "URAP-fixed"])
def test_fast_path_matches_per_user_in_distribution(mech, model):
    reps = R
    if model == "iid":
        kw, mean, cov = {"p": P6, "n": 2500}, *exact_moments(mech, p=P6, n=2500)
    else:
        kw, mean, cov = {"xs": np.repeat(np.arange(6), COUNTS6)}, *exact_moments(mech, counts=COUNTS6)
    fast = np.asarray(ul.simulate(jax.random.key(3), mech, reps=reps, path="counts", **kw).stats, np.float64)
    slow = np.asarray(ul.simulate(jax.random.key(4), mech, reps=reps, path="per_user", **kw).stats, np.float64)
    check_same_law(fast, slow, cov)
    check_moments(slow, mean, cov)


def _ss_iid_moments(mech, p, n):
    """Exact iid-model mean and covariance of SS support counts from the channel over all k-subsets."""
    Q = np.asarray(ul.channel(mech).Q, np.float64)
    bits = mech._subsets().astype(np.float64)
    w = p @ Q  # law of one report
    f = w @ bits
    return n * f, n * ((bits.T * w) @ bits - np.outer(f, f))


@pytest.mark.slow
def test_ss_iid_counts_exact_and_match_per_user():
    """SS(6, k=3): own-in users track 2 of 5 labels, own-out users the complement of 3 (both branches)."""
    mech = ul.SS(6, 1.0, k=3)
    assert not fastpath.has_count_path(mech) and fastpath.has_count_path(mech, iid=True)
    mean, cov = _ss_iid_moments(mech, P6, 2500)
    fast = ul.simulate(jax.random.key(5), mech, p=P6, n=2500, reps=R)  # "auto" takes the iid counts path
    assert fast.stats.dtype == jnp.int32 and np.all(np.asarray(fast.stats).sum(1) == 3 * 2500)
    check_moments(fast.stats, mean, cov)
    slow = ul.simulate(jax.random.key(6), mech, p=P6, n=2500, reps=R, path="per_user")
    check_moments(slow.stats, mean, cov)
    with pytest.raises(ValueError, match="iid model"):
        ul.simulate(jax.random.key(0), mech, xs=np.arange(6), path="counts")
    fixed = ul.simulate(jax.random.key(0), mech, xs=np.arange(6), reps=2)  # "auto": per user in the fixed model
    assert np.all(np.asarray(fixed.stats).sum(1) == 18)


def test_ss_iid_counts_large_n_and_windows():
    """n = 10^9 (any n, one scan): totals exact; the per-item means match (d = 40, k = 10, narrow windows)."""
    from uldp_jax.mechanisms.subset import _ss_counts as _ss

    mech = ul.SS(40, 2.0, k=10)
    assert _ss.window_width(40, 10) == 11  # clipped to the k + 1 bins here
    p = np.random.default_rng(1).dirichlet(np.ones(40))
    with jax.enable_x64(True):
        stats = np.asarray(jax.jit(jax.vmap(lambda k: _ss.ss_counts_iid(k, mech, jnp.float64(1e9), jnp.asarray(p))))(
            jax.random.split(jax.random.key(7), 8)))
    assert np.all(stats.sum(1) == 10 * 10**9)
    a, b = (np.asarray(v, np.float64) for v in mech.estimator().affine)
    f = b + a * p
    assert testing.within_se(stats.mean(0), 1e9 * f, np.sqrt(1e9 * f * (1 - f) / 8))


def test_multinomial_exact_moments_and_edges():
    p = np.array([0.5, 0.0, 0.2, 0.3, 0.0])
    ns = np.concatenate([np.full(4000, 1000.0), [1e9 + 7, 0.0]])

    @jax.jit
    def draw(keys, ns):
        multi = jax.vmap(lambda k, n: fastpath.multinomial(k, n, jnp.asarray(p)))(keys, ns)
        edges = fastpath.binomial(keys[0], jnp.array([0.0, 5.0, 5.0, 3e9]), jnp.array([0.3, 1.0, 0.0, 1.0]))
        return multi, edges

    with fastpath.x64_context():
        draws, b = (np.asarray(v) for v in draw(jax.random.split(jax.random.key(5), ns.size), jnp.asarray(ns)))
    big, zero, draws = draws[-2], draws[-1], draws[:-2]
    assert np.all(draws.sum(1) == 1000) and np.all(draws[:, [1, 4]] == 0)
    check_moments(draws, 1000 * p, 1000 * (np.diag(p) - np.outer(p, p)))
    assert big.sum() == 1e9 + 7 and np.all(big == np.round(big)) and np.all(zero == 0)
    np.testing.assert_array_equal(b, [0.0, 5.0, 0.0, 3e9])


def test_large_n_counts_exact_int32():
    n = 2**31 - 1
    res = ul.simulate(jax.random.key(9), ul.GRR(6, 1.0), p=P6, n=n, reps=R, path="counts")
    stats = np.asarray(res.stats, np.int64)
    assert res.stats.dtype == jnp.int32 and np.all(stats.sum(1) == n) and np.all(stats >= 0)
    f = np.asarray(P6 @ ul.channel(ul.GRR(6, 1.0)).Q)
    assert testing.within_se(stats / n, f[None, :], np.sqrt(f * (1 - f) / n)[None, :])


def test_count_dtype_and_overflow():
    assert fastpath.count_dtype(2**31 - 1) == np.int32
    with pytest.raises(ValueError, match="n="):
        fastpath.count_dtype(2**31)
    with pytest.raises(ValueError, match="n="):
        ul.simulate(jax.random.key(0), ul.GRR(6, 1.0), p=P6, n=2**31, path="counts")
    with pytest.raises(ValueError, match="n="):
        ul.simulate(jax.random.key(0), ul.GRR(6, 1.0), p=P6, n=2**31, path="per_user")
    with jax.enable_x64(True):
        assert fastpath.count_dtype(2**40) == np.int64


def test_registry_and_paths_documented():
    for mech in [ul.GRR(4, 1.0), ul.OUE(4, 1.0), ul.RAPPOR(4, 1.0), ul.URR(4, [0], 1.0), ul.URAP(4, [0], 1.0),
                 ul.Warner(1.0), ul.Mangat(1.0), ul.HR(4, 1.0), ul.HighLowHR(4, [0], 1.0),
                 ul.BlockHR([[0, 1], [2, 3]], 1.0)]:
        assert fastpath.has_count_path(mech), type(mech).__name__
    assert not fastpath.has_count_path(ul.SS(4, 1.0)) and not fastpath.has_count_path(ul.OLH(4, 1.0))
    assert fastpath.has_count_path(ul.SS(4, 1.0), iid=True) and not fastpath.has_count_path(ul.OLH(4, 1.0), iid=True)
    for name in ("GRR", "URR", "UE", "URAP", "BinaryCA", "HR", "OLH", "SS", "EM"):
        assert name in fastpath.__doc__
    assert not hasattr(fastpath, "register_count_sampler")  # count samplers are mechanism methods now


def test_multinomial_three_phases_large_domain():
    """d > 1024 uses three splitting phases; totals exact, the 2000 item means match (one budgeted check)."""
    p = np.random.default_rng(0).dirichlet(np.ones(2000))
    with fastpath.x64_context():
        keys = jax.random.split(jax.random.key(13), 200)
        draws = np.asarray(jax.jit(jax.vmap(lambda k, pp: fastpath.multinomial(k, 1e6, pp), (0, None)))(
            keys, jnp.asarray(p)))
    assert np.all(draws.sum(1) == 1e6)
    assert testing.within_se(draws.mean(0), 1e6 * p, np.sqrt(1e6 * p * (1 - p) / 200))


@pytest.mark.slow
def test_counts_path_keeps_every_user_at_large_eps():
    """The fixed model's counts path samples from the exact integer histogram: at eps = 30 (flip probability
    ~1e-12 per user) every repetition returns the users' own histogram, as the per-user path does. Regression:
    ``target * n`` is off by an ulp for some items (55 / 400 * 400 != 55 in float64), and a count of 54.999...
    kept 54 users, moving one user per repetition (GRR, uRR, PUM)."""
    import jax
    import numpy as np

    import uldp_jax as ul

    h = np.array([50, 40, 60, 55, 57, 45, 48, 45])
    xs = np.repeat(np.arange(8), h).astype(np.int32)
    for mech in (ul.GRR(8, 30.0), ul.URR(8, (0, 1, 2), 30.0)):
        for path in ("counts", "per_user"):
            stats = np.asarray(ul.simulate(jax.random.key(0), mech, xs=xs, reps=4, path=path).stats)
            assert np.all(stats == h), (type(mech).__name__, path, stats)
