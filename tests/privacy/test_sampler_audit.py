"""``ul.audit_sampler``: black-box empirical eps lower bounds (issue 50).

Statistics. No-false-alarm checks go through ``uldp_jax.testing.fits`` on the audit's p-value of the claim (one
counted check each at the per-check level ``ALPHA``). Detection checks (a defect must be flagged) are not
false-alarm prone and are not counted; each states the expected bound (its power) beside the assertion.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import uldp_jax as ul
from uldp_jax import _audit_draws, testing
from uldp_jax.privacy import _clopper_pearson as cp
from uldp_jax.privacy import _empirical_eps as emp

from uldp_jax.experiments import _audit_peer_ports as pp


@pytest.fixture(scope="module")
def key():
    return jax.random.key(0)


# ---- the statistics (NumPy) --------------------------------------------------------------------------------------
def test_clopper_pearson_matches_scipy_and_is_conservative():
    k = np.array([0, 1, 5, 50, 5000, 10**6, 3, 10**8 - 5, 10**8])
    n = np.array([10, 10, 100, 1000, 10**5, 10**8, 10**8, 10**8, 10**8])
    for alpha in (1e-2, 1e-9):
        lo, hi = cp.lower(k, n, alpha), cp.upper(k, n, alpha)
        ref_lo = np.where(k > 0, stats.beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)
        ref_hi = np.where(k < n, stats.beta.isf(alpha, k + 1, np.maximum(n - k, 1)), 1.0)
        assert np.all(lo <= ref_lo) and np.all(hi >= ref_hi)  # never anti-conservative
        np.testing.assert_allclose(lo, ref_lo, rtol=3e-4)
        np.testing.assert_allclose(hi, ref_hi, rtol=3e-4)


@pytest.mark.parametrize("bad", [dict(k=-1, n=10), dict(k=11, n=10), dict(k=1.5, n=10), dict(k=1, n=0)])
def test_clopper_pearson_refuses_bad_counts(bad):
    with pytest.raises(ValueError):
        cp.lower(bad["k"], bad["n"], 0.01)
    with pytest.raises(ValueError, match="alpha"):
        cp.upper(1, 10, 1.5)


def test_bound_is_ldp_auditors_formula():
    a, b, n, alpha, delta = 3000, 1200, 10_000, 0.01, 1e-3
    lo = stats.beta.ppf(alpha / 2, a, n - a + 1)
    hi = stats.beta.isf(alpha / 2, b + 1, n - b)
    assert emp.bound(a, n, b, n, alpha, delta) == pytest.approx(math.log((lo - delta) / hi), rel=1e-4)
    assert emp.bound(0, n, b, n, alpha) == -np.inf  # no evidence


def test_select_events_takes_the_likelihood_ratio_level_set():
    # counts proportional to rows of a channel whose ratio is e^2 on outputs {0, 1} and e^-2 on {2, 3}
    a = np.array([[4000, 3000, 500, 2500]])
    b = np.array([[541, 406, 3695, 5358]])
    ev = emp.select_events(a, 10_000, b, 10_000, np.ones(4, bool), 0.01)
    assert ev.mask.tolist() == [[True, True, False, False]]
    only = emp.select_events(a, 10_000, b, 10_000, np.array([False, True, True, True]), 0.01)
    assert not only.mask[0, 0]  # an output outside `allowed` is never taken


def test_core_false_alarm_rate_over_many_replications():
    """1000 independent replications of one GRR pair, as 1000 'pairs' of one vectorised call: the fraction whose
    bound exceeds the true eps stays within 1 - confidence (a binomial test, one counted check)."""
    eps, d, n, reps, alpha = 1.0, 4, 20_000, 1000, 0.1
    Q = np.array([np.exp(eps), 1, 1, 1]) / (np.exp(eps) + d - 1)
    rng = np.random.default_rng(7)
    draw = lambda row: rng.multinomial(n, row, size=reps)  # noqa: E731
    sel_a, sel_b, fr_a, fr_b = draw(Q), draw(np.roll(Q, 1)), draw(Q), draw(np.roll(Q, 1))
    ev = emp.select_events(sel_a, n, sel_b, n, np.ones(d, bool), alpha)
    bounds = emp.event_bounds(ev, fr_a, n, fr_b, n, alpha)
    alarms = int(np.sum(bounds > eps))
    assert testing.fits(stats.binomtest(alarms, reps, alpha, alternative="greater").pvalue)
    assert np.median(bounds) > 0.8 * eps  # the bound is not vacuous at this size (power)


def test_claim_pvalue_is_the_level_where_the_bound_crosses():
    a, b, n = 3000, 1000, 10_000
    p = emp.claim_pvalue(a, n, b, n, claimed=1.0)
    assert 0 < p < 1
    assert emp.bound(a, n, b, n, p * 1.05) > 1.0 >= emp.bound(a, n, b, n, p * 0.9)
    assert emp.claim_pvalue(a, n, b, n, claimed=5.0) == 1.0


# ---- library mechanisms: no false alarms, power ------------------------------------------------------------------
def _library(eps):
    return [ul.GRR(8, eps), ul.OUE(8, eps), ul.SUE(8, eps), ul.SS(8, eps), ul.OLH(8, eps)]


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_library_mechanisms_raise_no_false_alarm(key, eps):
    for i, mech in enumerate(_library(eps)):
        r = ul.audit_sampler(jax.random.fold_in(key, i), mech, trials=400_000, confidence=0.99, progress=False)
        assert r.claimed == pytest.approx(eps)
        assert testing.fits(r.pvalue), (mech, r)
        assert r.ok or r.pvalue <= 0.01


@pytest.mark.slow
@pytest.mark.parametrize("mech,trials,events", [
    (ul.GRR(16, 1.0), 2_000_000, "auto"),  # bound ~0.98 expected at this size
    (ul.SUE(16, 1.0), 2_000_000, "support"),  # ~0.97
    (ul.OUE(64, 1.0), 2_000_000, "auto"),  # support events (64 bits): ~0.97
    (ul.OLH(64, 1.0), 2_000_000, "auto"),  # ~0.96
    (ul.SS(64, 1.0), 2_000_000, "auto"),  # ~0.96
])
def test_bound_reaches_nine_tenths_of_eps(key, mech, trials, events):
    """Power at test sizes (two inputs, a few million reports); the 1e8-trial, all-pairs version is
    experiments/benchmarks/bench_audit.py."""
    r = ul.audit_sampler(key, mech, trials=trials, inputs=(0, 1), events=events, progress=False)
    assert r.eps_lower >= 0.9 * 1.0, r
    assert r.eps_lower <= 1.0 + 1e-9 or testing.fits(r.pvalue)


# ---- flags, with the number --------------------------------------------------------------------------------------
class LeakyGRR(ul.GRR):
    """GRR with an honest channel (``channel_matrix`` is GRR's) and a sampler that keeps the true value more often:
    ``ul.audit`` (exact channel) passes it, only its reports tell."""

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        leak = jax.random.uniform(k1, xs.shape) < 0.2
        return jnp.where(leak, xs, super().perturb_batch(k2, xs))


def test_flags_a_leaky_user_sampler_with_an_honest_channel(key):
    mech = LeakyGRR(4, 1.0)
    assert ul.audit(mech).ok  # the channel is honest
    r = ul.audit_sampler(key, mech, trials=400_000, progress=False)
    # true loss: log((0.2 + 0.8 p) / (0.8 q)) with p = e/(e+3), q = 1/(e+3): about 1.38
    assert not r.ok and r.eps_lower > 1.2, r
    assert "violates the claim at confidence 0.99" in str(r)


@pytest.mark.parametrize("oue", [False, True])
def test_flags_pure_ldp_112_unary_encoding(oue):
    eps, d = 1.0, 8
    r = ul.audit_sampler(jax.random.key(1), pp.pure_ldp_112_ue(eps, d, np.random.default_rng(1), oue), spec=eps, d=d,
                         trials=400_000, inputs=(0, 1), events="support", progress=False)
    # own bit 1 w.p. p + (1 - p) q: the (own=1, other=0) ratio is e^eps (1 + (1 - p) q / p) / (1 - q)... about 1.3-1.6
    assert not r.ok and r.eps_lower > 1.15, r


def test_the_fixed_unary_encoding_passes():
    """pure-LDP 1.2.0's fix (clear the own bit, then set it w.p. p) as the same callable shape: no alarm."""
    eps, d, rng = 1.0, 8, np.random.default_rng(2)
    p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)

    def fixed(x):
        v = (rng.random(d) < 1 - p).astype(np.int8)
        v[x] = rng.random() < p
        return v

    r = ul.audit_sampler(jax.random.key(2), fixed, spec=eps, d=d, trials=200_000, inputs=(0, 1), events="support",
                         progress=False)
    assert testing.fits(r.pvalue), r


