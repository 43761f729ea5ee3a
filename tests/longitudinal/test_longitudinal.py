"""Memoized longitudinal protocols (issue 52, second half): samplers against the exact two-stage channel, the
per-round estimator against the exact moments, privacy over tau (exact against closed form and brute force), the
ULDP audit of memoized uRR/uRAP, the MAP attack against its exact value, and bad inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from uldp_jax import longitudinal as lg
from uldp_jax import testing

D = 4
PROTOCOLS = {
    "L-GRR": lambda: lg.LGRR(D, 2.0, 1.0),
    "L-SUE": lambda: lg.l_sue(D, 2.0, 1.0),
    "L-OUE": lambda: lg.l_oue(D, 2.0, 1.0),
    "L-OSUE": lambda: lg.l_osue(D, 2.0, 1.0),
    "L-SOUE": lambda: lg.l_soue(D, 2.0, 1.0),
    "L-uRR": lambda: lg.LURR(D, (0, 1), 2.0, 1.0),
    "L-uRAP": lambda: lg.LURAP(D, (0, 1), 2.0, 1.0),
}
ITEM = ("L-GRR", "L-uRR")


@pytest.mark.parametrize("name", ITEM)
def test_two_rounds_follow_the_memoized_channel(name):
    """Item reports of rounds 0 and 1 of one fixed value, jointly: the law sum_z PRR[x, z] IRR[z, y0] IRR[z, y1]
    (the memo shared across rounds), by chi-square; and the law of fresh draws per round (no memo) is rejected."""
    mech = PROTOCOLS[name]()
    n, x = 40_000, 1
    ys, _ = lg.sample_reports(jax.random.key(3), mech, lg.fixed_values(np.full(n, x), 2, D))
    ys = np.asarray(ys)
    observed = np.bincount(ys[0] * D + ys[1], minlength=D * D)
    prr, irr = mech.perm_channel(), mech.irr_channel()
    joint = np.einsum("z,zy,zw->yw", prr[x], irr, irr).reshape(-1)
    assert testing.fits(testing.chi_square(observed, joint))
    one = mech.round_channel()[x]
    assert not testing.fits(testing.chi_square(observed, np.outer(one, one).reshape(-1)), alpha=1e-3)


def test_users_memos_are_independent():
    """Users 2k and 2k + 1 hold one value: their round-0 reports are independent draws of the one-round channel
    (a memo key shared between users would tie their permanent responses), by chi-square on the pairs."""
    mech = PROTOCOLS["L-GRR"]()
    n, x = 80_000, 2
    ys, _ = lg.sample_reports(jax.random.key(8), mech, lg.fixed_values(np.full(n, x), 1, D))
    pairs = np.asarray(ys)[0].reshape(-1, 2)
    observed = np.bincount(pairs[:, 0] * D + pairs[:, 1], minlength=D * D)
    one = mech.round_channel()[x]
    assert testing.fits(testing.chi_square(observed, np.outer(one, one).reshape(-1)))


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_estimator_is_exactly_unbiased_and_its_variance_is_the_channels(name):
    """For a fixed population: the estimate of the exact mean support counts is the true frequency, and the
    closed-form variance equals the exact per-round count variance scaled by the estimator (float64, 1e-10)."""
    mech = PROTOCOLS[name]()
    counts_of = np.array([5, 1, 3, 11])
    n = int(counts_of.sum())
    mean, var = lg.round_moments(mech, counts_of)
    f = counts_of / n
    np.testing.assert_allclose(np.asarray(lg.estimate_rounds(mech, mean[None], n), np.float64)[0], f, atol=1e-5)
    ps, qs = (np.asarray(v, np.float64) for v in mech.pstar_qstar())
    np.testing.assert_allclose(lg.variance_rounds(mech, f, n), var / (n * (ps - qs)) ** 2, rtol=1e-10)


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_simulated_round_counts_match_the_exact_moments(name):
    """``simulate_counts`` over 3 rounds of a fixed population: every round's support counts within SE of the exact
    mean (one budgeted check per protocol)."""
    mech = PROTOCOLS[name]()
    counts_of = np.array([3000, 1000, 2000, 4000])
    x0 = np.repeat(np.arange(D), counts_of)
    counts = np.asarray(lg.simulate_counts(jax.random.key(7), mech, lg.fixed_values(x0, 3, D)), np.float64)
    mean, var = lg.round_moments(mech, counts_of)
    assert counts.shape == (3, mech.m)
    assert testing.within_se(counts, np.broadcast_to(mean, counts.shape), np.sqrt(np.broadcast_to(var, counts.shape)))


@pytest.mark.parametrize("name", ["L-GRR", "L-SUE", "L-OUE", "L-OSUE", "L-SOUE", "L-uRR"])
def test_privacy_over_tau_exact_equals_closed_form_and_brute_force(name):
    """One report costs eps_1; tau reports of one value cost the closed form, which rises with tau and stays
    below eps_perm; the histogram enumeration equals every sequence enumerated."""
    mech = PROTOCOLS[name]()
    eps = [lg.sequence_eps(mech, tau) for tau in (1, 2, 3)]
    assert eps[0] == pytest.approx(mech.eps_1, abs=1e-9)
    for tau, e in zip((1, 2, 3), eps):
        assert e == pytest.approx(float(mech.closed_form_eps(tau)), abs=1e-8)
        assert e == pytest.approx(lg.brute_force_eps(mech, tau), abs=1e-8)
    assert eps[0] < eps[1] < eps[2] < mech.eps_perm
    assert float(mech.closed_form_eps(200)) == pytest.approx(mech.eps_perm, abs=1e-6)


@pytest.mark.parametrize("name", ["L-uRR", "L-uRAP"])
def test_memoized_utility_optimized_sequences_are_uldp(name):
    """Every sequence that not every input reaches is reached by one non-sensitive input only, and the protected
    sequences' log-ratio is the closed form (at most eps_perm)."""
    mech = PROTOCOLS[name]()
    for tau in (1, 2, 3):
        audit = lg.audit_sequence(mech, tau)
        assert audit.invertible_ok and audit.num_invertible > 0 and audit.num_protected > 0
        assert audit.eps == pytest.approx(float(mech.closed_form_eps(tau)), abs=1e-8)
        assert audit.eps <= mech.eps_perm + 1e-12
    assert not lg.audit_sequence(mech, 2, sensitive=range(D)).invertible_ok  # a wrong X_S is caught


