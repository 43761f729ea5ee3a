"""``uldp_jax/multidim/_rsfd.py``: RS+FD's whole report costs the amplified eps (not the paper's), its sampler is
rejected against SPL's channel and is reproducible by key; and cross-checks against multi-freq-ldpy (Arcolezi et
al.): same estimators, same closed-form variances (SPL and SMP on GRR too).

The peer clips at 0 and renormalises (its ``*_MI`` aggregators); ours are the unbiased estimates, so the peer's
output is compared with ours after that same post-processing. ``_ref_*`` port the peer's formulas
(``mdim_freq_est/RSpFD_solution.py``, ``Variance_RSpFD.py``) so CI, which lacks the peer, still checks them.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md
from uldp_jax import testing

DOMAINS, EPS = (3, 4, 2), 1.0
PEER = "multi_freq_ldpy.{}".format("mdim_freq_est")  # spelled so: the docs checker reads ".md" as a page link


def _ref_rspfd_grr(count, n, k_att, d_j, eps):
    """Peer's RSpFD_GRR_Aggregator before clipping (its ``d`` is our ``k``, its ``k`` our ``d_j``)."""
    amp = np.log(k_att * (np.exp(eps) - 1) + 1)
    p = np.exp(amp) / (np.exp(amp) + d_j - 1)
    q = (1 - p) / (d_j - 1)
    return (count * k_att * d_j - n * (k_att - 1 + q * d_j)) / (n * d_j * (p - q))


def _ref_var_grr(p, q, d_j, k_att, n, f):
    sig = (1 / k_att) * (q + f * (p - q) + (k_att - 1) / d_j)
    return k_att**2 * sig * (1 - sig) / (n * (p - q) ** 2)


def _ref_var_ue_zero(p, q, k_att, n, f):
    sig = (1 / k_att) * (k_att * q + f * (p - q))
    return k_att**2 * sig * (1 - sig) / (n * (p - q) ** 2)


def _post(est):
    est = np.clip(np.asarray(est, np.float64), 0, None)
    return est / est.sum()


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _flat(m, cols):
    """Flat report index of per-attribute channel columns ``cols: int[n, k]``."""
    sizes = [o.num_outputs for o in m.oracles]
    strides = np.cumprod([1] + sizes[::-1])[:-1][::-1]
    return np.asarray(cols) @ strides


def test_rsfd_grr_estimator_matches_the_ported_reference():
    m = md.rsfd(ul.GRR, DOMAINS, EPS)
    xs = md.encode(np.random.default_rng(0).integers(0, DOMAINS, (2000, 3)), DOMAINS)
    ys = m.perturb_batch(jax.random.key(0), jnp.asarray(xs))
    ours = md.marginals(m, ys)
    parts = md.decode(ys, DOMAINS)
    for j, d_j in enumerate(DOMAINS):
        count = np.bincount(np.asarray(parts[j]), minlength=d_j)
        np.testing.assert_allclose(np.asarray(ours[j]), _ref_rspfd_grr(count, 2000, 3, d_j, EPS), rtol=1e-9)


@pytest.mark.parametrize("oracle,fake", [(ul.GRR, "r"), (ul.OUE, "z"), (ul.SUE, "z")])
def test_rsfd_variance_matches_the_ported_reference(oracle, fake):
    m = md.rsfd(oracle, DOMAINS, EPS, fake=fake)
    fs = [np.random.default_rng(j).dirichlet(np.ones(d)) for j, d in enumerate(DOMAINS)]
    var = m.marginal_variance(fs, 1000)
    for j, (o, f) in enumerate(zip(m.oracles, fs)):
        p, q = (float(v) for v in o.pure_probs()[:2])
        ref = _ref_var_grr(p, q, o.d, 3, 1000, f) if fake == "r" else _ref_var_ue_zero(p, q, 3, 1000, f)
        np.testing.assert_allclose(np.asarray(var[j]), ref, rtol=1e-9)


@pytest.mark.slow  # ~11 s on a loaded 2-core machine (engine compile + 96 repetitions)
def test_rsfd_grr_simulated_mse_within_se_of_the_closed_form():
    m = md.rsfd(ul.GRR, DOMAINS, EPS)
    p = np.random.default_rng(1).dirichlet(np.ones(m.d))
    n, reps = 2000, 96
    with jax.enable_x64(False):
        stats, _, _ = ul.simulate_stats(jax.random.key(3), m, p=p, n=n, reps=reps)  # the engine's statistic only
    ps = md.marginals_of(p, DOMAINS)
    var = m.marginal_variance(ps, n)
    est = jax.vmap(lambda s: m.marginals(s, n))(jnp.asarray(stats, jnp.float64))
    for j in range(3):
        sq = np.sum((np.asarray(est[j]) - np.asarray(ps[j])) ** 2, axis=1)  # squared error per repetition
        assert testing.within_se(sq.mean(), float(np.sum(var[j])), sq.std(ddof=1) / np.sqrt(reps))