def test_flags_pure_ldp_120_rappor():
    f = 0.5
    claimed = pp.rappor_claimed_eps(f)
    r = ul.audit_sampler(jax.random.key(3), pp.pure_ldp_120_rappor(f, 8, np.random.default_rng(3)), spec=claimed, d=8,
                         trials=100_000, inputs=(0, 1), progress=False)
    # a set bit is never cleared: P(bit x' = 0 | x') = 0, no finite eps; the bound grows with the trials
    assert not r.ok and r.eps_lower > claimed + 2, r


@pytest.mark.parametrize("eps,trials,flag_above", [(1.0, 2_500_000, 1.0), (5.0, 400_000, 6.0)])
def test_flags_zitengsun_fast_subset_selection(eps, trials, flag_above):
    k = 16
    fast = pp.zitengsun_ss_fast(eps, k, np.random.default_rng(4))
    r = ul.audit_sampler(jax.random.key(4), fast, spec=eps, d=k, trials=trials, inputs=(0, 1), vectorized=True,
                         events="support", progress=False)
    true = pp.zitengsun_ss_true_eps(eps, k)  # 1.076 and 7.38
    assert not r.ok and flag_above < r.eps_lower <= true + 0.05, (true, r)


# ---- ULDP, approximate LDP, forms of samplers --------------------------------------------------------------------
def test_uldp_audits_the_protected_part_and_invertibility(key):
    mech = ul.URR(5, (0, 2, 3), 1.0)
    r = ul.audit_sampler(key, mech, trials=300_000, progress=False)
    assert r.kind == "uldp" and r.invertible_ok and testing.fits(r.pvalue), r
    assert set(r.event) <= {0, 2, 3}  # protected outputs only

    def leaky(k, xs):  # uRR, but a sensitive input sometimes reports the invertible output 1
        k1, k2 = jax.random.split(k)
        ys = mech.perturb_batch(k2, xs)
        return jnp.where((xs == 0) & (jax.random.uniform(k1, xs.shape) < 0.01), 1, ys)

    bad = ul.audit_sampler(key, leaky, spec=mech.privacy_spec(), d=5, protected=mech.channel_matrix()[1],
                           trials=100_000, progress=False)
    assert not bad.ok and not bad.invertible_ok
    assert (1, (0, 1)) in bad.invertible_breaches


