"""``uldp_jax/mechanisms/hashing/_cms.py``, Apple's count mean sketches CMS and HCMS alike: the exact channel (tight
eps-LDP), Apple's sketch and estimator as pure-LDP computes them (tests/mechanisms/hashing/pure_ldp_cms.py, a port,
checked against pure-LDP where installed), EM's likelihood against the channel, the counts path, GLUTF and bad
arguments. The public hashes: test_sketch.py; the closed-form risks: test_sketch_forms.py; HCMS's own: test_hcms.py.
The conformance suite (tests/test_conformance.py) runs the registered examples as well."""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401

from tests.mechanisms.hashing import pure_ldp_cms as ref

MECHS = {"CMS": ul.CMS, "HCMS": ul.HCMS}
XS = np.repeat(np.arange(6), [60, 10, 45, 5, 40, 40])  # 200 users over d = 6


def _funcs(mech):
    """The mechanism's hash functions as pure-LDP callables (they take ``str(data)`` or an int)."""
    H = mech.hashes()
    return [lambda s, i=i: int(H[i, int(s)]) for i in range(mech.k)]


def _to_pure_ldp(mech, ys):
    """Our reports as pure-LDP's: CMS ``(v in {-1, 1}^m, j)``; HCMS ``(b, j, l)``."""
    if isinstance(mech, ul.CMS):
        return [(2 * np.asarray(b, int) - 1, int(j)) for j, b in zip(np.asarray(ys.row), np.asarray(ys.bits))]
    ys = np.asarray(ys)
    return [(1 - 2 * int(y % 2), int(y // 2 // mech.m), int(y // 2 % mech.m)) for y in ys]


def _column(mech, report):
    """pure-LDP's report as our channel column."""
    if isinstance(mech, ul.CMS):
        v, j = report
        return j * 2**mech.m + int(((np.asarray(v) > 0) << np.arange(mech.m)).sum())
    b, j, l = report
    return 2 * (j * mech.m + l) + int(b < 0)


@pytest.mark.parametrize("name", MECHS)
def test_audit_is_tight_eps_ldp_and_report_bits(name):
    for eps in (1e-3, 1.0, 5.0, 40.0):
        rep = ul.audit(MECHS[name](5, eps, k=3, m=4))
        assert rep.ok and rep.tight and rep.kind == "ldp", (eps, rep)
    for eps in (70.0, 100.0):  # CMS's 2**12-vector bit products underflow: audited on the exact log channel
        rep = ul.audit(MECHS[name](5, eps, k=2, m=12 if name == "CMS" else 16))
        assert rep.ok and rep.tight and rep.eps == pytest.approx(eps, rel=1e-12), (eps, rep)
    bits = ul.mechanisms.core.comm_bits(MECHS[name](100, 1.0, k=8, m=256))
    assert bits == (3 + 256 if name == "CMS" else 3 + 8 + 1)


@pytest.mark.parametrize("name", MECHS)
def test_sketch_and_estimate_are_pure_ldps(name, x64):
    """Our reports into pure-LDP's server (the port): the same sketch matrix, and its count estimate is
    ``apple_estimate`` and ``n`` times ``ul.estimate(..., "emp")``."""
    m = MECHS[name](6, 1.5, k=3, m=8, seed=2)
    ys = ul.perturb(jax.random.key(0), m, jnp.asarray(XS, jnp.int32))
    srv = ref.Server(1.5, _funcs(m), m.m, is_hadamard=name == "HCMS")
    for r in _to_pure_ldp(m, ys):
        srv.aggregate(r)
    np.testing.assert_allclose(np.asarray(m.apple_sketch(ys)), srv.sketch_matrix, rtol=1e-12, atol=1e-9)
    theirs = np.array([srv.estimate(x) for x in range(6)])
    np.testing.assert_allclose(np.asarray(m.apple_estimate(m.apple_sketch(ys), XS.size)), theirs, rtol=1e-10,
                               atol=1e-8)
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "emp")) * XS.size, theirs, rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("name", MECHS)
def test_port_is_pure_ldp(name, monkeypatch):
    """pure-LDP itself, where installed (the ``bench`` extra): its server (whose base class needs a NumPy 1 shim)
    gives the port's sketch and estimates on the same reports, and its client (its global ``random``/``np.random``
    swapped for seeded generators) samples our exact channel."""
    cms = pytest.importorskip("pure_ldp.frequency_oracles.apple_cms")
    client_mod = pytest.importorskip("pure_ldp.frequency_oracles.apple_cms.cms_client")
    server_base = pytest.importorskip("pure_ldp.core._freq_oracle_server")
    monkeypatch.setattr(server_base, "np", ref.NoneShapeNumpy())  # pure-LDP 1.2.0's np.zeros(None) under NumPy 2
    m = MECHS[name](6, 1.5, k=3, m=4, seed=2)
    hadamard = name == "HCMS"
    ys = ul.perturb(jax.random.key(1), m, jnp.asarray(XS, jnp.int32))
    srv = cms.CMSServer(1.5, m.k, m.m, is_hadamard=hadamard)
    srv.hash_funcs = _funcs(m)
    port = ref.Server(1.5, _funcs(m), m.m, is_hadamard=hadamard)
    for r in _to_pure_ldp(m, ys):
        srv.aggregate(r)
        port.aggregate(r)
    np.testing.assert_allclose(srv.sketch_matrix, port.sketch_matrix, rtol=1e-12)
    np.testing.assert_allclose(srv.estimate_all(range(6), suppress_warnings=True),
                               [port.estimate(x) for x in range(6)], rtol=1e-12, atol=1e-9)
    import random

    monkeypatch.setattr(client_mod, "random", random.Random(0))
    monkeypatch.setattr(client_mod, "np", types.SimpleNamespace(full=np.full, random=np.random.RandomState(0)))
    cli = cms.CMSClient(1.5, _funcs(m), m.m, is_hadamard=hadamard)
    x = 2
    counts = np.bincount([_column(m, cli.privatise(x)) for _ in range(6000)], minlength=m.num_outputs)
    assert ul.testing.fits(ul.testing.chi_square(counts, ul.channel(m).Q[x]))


@pytest.mark.parametrize("name", MECHS)
def test_port_client_samples_our_channel(name):
    m = MECHS[name](6, 1.0, k=3, m=4, seed=5)
    rng = np.random.default_rng(0)
    Q = ul.channel(m).Q
    x = 4
    counts = np.bincount([_column(m, ref.privatise(rng, x, 1.0, _funcs(m), m.m, name == "HCMS"))
                          for _ in range(6000)], minlength=m.num_outputs)
    assert ul.testing.fits(ul.testing.chi_square(counts, Q[x]))


@pytest.mark.parametrize("name", MECHS)
def test_em_likelihood_is_the_channels(name, x64):
    """EM's per-report factors are proportional to the channel's column, report by report."""
    m = MECHS[name](5, 1.3, k=3, m=4, seed=1)
    ys = ul.perturb(jax.random.key(2), m, jnp.asarray(np.arange(40) % 5, jnp.int32))
    terms = m.likelihood().report(ys)
    L = np.where(np.asarray(terms.bits), np.asarray(terms.high)[:, None], np.asarray(terms.low)[:, None])
    Qc = ul.channel(m).Q[:, ul.testing.report_index(m, ys)].T  # [n, d]
    np.testing.assert_allclose(L / L[:, :1], Qc / Qc[:, :1], rtol=1e-10)
    est = np.asarray(ul.estimate(m, ys, "em"))
    assert est.shape == (5,) and abs(est.sum() - 1.0) < 1e-6 and np.all(est >= 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", MECHS)
def test_same_risk_as_pure_ldp_within_statistical_error(name):
    """The mean squared error of pure-LDP's pipeline (the port's client and server, R repetitions of the same 200
    users) and of ours (``ul.simulate``, both paths where they exist) are the theory's (given the hashes), each
    one check at the suite's level."""
    m = MECHS[name](6, 1.0, k=3, m=4, seed=5)
    reps, n = 300, XS.size
    truth = np.bincount(XS, minlength=6) / n
    theory = np.asarray(ul.theory.item_variance(m, truth, n, "fixed"), np.float64)
    rng = np.random.default_rng(1)
    sq = []
    for _ in range(reps):
        srv = ref.Server(1.0, _funcs(m), m.m, is_hadamard=name == "HCMS")
        for x in XS:
            srv.aggregate(ref.privatise(rng, int(x), 1.0, _funcs(m), m.m, name == "HCMS"))
        sq.append((np.array([srv.estimate(x) for x in range(6)]) / n - truth) ** 2)
    sq = np.asarray(sq)
    assert ul.testing.within_se(sq.mean(0), theory, sq.std(0, ddof=1) / np.sqrt(reps))
    paths = ("counts", "per_user") if m.counts().fixed is not None else ("per_user",)  # HCMS: iid counts only
    for path in paths:
        ours = np.asarray(ul.simulate(jax.random.key(3), m, xs=XS, reps=reps, methods=("emp",),
                                      path=path).estimates["emp"], np.float64)
        sq = (ours - truth) ** 2
        assert ul.testing.within_se(sq.mean(0), theory, sq.std(0, ddof=1) / np.sqrt(reps)), path


@pytest.mark.slow
@pytest.mark.parametrize("name", MECHS)
def test_counts_and_statistic_samplers_have_the_reports_law(name):
    """The counts path (iid) and the per-user path (CMS draws sketch counts, not n x m bits) give "emp" whose mean
    is the exact expectation given the hashes (a real bias) within its standard error."""
    m = MECHS[name](6, 1.0, k=3, m=4, seed=5)
    p = np.array([0.3, 0.05, 0.2, 0.05, 0.2, 0.2])
    n, reps = 500, 400
    W, c = ul.theory.estimator_matrix(m, "mechanism")
    Q = ul.channel(m).Q
    expected = p @ Q @ W + c
    var = (p @ Q @ W**2 - (p @ Q @ W) ** 2) / n
    assert np.max(np.abs(expected - p)) > 1e-3  # biased given these hashes
    for path in ("counts", "per_user"):
        est = np.asarray(ul.simulate(jax.random.key(4), m, p=p, n=n, reps=reps, methods=("emp",),
                                     path=path).estimates["emp"], np.float64)
        assert ul.testing.within_se(est.mean(0), expected, np.sqrt(var / reps)), path


def test_cms_statistic_sampler_is_aggregate_of_reports():
    m = ul.CMS(40, 2.0, k=5, m=16, seed=3)
    xs = jnp.asarray(np.arange(4000) % 40, jnp.int32)
    ys = m.perturb_batch(jax.random.key(0), xs)
    assert ys.row.shape == (4000,) and ys.bits.shape == (4000, 16) and ys.bits.dtype == jnp.bool_
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), np.asarray(m.support(ys)).sum(0))
    w = jnp.asarray(np.arange(4000) % 3 == 0, jnp.int32)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys, w)), np.asarray(m.support(ys))[np.asarray(w) > 0].sum(0))
    stats = np.asarray(m.reports().sample(jax.random.key(1), xs, None))
    assert stats.shape == (40,) and stats.dtype == np.int32 and 0 <= stats.min() and stats.max() <= 4000


