"""``mechanisms.core._records``: the ``Likelihood`` record ``Mechanism.likelihood()`` returns, read through
``likelihood_of`` (defaults for item and bit reports; anything else refused)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core._records import Likelihood, likelihood_of


class _DenseGRR(ul.GRR):
    """GRR whose per-report likelihood is given as dense factors ``(L, w, N)`` (what a user may write)."""

    def likelihood(self):
        def report(ys):
            t = jnp.exp(-jnp.asarray(self.eps))
            L = jnp.where(ys[:, None] == jnp.arange(self.d), 1.0, t)
            return L, jnp.ones(ys.shape[0]), jnp.zeros(self.d)

        return Likelihood(report=report)


class _WrongRecord(ul.GRR):
    def likelihood(self):
        return (None, None)


def test_no_likelihood_gets_the_item_columns():
    mech = ul.BinaryCA(1.0, 0.5)
    assert mech.likelihood() is None
    rec = likelihood_of(mech)
    assert rec.ops is None and rec.product is None and rec.report is None
    np.testing.assert_array_equal(rec.index(np.array([1, 0, 1])), [1, 0, 1])
    np.testing.assert_array_equal(rec.support(), np.eye(2))


def test_bit_reports_get_their_bit_pattern_columns():
    mech = ul.RAPPOR(3, 1.0)
    rec = likelihood_of(mech)
    reports = np.array([[1, 0, 1], [0, 1, 0]], bool)
    np.testing.assert_array_equal(rec.index(reports), [5, 2])  # sum_j bit_j 2^j
    S = rec.support()
    assert S.shape == (8, 3)
    np.testing.assert_array_equal(S[[5, 2]], reports.astype(np.float64))


def test_a_record_keeps_what_the_mechanism_gives_and_fills_the_rest():
    mech = ul.GRR(4, 1.0)
    rec = likelihood_of(mech)
    assert rec.ops is not None and rec.report is not None and rec.product is None
    np.testing.assert_array_equal(rec.support(), np.eye(4))  # filled: item reports
    olh = ul.OLH(4, 1.0, g=2, num_hashes=3)
    assert likelihood_of(olh).support().shape == (olh.num_outputs, 4)  # the mechanism's own (seed, value) columns


def test_likelihood_must_return_a_record_or_none():
    with pytest.raises(TypeError, match=r"_WrongRecord.likelihood\(\) to return a Likelihood record .* got tuple"):
        likelihood_of(_WrongRecord(4, 1.0))


def test_dense_report_factors_run_em_pure_to_the_same_mle():
    xs = jnp.asarray(np.repeat(np.arange(5), [300, 100, 50, 400, 150]), jnp.int32)
    ys = ul.perturb(jax.random.key(4), ul.GRR(5, 1.0), xs)
    dense = np.asarray(ul.estimate(_DenseGRR(5, 1.0), ys, "em-pure"))
    ratio = np.asarray(ul.estimate(ul.GRR(5, 1.0), ys, "em-pure"))
    assert abs(dense.sum() - 1) < 1e-5 and dense.min() >= 0
    np.testing.assert_allclose(dense, ratio, atol=2e-4)


@pytest.mark.parametrize("mech, exact", [
    (ul.OLH(4, 1.0, g=3, family="full"), True), (ul.OLH(4, 1.0, g=3, num_hashes=16), False),
    (ul.Wheel(4, 1.0, l=0.3, num_hashes=8), False), (ul.ULH(5, (0, 2), 1.0, g=3, num_hashes=16), False),
    (ul.ULH(5, (0, 2), 1.0, g=3, family="full"), True), (ul.GRR(4, 1.0), True),
], ids=lambda v: type(v).__name__ if isinstance(v, ul.Mechanism) else str(v))
def test_estimator_exact_says_whether_the_affine_model_holds_on_the_channel(mech, exact):
    """``Estimator.exact``: where it is False (a finite hash family), the exact per-item moments refuse the channel's
    affine map (the estimator is biased there); where True, they accept it."""
    assert mech.estimator().exact is exact
    p = np.full(mech.d, 1.0 / mech.d)
    if exact:
        assert np.all(np.isfinite(ul.theory.exact_item_mse(mech, p, 100)))
    else:
        with pytest.raises(ValueError, match="biased"):
            ul.theory.exact_item_mse(mech, p, 100)