def test_dbitflip_costs_eps_perm_whatever_tau():
    """The closed form, and the exact channel of its sequences (its SUE bits keep with e^{eps/2}/(e^{eps/2}+1))."""
    mech = lg.DBitFlipPM(8, 1.5, b=4, d_bits=2)
    assert [float(mech.closed_form_eps(t)) for t in (1, 10, 100)] == [1.5, 1.5, 1.5]
    assert [lg.sequence_eps(mech, t) for t in (1, 2)] == pytest.approx([1.5, 1.5], abs=1e-9)
    assert float(lg.DBitFlipPM(8, 1.5, b=4, d_bits=1).closed_form_eps(5)) == pytest.approx(0.75)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["L-GRR", "L-OUE"])
def test_simulated_attack_matches_its_exact_success_and_memoization_caps_it(name):
    """The MAP adversary's simulated success after each of 3 rounds is within SE of the exact success; with
    memoization it stays at most the naive protocol's (fresh eps_1 randomness each round) after 8 rounds."""
    mech = PROTOCOLS[name]()
    curve = lg.attack_curve(jax.random.key(11), mech, 3, 20_000)
    exact = [lg.exact_attack_success(mech, tau) for tau in (1, 2, 3)]
    assert testing.within_se(curve.success, exact, curve.se)
    both = lg.compare_attack(jax.random.key(12), mech, 8, 20_000)
    memo, naive = both["memoized"], both["naive"]
    assert testing.at_most(memo.success[-1] - naive.success[-1], 0.0, np.hypot(memo.se[-1], naive.se[-1]))
    assert naive.success[-1] > naive.success[0]


def test_changing_values_move_at_the_stated_rate():
    xs = np.asarray(lg.changing_values(jax.random.key(2), np.zeros(20_000, np.int32), 6, D, 0.25))
    moved = (xs[:, 1:] != xs[:, :-1]).mean()
    se = np.sqrt(0.25 * 0.75 / xs[:, 1:].size)
    assert xs.shape == (20_000, 6) and (xs[:, 0] == 0).all()
    assert testing.within_se(moved, 0.25, se)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="eps_1"):
        lg.LGRR(D, 1.0, 2.0)
    with pytest.raises(ValueError, match="eps_perm"):
        lg.l_oue(D, -1.0, 0.5)
    with pytest.raises(ValueError, match="tau"):
        lg.fixed_values(np.zeros(3, np.int32), 0, D)
    with pytest.raises(ValueError, match="xs"):
        lg.simulate_counts(jax.random.key(0), lg.LGRR(D, 2.0, 1.0), np.full((3, 2), D))
    with pytest.raises(ValueError, match="xs"):
        lg.simulate_counts(jax.random.key(0), lg.LGRR(D, 2.0, 1.0), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="prob"):
        lg.changing_values(jax.random.key(0), np.zeros(3, np.int32), 4, D, 1.5)
    with pytest.raises(ValueError, match="tau"):
        lg.sequence_eps(lg.LGRR(D, 2.0, 1.0), 0)


