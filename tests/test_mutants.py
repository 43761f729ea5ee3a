"""Checks written to catch specific wrong implementations (mutants) that earlier tests let through or caught by luck.

* Decoders checked independently of their own code: ``debias`` of the exact expected statistic must return the
  input's point mass, with the expectation read off the exact channel (plain OLH, SS: ``ul.check``'s debias row)
  or, for Wheel/uWheel (whose finite hash family makes the channel only nearly affine), off the closed-form pure
  probabilities of ``ul.theory.pure_probs`` (003 Def 6). A 10% decoder bias fails both.
* The audit finds a violation on every protected column, one column at a time (a mutant that skips the last
  protected column passed every non-tightness check).
* EM at its defaults reaches an MLE known independently of EM and stops by its rule (step count, `converged`).
* Repetitions and user blocks are independent, on the counts and per-user paths (a mutant sharing one key between
  two repetitions moved the old checks by 0.08-0.4 SE): one budgeted check each (``ul.testing``).
"""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as sps

import uldp_jax as ul
from uldp_jax import _check, testing
from uldp_jax.checks import _estimator
from uldp_jax.mechanisms.core import _estimation, _records

SENS = (0, 2, 3)


def _debias_row(mech):
    Q = np.asarray(ul.channel(mech).Q, np.float64)
    return _estimator.check_debias(mech, Q, _estimator.report_statistic(mech, Q.shape[1]))


@pytest.mark.parametrize("make", [lambda: ul.OLH(5, 1.0, g=3, family="full"), lambda: ul.SS(6, 1.0, k=2),
                                  lambda: ul.ULH(5, SENS, 1.0, g=3, family="full"), lambda: ul.USS(6, SENS, 1.0, k=2),
                                  lambda: ul.GRR(5, 1.0), lambda: ul.OUE(4, 1.0), lambda: ul.HR(5, 1.0),
                                  lambda: ul.URR(5, SENS, 1.0), lambda: ul.URAP(5, SENS, 1.0)],
                         ids=["OLH", "SS", "ULH", "USS", "GRR", "OUE", "HR", "URR", "URAP"])
def test_decoder_inverts_the_exact_channel(make):
    row = _debias_row(make())
    assert row.status == "pass", row


def _scaled(mech, factor):
    """The same mechanism with its decoder scaled by ``factor`` (a biased-decoder mutant)."""
    cls = type(mech)

    def estimator(self):
        own = cls.estimator(self) or _records.Estimator()  # the class's own debias, else the default one
        debias = own.debias or (lambda st, n: _estimation.default_debias(self, st, n))
        return own._replace(debias=lambda st, n: factor * debias(st, n))

    mutant = type(f"Biased{cls.__name__}", (cls,), {"estimator": estimator})
    obj = copy.copy(mech)
    object.__setattr__(obj, "__class__", mutant)
    return obj


@pytest.mark.parametrize("make", [lambda: ul.OLH(5, 1.0, g=3, family="full"), lambda: ul.SS(6, 1.0, k=2)],
                         ids=["OLH", "SS"])
def test_a_ten_percent_decoder_bias_is_caught(make):
    assert _debias_row(_scaled(make(), 1.1)).status == "FAIL"


def _pure_expectation(mech, x):
    """E[stats] / n for users holding ``x`` under the closed-form pure model (003 eq 21): ``a e_x + b``."""
    P, Q, Z = (None if v is None else float(v) for v in ul.theory.pure_probs(mech))
    d = mech.d
    ldp = ul.theory.family_of(mech).ldp
    sens = np.ones(d, bool) if ldp else np.isin(np.arange(d), mech.sensitive)
    a = np.where(sens, P - Q, 0.0 if ldp else Z)
    b = np.where(sens, Q, 0.0)
    return a * (np.arange(d) == x) + b


def _wheel_decoder_error(mech):
    n = 1000.0
    with jax.enable_x64(True):
        m64 = jax.tree.map(lambda v: jnp.asarray(v, jnp.float64), mech)
        debias = ul.mechanisms.core.debias
        est = np.stack([np.asarray(debias(m64, jnp.asarray(n * _pure_expectation(mech, x)), n), np.float64)
                        for x in range(mech.d)])
    return float(np.abs(est - np.eye(mech.d)).max())


@pytest.mark.parametrize("make", [lambda: ul.Wheel(5, 1.0, l=0.3), lambda: ul.UWheel(6, SENS, 1.0, l=0.3)],
                         ids=["Wheel", "UWheel"])
def test_wheel_decoders_against_the_closed_form_model(make):
    mech = make()
    assert _wheel_decoder_error(mech) < 1e-9
    assert _wheel_decoder_error(_scaled(mech, 1.1)) > 0.05  # the mutant is caught