def test_eldp_holds_each_pair_to_its_own_entry(key):
    """E-LDP (004, high-low): only the pairs with a finite entry of ``E`` are tested, each against its entry; a
    sampler that spends more than the claimed matrix allows is flagged with the number."""
    mech = ul.HighLowHR(6, (1, 4), 1.0)
    E = np.asarray(mech.privacy_spec().E)
    r = ul.audit_sampler(key, mech, trials=300_000, progress=False)
    assert r.kind == "hlldp" and testing.fits(r.pvalue), r
    assert np.isfinite(E[tuple(r.pairs.T)]).all() and len(r.pairs) == int(np.isfinite(E).sum() - 6)
    np.testing.assert_array_equal(r.pair_claimed, E[tuple(r.pairs.T)])
    loose = ul.HighLowHR(6, (1, 4), 3.0)  # the same scheme at eps = 3, claimed at eps = 1
    bad = ul.audit_sampler(key, loose.perturb_batch, spec=mech.privacy_spec(), d=6, num_outputs=loose.num_outputs,
                           trials=300_000, progress=False)
    assert not bad.ok and bad.eps_lower > 1.5 and bad.claimed == 1.0, bad
    assert bad.pair[0] in (1, 4)  # a high-privacy input's row is what the claim constrains


def test_a_guarantee_over_other_inputs_is_refused_with_the_remedy(key):
    """A PUM's guarantee is over Z (items and bots), not its d items: the audit says which sampler to audit."""
    pum = ul.mechanisms.examples()["PUM"](1.0)
    with pytest.raises(ValueError, match=r"covers 7 inputs, not its d=5 items.*mech.cmn"):
        ul.audit_sampler(key, pum, trials=1000, progress=False)
    r = ul.audit_sampler(key, pum.cmn, trials=200_000, progress=False)
    assert r.kind == "uldp" and testing.fits(r.pvalue), r


def test_approximate_ldp_reports_eps_delta_pairs(key):
    eps, delta, d = 1.0, 0.02, 4
    grr = ul.GRR(d, eps)

    def leaks_with_delta(k, xs):  # GRR, except that w.p. delta it reports d (only x = 0 can)
        k1, k2 = jax.random.split(k)
        return jnp.where((xs == 0) & (jax.random.uniform(k1, xs.shape) < delta), d, grr.perturb_batch(k2, xs))

    claim = ul.PrivacySpec.ldp(d, eps)
    pure = ul.audit_sampler(key, leaks_with_delta, spec=claim, d=d, num_outputs=d + 1, trials=200_000, progress=False)
    assert not pure.ok  # as pure LDP it violates (output d separates x = 0)
    approx = ul.audit_sampler(key, leaks_with_delta, spec=claim, d=d, num_outputs=d + 1, delta=delta,
                              trials=200_000, progress=False)
    assert testing.fits(approx.pvalue), approx
    assert dict(approx.eps_delta)[delta] == pytest.approx(approx.eps_lower, abs=1e-9)
    assert [dl for dl, _ in approx.eps_delta] == sorted(dl for dl, _ in approx.eps_delta)