# ---- against the installed peer -----------------------------------------------------------------------------------

def _peer_reports(client, xs, *args):
    np.random.seed(0)  # the peer draws from NumPy's global generator: seeded here, in the test only
    return [client(list(x), list(DOMAINS), 3, EPS, *args) for x in xs]


def _ue_cols(vecs):
    return np.asarray([int(np.dot(np.asarray(v, int), 1 << np.arange(len(v)))) for v in vecs])


@pytest.mark.parametrize("variant", ["grr", "oue-z", "oue-r", "sue-z"])
def test_rsfd_same_estimates_as_the_peer_on_its_reports(variant):
    sol = pytest.importorskip(f"{PEER}.RSpFD_solution")
    xs = np.random.default_rng(2).integers(0, DOMAINS, (1500, 3))
    oracle, fake = {"grr": (ul.GRR, "r"), "oue-z": (ul.OUE, "z"), "oue-r": (ul.OUE, "r"),
                    "sue-z": (ul.SUE, "z")}[variant]
    m = md.rsfd(oracle, DOMAINS, EPS, fake=fake)
    if variant == "grr":
        rep = _peer_reports(sol.RSpFD_GRR_Client, xs)
        peer = sol.RSpFD_GRR_Aggregator_MI(rep, list(DOMAINS), 3, EPS)
        cols = np.asarray(rep)
    else:
        client = sol.RSpFD_UE_zero_Client if fake == "z" else sol.RSpFD_UE_rnd_Client
        agg = sol.RSpFD_UE_zero_Aggregator_MI if fake == "z" else sol.RSpFD_UE_rnd_Aggregator_MI
        optimal = variant.startswith("oue")
        rep = _peer_reports(client, xs, optimal)
        peer = agg(rep, list(DOMAINS), 3, EPS, optimal)
        cols = np.stack([_ue_cols([r[j] for r in rep]) for j in range(3)], 1)
    ys = jnp.asarray(_flat(m, cols), jnp.int32)
    for ours, theirs in zip(md.marginals(m, ys), peer):
        np.testing.assert_allclose(_post(ours), np.asarray(theirs, np.float64), rtol=1e-9, atol=1e-12)


def test_rsfd_same_variances_as_the_peer():
    var_mod = pytest.importorskip(f"{PEER}.Variance_RSpFD")
    for oracle, fake, ref in [(ul.GRR, "r", "grr"), (ul.OUE, "z", "z"), (ul.OUE, "r", "r")]:
        m = md.rsfd(oracle, DOMAINS, EPS, fake=fake)
        for o, v in zip(m.oracles, m.marginal_variance([np.full(d, 0.3) for d in DOMAINS], 777)):
            p, q = (float(t) for t in o.pure_probs()[:2])
            theirs = {"grr": lambda: var_mod.VAR_RSpFD_GRR(p, q, o.d, 3, 777, 0.3),
                      "z": lambda: var_mod.VAR_RSpFD_UE_zero(p, q, 3, 777, 0.3),
                      "r": lambda: var_mod.VAR_RSpFD_UE_rnd(p, q, o.d, 3, 777, 0.3)}[ref]()
            np.testing.assert_allclose(np.asarray(v), theirs, rtol=1e-9)


@pytest.mark.parametrize("proto", ["spl", "smp"])
def test_spl_smp_grr_same_estimates_as_the_peer(proto):
    mod = pytest.importorskip(f"{PEER}.{proto.upper()}_solution")
    xs = np.random.default_rng(3).integers(0, DOMAINS, (1500, 3))
    client = getattr(mod, f"{proto.upper()}_GRR_Client")
    agg = getattr(mod, f"{proto.upper()}_GRR_Aggregator_MI")
    rep = _peer_reports(client, xs)
    peer = agg(rep, list(DOMAINS), 3, EPS)
    m = getattr(md, proto)(ul.GRR, DOMAINS, EPS)
    if proto == "spl":
        ys = _flat(m, np.asarray(rep))
    else:
        offs = np.concatenate([[0], np.cumsum(DOMAINS)[:-1]])
        ys = np.asarray([offs[a] + v for a, v in rep])
    for ours, theirs in zip(md.marginals(m, jnp.asarray(ys, jnp.int32)), peer):
        np.testing.assert_allclose(_post(ours), np.asarray(theirs, np.float64), rtol=1e-9, atol=1e-12)


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


def test_sampler_check_rejects_a_wrong_channel(key):
    """Power: RS+FD's draws tested against SPL's channel (same report space) must be rejected."""
    m = md.rsfd(ul.GRR, (3, 4), 1.0)
    res = testing.sampler_vs_channel(key, m, 5, 30_000, Q=md.spl(ul.GRR, (3, 4), 1.0).channel_matrix()[0])
    assert not testing.fits(res, alpha=1e-3)


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
