"""Issue 54 item 2: a user's product-Bernoulli likelihood takes its rates from the record or the exact channel,
never ``t = exp(-eps)``; GLUTF's EM over a user's base likewise (a thresholded histogram, THE, has bits whose
log-odds ratio is not eps: EM with ``exp(-eps)`` was silently misspecified)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _likelihood, _records
from uldp_jax.mechanisms.core._reports import bits_table


def the_rates(eps, theta):
    """THE's ``(P(bit x set | x), P(bit x set | u != x))``: ``1[j = x] + Laplace(2 / eps) > theta``."""
    lam = 2.0 / jnp.asarray(eps)
    return 1.0 - 0.5 * jnp.exp((theta - 1.0) / lam), 0.5 * jnp.exp(-theta / lam)


class THE(ul.Mechanism):
    """Thresholding histogram encoding (Wang et al. 2017): bit j = 1[1[j = x] + Laplace(2/eps) > theta]."""

    d: int = ul.static_field()
    eps: float
    theta: float = ul.static_field(default=0.67)
    rates_in_record: bool = ul.static_field(default=True)
    report_kind = "bits"

    @property
    def num_outputs(self):
        return 2**self.d

    def perturb_batch(self, key, xs):
        noise = jax.random.laplace(key, xs.shape + (self.d,)) * (2.0 / self.eps)
        return (jax.nn.one_hot(xs, self.d) + noise) > self.theta

    def channel_matrix(self):
        a, b = (float(v) for v in the_rates(float(self.eps), self.theta))
        probs = np.where(np.eye(self.d, dtype=bool), a, b)
        bits = bits_table(self.d)
        Q = np.prod(np.where(bits[None], probs[:, None, :], 1.0 - probs[:, None, :]), axis=-1)
        return Q, np.ones(2**self.d, bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)

    def pure(self):
        a, b = the_rates(self.eps, self.theta)
        return _records.Pure(a, b)

    def estimator(self):
        a, b = the_rates(self.eps, self.theta)
        return _records.Estimator(affine=(jnp.full(self.d, a - b), jnp.full(self.d, b)))

    def likelihood(self):
        mask = np.ones(self.d, bool)
        if self.rates_in_record:
            return _records.Likelihood(product=(mask, False, _likelihood.bit_log_odds(*the_rates(self.eps, self.theta))))
        return _records.Likelihood(product=(mask, False))  # rates read off the exact channel


EPS = 1.0


def test_the_bits_are_not_eps_odds():
    w = float(_likelihood.bit_log_odds(*the_rates(EPS, 0.67)))
    assert abs(w - EPS) > 0.1  # THE's odds ratio: the bug assumed eps


@pytest.mark.parametrize("in_record", [True, False])
def test_product_log_odds_from_the_record_or_the_channel(in_record):
    mech = THE(6, EPS, rates_in_record=in_record)
    want = _likelihood.bit_log_odds(*the_rates(EPS, 0.67))
    np.testing.assert_allclose(float(_likelihood.product_log_odds(mech)), float(want), rtol=1e-6)


def test_library_unary_encodings_keep_eps():
    for mech in (ul.OUE(8, 1.3), ul.SUE(8, 0.7), ul.URAP(8, (0, 1, 2), 1.1)):
        assert float(_likelihood.product_log_odds(mech)) == pytest.approx(float(mech.eps), rel=1e-6)


def test_rates_that_differ_across_bits_are_refused():
    class Uneven(THE):
        def channel_matrix(self):
            Q, prot = THE.channel_matrix(self)
            probs = np.where(np.eye(self.d, dtype=bool), 0.6, np.linspace(0.1, 0.3, self.d)[None])
            bits = bits_table(self.d)
            return np.prod(np.where(bits[None], probs[:, None, :], 1 - probs[:, None, :]), axis=-1), prot

    with pytest.raises(ValueError, match="differs across the product bits"):
        _likelihood.product_log_odds(Uneven(4, EPS, rates_in_record=False))


@pytest.mark.slow  # two compiles of the product-EM solver
def test_em_with_the_right_rates_beats_exp_minus_eps():
    """EM's MLE with THE's rates is the exact MLE: its likelihood is at least that of EM under exp(-eps)."""
    d, n = 6, 20_000
    p = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    mech = THE(d, EPS)
    xs = jax.random.choice(jax.random.key(3), d, (n,), p=jnp.asarray(p))
    ys = ul.perturb(jax.random.key(4), mech, xs.astype(jnp.int32))
    right = np.asarray(ul.estimate(mech, ys, "em"), np.float64)

    class Misspecified(THE):  # the old behaviour: t = exp(-eps)
        def likelihood(self):
            return _records.Likelihood(product=(np.ones(self.d, bool), False, self.eps))

    wrong = np.asarray(ul.estimate(Misspecified(d, EPS), ys, "em"), np.float64)
    Q, _ = mech.channel_matrix()
    cols = np.asarray(_records.likelihood_of(mech).index(ys))
    loglik = lambda est: float(np.sum(np.log(np.maximum(est, 0) @ Q[:, cols])))
    assert loglik(right) >= loglik(wrong) - 1e-6 * n
    assert np.abs(right - wrong).sum() > 1e-3  # the rates matter here: the two EMs differ


@pytest.mark.slow  # the report path's compile
def test_simulate_em_uses_the_record_rates():
    mech = THE(6, EPS)
    res = ul.simulate(jax.random.key(5), mech, p=np.full(6, 1 / 6), n=2000, reps=2, methods=("em",))
    assert res.estimates["em"].shape == (2, 6) and np.all(np.isfinite(res.estimates["em"]))
