"""``uldp_jax/estimation/_em_core.py``'s ``tol="stat"``: EM stops at the statistical resolution of the data (the
module's doc).

The claim is about the optimiser, not about the data: on one fixed set of reports per mechanism, the estimate
with ``tol="stat"`` lies within a small fraction of one standard error of the exact MLE (the default rule) in
every item, and it takes no more steps. Every solver family is covered: projected Newton on support ratios (OLH,
SS) and on bit vectors (OUE, uRAP), SQUAREM on a histogram (GRR) and on a user's dense factors.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import _em_core

D, N, EPS = 32, 20_000, 1.0
SE_FRACTION = 0.1  # allowed distance from the exact MLE, in standard errors of the empirical estimator


class DenseOUE(ul.UE):
    """OUE whose likelihood is a user's dense per-report factors (``report=``): the dense-likelihood solver."""

    def likelihood(self):
        p_one, q_one = self.p, self.p / (jnp.exp(self.eps) * (1 - self.p) + self.p)

        def report(ys):
            ys = jnp.asarray(ys, bool)
            # L_ix = P(y_i | x) / prod_j P(y_ij | not x's bit): the own bit's ratio, the same for all rows' rest
            ratio = jnp.where(ys, p_one / q_one, (1 - p_one) / (1 - q_one))
            return ratio, jnp.ones(ys.shape[0]), jnp.zeros(ys.shape[1])

        return ul.mechanisms.Likelihood(report=report)


MECHS = {
    "OLH": lambda: ul.OLH(D, EPS),
    "SS": lambda: ul.SS(D, EPS),
    "OUE": lambda: ul.OUE(D, EPS),
    "uRAP": lambda: ul.URAP(D, np.arange(8), EPS),
    "GRR": lambda: ul.GRR(D, EPS),
    "dense": lambda: DenseOUE(D, EPS, p=0.5),
}


@pytest.fixture(scope="module")
def data():
    p = np.random.default_rng(0).dirichlet(np.ones(D))
    xs = jnp.asarray(np.random.default_rng(1).choice(D, N, p=p), jnp.int32)
    return p, xs


@pytest.mark.slow  # two EM programs per mechanism (compiles)
@pytest.mark.parametrize("name", sorted(MECHS))
def test_stat_tol_is_the_mle_within_a_fraction_of_one_se(name, data):
    p, xs = data
    mech = MECHS[name]()
    ys = ul.perturb(jax.random.key(3), mech, xs)
    # the dense factors are OUE's likelihood: its exact MLE is OUE's (Newton: seconds, where the dense SQUAREM's
    # default rule takes thousands of steps)
    same = ul.OUE(D, EPS) if name == "dense" else mech
    exact, info_exact = ul.estimation.em(same, ys, return_info=True)
    stat, info_stat = ul.estimation.em(mech, ys, return_info=True, tol="stat")
    se = np.sqrt(np.asarray(ul.theory.item_variance(same, p, N)))
    miss = np.max(np.abs(np.asarray(stat) - np.asarray(exact)) / se)
    assert bool(info_stat.converged), info_stat
    assert miss <= SE_FRACTION, (name, miss)
    if same is mech:
        assert int(info_stat.num_evals) <= int(info_exact.num_evals), (info_stat, info_exact)


def test_stat_tol_is_stat_gain_per_report_total():
    tol, certify = _em_core.resolve_tol("stat", 1000, jnp.float32, _em_core.REPORT_TOL)
    assert not certify
    np.testing.assert_allclose(float(tol), _em_core.STAT_GAIN / 1000, rtol=1e-6)
    tol, certify = _em_core.resolve_tol(None, 1000, jnp.float32, _em_core.REPORT_TOL)
    assert certify and float(tol) == pytest.approx(_em_core.REPORT_TOL)


@pytest.mark.slow  # two simulate programs (compiles)
def test_stat_tol_in_simulate_through_method_options(data):
    p, _ = data
    mech = ul.OLH(D, EPS)
    kw = dict(p=p, n=4000, reps=2, methods=("em",), progress=False)
    exact = ul.simulate(jax.random.key(4), mech, **kw)
    stat = ul.simulate(jax.random.key(4), mech, method_options={"em": {"tol": "stat"}}, **kw)
    se = np.sqrt(np.asarray(ul.theory.item_variance(mech, p, 4000)))
    assert np.max(np.abs(np.asarray(stat.estimates["em"]) - np.asarray(exact.estimates["em"])) / se) <= SE_FRACTION


@pytest.mark.parametrize("tol", ["exact", "STAT", ""])
def test_other_strings_are_refused_naming_tol(tol):
    with pytest.raises(ValueError, match="tol="):
        ul.estimation.em(ul.GRR(4, 1.0), jnp.zeros(10, jnp.int32), tol=tol)
