"""``uldp_jax/longitudinal/_simulate.py``: memoized longitudinal protocols (issue 52, second half) simulated over
rounds: the samplers against the exact two-stage channel (memos shared across rounds, independent across users),
the per-round estimator against the exact moments, changing values at the stated rate, and bad inputs."""

import jax
import numpy as np
import pytest

from uldp_jax import longitudinal as lg
from uldp_jax import testing

from tests.longitudinal._protocols import D, ITEM, PROTOCOLS


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