@pytest.mark.parametrize("make", [lambda e: lg.LGRR(D, e, e / 2), lambda e: lg.LOLH(8, e, e / 2),
                                  lambda e: lg.l_oue(D, e, e / 2), lambda e: lg.LURR(D, [0, 1], e, e / 2),
                                  lambda e: lg.LURAP(D, [0, 1], e, e / 2), lambda e: lg.DBitFlipPM(8, e, 4),
                                  lambda e: lg.LGRR(D, 3.0, 1.0).naive(e)])
def test_an_eps_grid_is_refused_by_name(make):
    """The protocols derive their probabilities in float64 Python at construction: a ``jax.vmap``-built grid is
    refused with a TypeError that names the argument and says what to do, never a ConcretizationTypeError."""
    make(1.0)
    with pytest.raises(TypeError, match=r"Expected eps(_perm)? to be a concrete number.*one protocol per point"):
        jax.vmap(make)(jnp.array([1.0, 2.0]))


# ---- against multi-freq-ldpy (long_freq_est): a ported reference runs without it; the package itself if installed

def _ref_lgrr(k, eps_perm, eps_1):
    """multi-freq-ldpy ``L_GRR_Client``'s probabilities, ported."""
    p1 = np.exp(eps_perm) / (np.exp(eps_perm) + k - 1)
    q1 = (1 - p1) / (k - 1)
    e = np.exp(eps_1)
    p2 = (q1 - e * p1) / ((-p1 * e) + k * q1 * e - q1 * e - p1 * (k - 1) + q1)
    return p1, q1, p2, (1 - p2) / (k - 1)


def _ref_var_long_pure(p1, q1, p2, q2, n, f):
    """multi-freq-ldpy ``VAR_Long_Pure``, ported (iid users; exact for symmetric pairs)."""
    sig = f * (2 * p1 * p2 - 2 * p1 * q2 + 2 * q2 - 1) + p2 * q1 + q2 * (1 - q1)
    return sig * (1 - sig) / (n * (p1 - q1) ** 2 * (p2 - q2) ** 2)


def _one_report_eps(p1, q1, p2, q2, k):
    prr = np.full((k, k), q1) + np.eye(k) * (p1 - q1)
    irr = np.full((k, k), q2) + np.eye(k) * (p2 - q2)
    q = prr @ irr
    return float(np.max(np.log(q.max(0) / q.min(0))))


@pytest.mark.parametrize("eps_perm,eps_1", [(2.0, 1.0), (4.0, 0.5), (1.0, 0.9)])
def test_lgrr_probabilities_against_the_peers(eps_perm, eps_1):
    """Binary domains: the peer's closed form. Larger domains: the peer's IRR (the binary form with k put in) makes
    one report cost less than eps_1 (0.90 at eps 2/1, k = 4: utility given away), ours exactly eps_1."""
    mech = lg.LGRR(2, eps_perm, eps_1)
    np.testing.assert_allclose((mech.p1, mech.q1, mech.p2, mech.q2), _ref_lgrr(2, eps_perm, eps_1), rtol=1e-10)
    mech = lg.LGRR(D, eps_perm, eps_1)
    assert _one_report_eps(mech.p1, mech.q1, mech.p2, mech.q2, D) == pytest.approx(eps_1, abs=1e-9)
    assert _one_report_eps(*_ref_lgrr(D, eps_perm, eps_1), D) < eps_1 - 1e-3


def test_sue_iid_variance_equals_the_peers_var_long_pure():
    """L-SUE (symmetric PRR and IRR): the iid-model variance is multi-freq-ldpy's ``VAR_Long_Pure``."""
    mech = lg.l_sue(D, 2.0, 1.0)
    f = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(lg.variance_rounds(mech, f, 1000, iid=True), _ref_var_long_pure(*mech.p, 1000, f),
                               rtol=1e-10)


def test_against_the_installed_peer():
    peer = pytest.importorskip("multi_freq_ldpy.long_freq_est.Variance_LONG_PURE")
    mech = lg.l_sue(D, 3.0, 1.5)
    f = np.array([0.4, 0.3, 0.2, 0.1])
    np.testing.assert_allclose(lg.variance_rounds(mech, f, 500, iid=True), peer.VAR_Long_Pure(*mech.p, n=500, f=f),
                               rtol=1e-10)