def test_three_sampler_forms_agree(key):
    grr = ul.GRR(4, 1.0)
    rng = np.random.default_rng(5)
    p = math.e / (math.e + 3)

    def python_grr(x):
        return x if rng.random() < p else int((x + 1 + rng.integers(3)) % 4)

    forms = [grr, lambda k, xs: grr.perturb_batch(k, xs), python_grr]
    res = [ul.audit_sampler(key, s, spec=None if i == 0 else 1.0, d=None if i == 0 else 4, trials=200_000,
                            inputs=(0, 1), progress=False) for i, s in enumerate(forms)]
    for r in res:
        assert r.events_from == "outputs" and r.trials == 200_000 and r.fresh_trials + r.select_trials == 100_000
        assert 0.7 < r.eps_lower <= 1.0 + 0.05
    assert res[0].eps_lower == res[1].eps_lower  # same key, same reports
    assert abs(res[2].eps_lower - res[0].eps_lower) < 0.15


def test_report_table_and_plot(key):
    r = ul.audit_sampler(key, ul.GRR(4, 1.0), trials=100_000, progress=False)
    text = str(r)
    assert "consistent with the claim" in text and "eps_lower" in text and "claimed" in text
    assert r.pairs.shape == (12, 2) and r.pair_eps.shape == (12,)
    n, e = r.curve
    assert len(n) >= 1 and n[-1] == r.trials and e[-1] == pytest.approx(r.eps_lower) if r.eps_lower > 0 else True
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = r.plot()
    assert ax.get_xlabel() == "reports drawn"


@pytest.mark.parametrize("kwargs,err", [
    (dict(trials=10), ValueError), (dict(confidence=1.5), ValueError), (dict(events="best"), ValueError),
    (dict(inputs=(0,)), ValueError), (dict(inputs=(0, 9)), ValueError), (dict(delta=-0.1), ValueError),
])
def test_bad_arguments_raise(key, kwargs, err):
    with pytest.raises(err):
        ul.audit_sampler(key, ul.GRR(4, 1.0), progress=False, **kwargs)


def test_bad_samplers_raise(key):
    with pytest.raises(TypeError, match="key"):
        ul.audit_sampler(None, ul.GRR(4, 1.0))
    with pytest.raises(TypeError, match="spec"):
        ul.audit_sampler(key, lambda x: x)
    with pytest.raises(TypeError, match="Mechanism"):
        ul.audit_sampler(key, 3, spec=1.0, d=4)
    with pytest.raises(ValueError, match="outside"):
        ul.audit_sampler(key, lambda k, xs: xs + 10, spec=1.0, d=4, trials=1000, progress=False)
    grid = jax.vmap(lambda e: ul.GRR(4, e))(jnp.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="grid"):
        ul.audit_sampler(key, grid)


@pytest.mark.slow
def test_counts_path_follows_the_report_path(key):
    """``path="counts"`` (GRR's exact count sampler) draws the same per-input histograms' law as ``perturb_batch``:
    the bounds agree within their sampling spread and neither alarms."""
    grr = ul.GRR(4, 1.0)
    fast = ul.audit_sampler(key, grr, trials=400_000, inputs=(0, 1), path="counts", progress=False)
    slow = ul.audit_sampler(key, grr, trials=400_000, inputs=(0, 1), progress=False)
    assert fast.trials == slow.trials and abs(fast.eps_lower - slow.eps_lower) < 0.1
    assert testing.fits(fast.pvalue), fast
    with pytest.raises(ValueError, match="count sampler"):
        ul.audit_sampler(key, ul.OUE(4, 1.0), path="counts")
    with pytest.raises(ValueError, match="path"):
        ul.audit_sampler(key, grr, path="fast")


def test_compact_bit_reports_are_expanded_for_the_audit():
    # a sampler may return CompactBits (positions of the ones); the audit reads them as the same dense bits
    bits = jax.random.bernoulli(jax.random.key(0), 0.3, (50, 9))
    np.testing.assert_array_equal(np.asarray(_audit_draws._dense(ul.to_compact(bits))), np.asarray(bits))
    np.testing.assert_array_equal(np.asarray(_audit_draws._dense(bits)), np.asarray(bits))
