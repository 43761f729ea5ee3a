"""Issue 54 item 5: a user's plain-tuple report pytree ``(j, bit)`` goes through ``ul.perturb``, ``ul.estimate``
(emp, emp+thr, em) and ``ul.simulate`` alike (``ul.estimate`` turned every tuple into one NumPy array)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _records


class JBit(ul.Mechanism):
    """Reports ``(j, b)``: a uniform index ``j`` and ``1[x == j]`` flipped w.p. ``1 / (1 + e^eps)``."""

    d: int = ul.static_field()
    eps: float
    report_kind = "jbit"

    @property
    def num_outputs(self):
        return 2 * self.d

    def keep(self):
        return jax.nn.sigmoid(self.eps)

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        j = jax.random.randint(k1, xs.shape, 0, self.d, jnp.int32)
        return (j, (j == xs) ^ (jax.random.uniform(k2, xs.shape) >= self.keep()))

    def channel_matrix(self):
        k = self.keep()
        one = jnp.where(jnp.eye(self.d, dtype=bool), k, 1 - k) / self.d
        return jnp.concatenate([1 / self.d - one, one], axis=1), jnp.ones(2 * self.d, bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)

    def aggregate(self, ys, weights=None):
        j, b = ys
        w = b if weights is None else b & weights.astype(bool)
        return jnp.zeros(self.d, jnp.int32).at[j].add(w.astype(jnp.int32))

    def reports(self):
        return _records.Reports(stats=self.d)

    def estimator(self):
        k = self.keep()
        return _records.Estimator(affine=(jnp.full(self.d, (2 * k - 1) / self.d), jnp.full(self.d, (1 - k) / self.d)))

    def likelihood(self):
        def report(ys):
            j, b = ys
            match = (j[:, None] == jnp.arange(self.d)) == b[:, None]
            k = self.keep()
            return jnp.where(match, k, 1 - k), jnp.ones(j.shape[0]), jnp.zeros(self.d)

        return _records.Likelihood(report=report, index=lambda ys: np.asarray(ys[0]) + self.d * np.asarray(ys[1]))


@pytest.fixture(scope="module")
def reports():
    mech = JBit(4, 1.0)
    xs = jnp.arange(4000, dtype=jnp.int32) % 4
    return mech, ul.perturb(jax.random.key(0), mech, xs)


def test_perturb_returns_the_plain_tuple(reports):
    _, ys = reports
    assert type(ys) is tuple and ys[0].shape == (4000,) and ys[1].dtype == jnp.bool_


@pytest.mark.parametrize("method", ["emp", "emp+thr", "em"])
def test_estimate_takes_the_tuple(reports, method):
    mech, ys = reports
    est = np.asarray(ul.estimate(mech, ys, method))
    assert est.shape == (4,) and np.all(np.isfinite(est))
    assert np.max(np.abs(est - 0.25)) < 0.1  # 4000 users, eps 1: SE of an item about 0.03


def test_emp_equals_the_affine_inverse_of_aggregate(reports):
    mech, ys = reports
    stats = np.asarray(ul.aggregate(mech, ys), np.float64)
    k = float(jax.nn.sigmoid(1.0))
    np.testing.assert_allclose(ul.estimate(mech, ys, "emp"), (stats / 4000 - (1 - k) / 4) / ((2 * k - 1) / 4),
                               rtol=1e-5)


@pytest.mark.slow  # a simulate compile
def test_simulate_and_estimate_agree_on_the_same_reports():
    mech = JBit(4, 1.0)
    res = ul.simulate(jax.random.key(1), mech, xs=np.arange(400) % 4, reps=2, methods=("emp", "em"))
    assert res.estimates["em"].shape == (2, 4)
    # the reports behind repetition 0, estimated with ul.estimate, give simulate's emp estimate
    stats = np.asarray(res.stats[0], np.float64)
    np.testing.assert_allclose(res.estimates["emp"][0], ul.estimate_from_stats(mech, stats, 400), rtol=1e-5)


def test_em_without_a_likelihood_names_what_to_define(reports):
    class NoLikelihood(JBit):
        def likelihood(self):
            return None

    mech, ys = reports
    with pytest.raises(ValueError, match=r"EM on NoLikelihood's reports .* needs their likelihood"):
        ul.estimate(NoLikelihood(4, 1.0), ys, "em")
