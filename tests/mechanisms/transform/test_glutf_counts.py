"""Count-level fast path of GLUTF mechanisms whose base has one (uUE; GLUTF over UE, rule "non_pure").

Exact first two moments of the aggregate statistic come from the exact channel: a report in channel column
``c`` adds the vector ``T[c]`` (its support, or 003 eq 30's statistic), so one user of item ``x`` has mean
``Q[x] T`` and second moment ``T' diag(Q[x]) T``. Thresholds as in ``tests/engine/test_counts_path.py``: every comparison (sample
means and covariances against the exact ones, fast against per-user) is one ``ul.testing.within_se`` check at the
suite's per-check level. Fixed keys (shifted by ``--seed-shift`` when measuring false alarms).
"""

import importlib.util
from pathlib import Path

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import fastpath
from uldp_jax.mechanisms.core._records import likelihood_of

_COUNTS_PATH_TESTS = Path(__file__).parents[2] / "engine" / "test_counts_path.py"
_spec = importlib.util.spec_from_file_location("_fastpath_tests", _COUNTS_PATH_TESTS)
_fastpath_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fastpath_tests)
check_moments = _fastpath_tests.check_moments  # shared budgeted checks (ul.testing.within_se)
check_same_law = _fastpath_tests.check_same_law

R = 600
COUNTS = np.array([300, 0, 1200, 50, 7, 443])
SENS = [1, 3, 4]


def _column_stats(mech):
    """``T [m, num_stats]``: the statistic each channel column adds (support; eq 30 for rule='non_pure')."""
    S = np.asarray(likelihood_of(mech).support(), np.float64)
    if mech.rule == "pure":
        return S
    m_b, dn = int(mech.base.num_outputs), mech.d - mech.s
    T = np.zeros((S.shape[0], mech.d + 1))
    T[:m_b, :mech.d] = S[:m_b]  # protected-only reports: base support, and one more |Y'|
    T[:m_b, -1] = 1.0
    T[m_b:m_b + dn, :mech.d] = S[m_b:m_b + dn]  # x alone
    return T  # pairs add nothing to eq 30's statistic


def exact_moments(mech, counts):
    Q = np.asarray(mech.channel_matrix()[0], np.float64)
    T = _column_stats(mech)
    mean_x = Q @ T
    mean = counts @ mean_x
    second = np.einsum("x,xc,ci,cj->ij", counts.astype(np.float64), Q, T, T)
    return mean, second - (mean_x.T * counts) @ mean_x


def test_registry_follows_the_base():
    assert fastpath.has_count_path(ul.UUE(6, SENS, 1.0))
    assert fastpath.has_count_path(ul.glutf(ul.GRR(3, 1.0), 6, SENS))
    assert not fastpath.has_count_path(ul.USS(6, SENS, 1.0, k=2))  # SS has no fixed-model count path
    assert fastpath.has_count_path(ul.USS(6, SENS, 1.0, k=2), iid=True)  # ... but an iid one (two populations)
    assert not fastpath.has_count_path(ul.SS(6, 1.0, k=5))
    assert not fastpath.has_count_path(ul.ULH(6, SENS, 1.0))
    assert not fastpath.has_count_path(ul.glutf(ul.OLH(3, 1.0), 6, SENS))


@pytest.mark.slow
def test_uue_counts_exact_and_match_per_user():
    mech = ul.UUE(6, SENS, 1.0)
    xs = np.repeat(np.arange(6), COUNTS)
    mean, cov = exact_moments(mech, COUNTS)
    fast = np.asarray(ul.simulate(jax.random.key(0), mech, xs=xs, reps=R, path="counts").stats, np.float64)
    slow = np.asarray(ul.simulate(jax.random.key(1), mech, xs=xs, reps=R, path="per_user").stats, np.float64)
    check_moments(fast, mean, cov)
    check_moments(slow, mean, cov)
    check_same_law(fast, slow, cov)


@pytest.mark.slow
def test_nonpure_glutf_counts_exact():
    mech = ul.glutf(ul.OUE(3, 1.0), 6, SENS, rule="non_pure")
    res = ul.simulate(jax.random.key(2), mech, xs=np.repeat(np.arange(6), COUNTS), reps=R, path="counts")
    stats = np.asarray(res.stats)
    assert stats.shape == (R, 7) and np.all(stats[:, 0] + stats[:, 2] + stats[:, 5] + stats[:, 6] <= COUNTS.sum())
    check_moments(stats, *exact_moments(mech, COUNTS))


def iid_moments(mech, p, n):
    """Exact iid-model mean and covariance: one report is a draw from ``p Q`` adding ``T[c]``."""
    Q = np.asarray(mech.channel_matrix()[0], np.float64)
    T = _column_stats(mech)
    w = p @ Q
    f = w @ T
    return n * f, n * ((T.T * w) @ T - np.outer(f, f))


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["pure", "non_pure"])
def test_uss_iid_counts_exact(rule):
    """uSS (SS base with k = 2 of s = 4 sensitive items) in the iid model: sensitive and go users are two iid
    populations of one item scan; a sensitive item with p = 0 still gets go users."""
    mech = ul.glutf(ul.SS(4, 1.0, k=2), 7, [0, 2, 3, 6], rule=rule)
    p = np.array([0.3, 0.1, 0.0, 0.25, 0.05, 0.2, 0.1])
    assert fastpath.has_count_path(mech, iid=True) and not fastpath.has_count_path(mech)
    res = ul.simulate(jax.random.key(8), mech, p=p, n=3000, reps=R)  # "auto": the iid counts path
    check_moments(res.stats, *iid_moments(mech, p, 3000))


@pytest.mark.slow
def test_iid_samplers_accept_an_integer_n():
    """A Python int n (public ``sample_counts_iid``) is cast to float: no dtype error, no all-zero counts."""
    p = jax.numpy.full((6,), 1 / 6)
    with jax.enable_x64(True):
        for mech, total in ((ul.SS(6, 1.0, k=2), 2000), (ul.USS(6, SENS, 1.0, k=2), None)):
            stats = np.asarray(fastpath.sample_counts_iid(jax.random.key(9), mech, 1000, p))
            assert stats.sum() > 0 and (total is None or stats.sum() == total)