@pytest.mark.parametrize("column", range(20))
def test_audit_sees_a_violation_on_every_protected_column(column):
    """A channel over 20 protected outputs that is 1-LDP except on one column, where the ratio is e^1.5."""
    d, m = 3, 20
    Q = np.full((d, m), 1.0 / m)
    c = np.exp(1.5)
    Q[0] = (m - c) / (m * (m - 1))
    Q[0, column] = c / m
    mech = testing.FixedChannel(Q, np.ones(m, bool), ul.PrivacySpec.ldp(d, 1.0))
    rep = ul.audit(mech)
    assert not rep.ok and abs(rep.eps - 1.5) < 1e-9 and rep.worst_pair == (0, 1)


# ---- independence across repetitions and blocks ---------------------------------------------------------------

D, N, REPS = 48, 20_000, 40


def _iid_cov(mech, p, n):
    f = p @ np.asarray(ul.channel(mech).Q)
    return n * (np.diag(f) - np.outer(f, f))


def _min_pair_pvalue(stats, cov):
    """Bonferroni p-value of the smallest ``(S_r - S_s)' (2 cov)^+ (S_r - S_s)`` over pairs of repetitions,
    against its chi-square(rank) lower tail: two repetitions drawn from one key give 0, hence p = 0."""
    S = np.asarray(stats, np.float64)
    W = np.linalg.pinv(2.0 * cov, hermitian=True)
    rank = np.linalg.matrix_rank(cov, hermitian=True)
    diffs = S[:, None, :] - S[None, :, :]
    T = np.einsum("rsi,ij,rsj->rs", diffs, W, diffs)
    iu = np.triu_indices(S.shape[0], 1)
    return min(1.0, iu[0].size * float(sps.chi2.cdf(T[iu].min(), rank)))


@pytest.mark.slow
@pytest.mark.parametrize("path", ["counts", "per_user"])
def test_repetitions_are_independent(path):
    mech = ul.GRR(D, 1.0)
    p = np.random.default_rng(0).dirichlet(np.ones(D))
    res = ul.simulate(jax.random.key(21), mech, p=p, n=N, reps=REPS, path=path)
    pvalue = _min_pair_pvalue(res.stats, _iid_cov(mech, p, N))
    assert testing.fits(pvalue), pvalue
    # power: the mutant (repetition 1 a copy of repetition 0) is refused
    copied = np.asarray(res.stats).copy()
    copied[1] = copied[0]
    assert _min_pair_pvalue(copied, _iid_cov(mech, p, N)) < 1e-6


@pytest.mark.slow
def test_user_blocks_are_independent_on_the_per_user_path():
    """Four blocks holding the same users: the total's variance is 4x one block's only if the blocks' draws are
    independent (two blocks sharing a key would make it 6x). One budgeted check on the summed variances."""
    mech = ul.GRR(16, 1.0)
    block = np.repeat(np.arange(16), 50)  # 800 users per block
    xs = np.tile(block, 4)
    reps = 300
    res = ul.simulate(jax.random.key(22), mech, xs=xs, reps=reps, path="per_user", block_size=block.size)
    Q = np.asarray(ul.channel(mech).Q)
    counts = np.bincount(xs, minlength=16).astype(np.float64)
    mean = counts @ Q
    cov = np.diag(mean) - (Q.T * counts) @ Q  # fixed model: independent users
    S = np.asarray(res.stats, np.float64)
    observed = S.var(axis=0, ddof=1).sum()
    se = np.sqrt(2.0 * np.sum(cov**2) / (reps - 1))
    assert testing.within_se(observed, np.trace(cov), se), (observed, np.trace(cov), se)


def test_em_default_accuracy_and_step_count():
    """EM at its defaults reaches the MLE and stops by its own rule. For GRR (an invertible channel) whose "emp"
    estimate is inside the simplex, the MLE is that estimate (the multinomial MLE of the report frequencies mapped
    back), a reference independent of EM. Mutants: a capped or one-step EM misses it; an EM that ignores its
    stopping rule runs to ``max_iters`` (``converged`` false or ``num_steps`` at the cap)."""
    mech = ul.GRR(6, 2.0)
    xs = np.repeat(np.arange(6), [3000, 2000, 2500, 1000, 1500, 2000])  # 12,000 users
    ys = ul.perturb(jax.random.key(9), mech, xs)
    emp = np.asarray(ul.estimate(mech, ys, "emp"), np.float64)
    # within the budget of the truth, hence inside the simplex (smallest true share 1/12, SE ~0.005)
    assert testing.estimate_within_se(mech, emp, np.bincount(xs) / xs.size, xs.size) and emp.min() > 0
    p_hat, info = ul.estimation.em(mech, ys, return_info=True)
    np.testing.assert_allclose(np.asarray(p_hat, np.float64), emp, atol=1e-5)
    assert bool(info.converged) and 2 <= int(info.num_steps) < 1000, info
    capped, capped_info = ul.estimation.em(mech, ys, return_info=True, max_iters=1)
    assert not bool(capped_info.converged)