@pytest.mark.parametrize("name", MECHS)
def test_glutf_over_a_sketch(name):
    """Not a pure base (rule="pure" refuses it and says to use eq 10); GLUTF with rule="non_pure" is ULDP, tight."""
    base = MECHS[name](3, 1.0, k=2, m=4)
    assert base.pure() is None
    with pytest.raises(TypeError, match="pure LDP mechanism"):
        ul.glutf(base, 5, (0, 1, 2))
    rep = ul.audit(ul.glutf(base, 5, (0, 1, 2), rule="non_pure"))
    assert rep.ok and rep.tight and rep.kind == "uldp"


def test_jit_and_grid():
    grid = jax.vmap(lambda e: ul.HCMS(5, e, k=3, m=4))(jnp.asarray([0.5, 2.0]))
    assert ul.audit(grid).ok.all()
    r = ul.simulate(jax.random.key(0), jax.vmap(lambda e: ul.CMS(5, e, k=3, m=4))(jnp.asarray([0.5, 2.0])),
                    p=np.full(5, 0.2), n=100, reps=2, methods=("emp",))
    assert r.estimates["emp"].shape == (2, 2, 5)


@pytest.mark.parametrize("name", MECHS)
@pytest.mark.parametrize("kwargs,match", [
    (dict(d=5, eps=1.0, k=0, m=4), "k=0"),
    (dict(d=5, eps=1.0, k=2**17, m=4), "k="),
    (dict(d=5, eps=1.0, k=2, m=1), "m=1"),
    (dict(d=5, eps=1.0, k=2, m=4, seed=-1), "seed=-1"),
    (dict(d=5, eps=1.0, k=2, m=4, seed=2**32), "seed="),
    (dict(d=1, eps=1.0, k=2, m=4), "d=1"),
    (dict(d=5, eps=-1.0, k=2, m=4), "eps"),
    (dict(d=5, eps=float("nan"), k=2, m=4), "eps"),
])
def test_bad_arguments(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        MECHS[name](**kwargs)


def test_bad_arguments_specific():
    with pytest.raises(ValueError, match="m=6 to be a power of 2"):
        ul.HCMS(5, 1.0, k=2, m=6)
    with pytest.raises(TypeError, match="k"):
        ul.CMS(5, 1.0, k=2.0, m=4)
    with pytest.raises(ValueError, match="m=20"):
        ul.channel(ul.CMS(5, 1.0, k=2, m=20))
    with pytest.raises(ValueError, match="ys.row"):
        m = ul.CMS(5, 1.0, k=2, m=4)
        ul.estimate(m, ul.mechanisms.CMSReport(jnp.full(3, 5, jnp.int32), jnp.zeros((3, 4), bool)), "emp")
    with pytest.raises(ValueError, match="ys"):
        ul.estimate(ul.HCMS(5, 1.0, k=2, m=4), jnp.asarray([0, 16], jnp.int32), "emp")
