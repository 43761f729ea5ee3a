"""``ul.check``: one call flags each kind of broken mechanism (and passes an honest one); "emp" refuses or warns
on a statistic that cannot identify p; emp+thr's null variance follows an overridden ``debias``.

The mechanisms here are written as a user would, outside the package (README's KeepRR pattern). Every call that
samples passes ``alpha=testing.ALPHA``: its sampler and leak rows are two checks of the suite's budget, at
``ALPHA / 2`` each (the default 1e-3 is a user's level, 200 times the per-check level). The wrong mechanisms of
issues 53 and 54 are in ``tests/check_mutants.py`` and ``tests/test_check_mutants.py``.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.estimation import _empirical, _threshold
from uldp_jax.mechanisms.core import _estimation, _records
from uldp_jax.mechanisms import examples


from tests.outside_mechanisms import Keep


class LeakySampler(Keep):
    """Honest channel, leaky sampler: it keeps the true item as if eps were doubled."""

    def perturb_batch(self, key, xs):
        return Keep(self.d, 2.0 * self.eps).perturb_batch(key, xs)


class LeakyChannel(Keep):
    """Sampler and channel agree, but both keep as if eps were doubled while claiming eps."""

    def keep(self):
        return 1.0 / (1.0 + (self.d - 1) * jnp.exp(-2.0 * self.eps))


class BiasedDebias(Keep):
    """A hand-written debias that is 10% off (the exact inverse of the channel, scaled)."""

    def estimator(self):
        k = self.keep()
        q = (1.0 - k) / (self.d - 1)
        return _records.Estimator(debias=lambda stats, n: 1.1 * (jnp.asarray(stats) / n - q) / (k - q))


class Merged(ul.Mechanism):
    """A statistic that cannot identify p: items 2 and 3 give the same report (rank d - 1)."""

    d: int = ul.static_field()
    eps: float
    report_kind = "item"

    @property
    def num_outputs(self):
        return self.d - 1

    def _base(self):
        return Keep(self.d - 1, self.eps)

    def perturb_batch(self, key, xs):
        return self._base().perturb_batch(key, jnp.minimum(xs, self.d - 2))

    def channel_matrix(self):
        Q, _ = self._base().channel_matrix()
        return jnp.concatenate([Q, Q[-1:]], axis=0), jnp.ones(self.d - 1, dtype=bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)


KEY = jax.random.key(0)
DRAWS = 4000  # per input: power to see the doubled eps at d = 4 is essentially 1 (chi-square p ~ 1e-300)
TRIALS = 4000  # fresh reports per input in the leak row (its power is tested in tests/test_check_mutants.py)


@pytest.mark.parametrize("mech, failed", [
    (LeakySampler(4, 1.0), ("sampler", "leak")),  # the leak row gives the number (eps >= ...)
    (LeakyChannel(4, 1.0), ("audit", "leak")),
    (BiasedDebias(4, 1.0), ("debias",)),
    (Merged(4, 1.0), ("debias", "rank")),  # no estimator is unbiased without identifiability
], ids=["leaky-sampler", "leaky-channel", "biased-debias", "rank-deficient"])
def test_check_flags_each_defect(mech, failed):
    rep = ul.check(mech, key=KEY, draws=DRAWS, trials=TRIALS, alpha=testing.ALPHA)
    assert not rep.ok
    assert rep.failed == failed, str(rep)


def test_check_on_library_mechanisms_and_bad_arguments():
    assert ul.check(ul.GRR(4, 1.0), key=KEY, draws=1000, trials=TRIALS, alpha=testing.ALPHA).ok
    assert ul.check(ul.URR(5, [0, 2], 1.0), key=KEY, draws=1000, trials=TRIALS, alpha=testing.ALPHA).ok
    with pytest.raises(TypeError, match="mech"):
        ul.check("GRR")
    with pytest.raises(ValueError, match="grid"):
        ul.check(jax.vmap(lambda e: Keep(4, e))(jnp.array([0.5, 1.0])))
    with pytest.raises(ValueError, match=r"grid point \(1,\)"):
        ul.check(jax.vmap(lambda e: Keep(4, e))(jnp.array([0.5, -1.0])))
    with pytest.raises(ValueError, match="draws"):
        ul.check(Keep(4, 1.0), draws=10)
    # a domain too large to enumerate: every check is skipped (with the reason), none passes silently
    rep = ul.check(ul.GRR(2**13, 1.0))
    assert rep.skipped == ("audit", "keys", "reports", "sampler", "leak", "debias", "rank", "likelihood")
    assert rep.ok and rep.verdict == "ok (8 of 9 checks skipped)" and str(rep).startswith("ul.check(GRR): ok (8 of")


def test_emp_warns_or_refuses_on_a_rank_deficient_statistic():
    mech = Merged(4, 1.0)
    ys = ul.perturb(KEY, mech, jnp.array([0, 1, 2, 3] * 50, dtype=jnp.int32))
    with pytest.warns(_empirical.RankDeficientWarning, match="rank 3 < d=4"):
        ul.estimate(mech, ys, "emp")
    with pytest.raises(ValueError, match="not identifiable"):
        ul.estimate(mech, ys, "emp", on_rank_deficient="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ul.estimate(mech, ys, "emp", on_rank_deficient="ignore")
        ul.estimate(Keep(4, 1.0), ys, "emp")  # full rank: no warning
    with pytest.raises(ValueError, match="on_rank_deficient"):
        ul.estimate(mech, ys, "emp", on_rank_deficient="maybe")


def test_emp_thr_null_variance_follows_a_mechanisms_own_debias():
    class Doubled(Keep):
        def estimator(self):
            return _records.Estimator(debias=lambda stats, n: 2.0 * _estimation.default_debias(self, stats, n))

    base, doubled = Keep(4, 1.0), Doubled(4, 1.0)
    t_base = np.asarray(_threshold.significance_threshold(base, 1000))
    t_doubled = np.asarray(_threshold.significance_threshold(doubled, 1000))
    np.testing.assert_allclose(t_doubled, 2.0 * t_base, rtol=1e-5)
    # and the exact moments agree with it
    p = np.full(4, 0.25)
    np.testing.assert_allclose(np.asarray(_estimation.debias_variance(doubled, jnp.asarray(p), 1000.0)),
                               4.0 * np.asarray(_estimation.debias_variance(base, jnp.asarray(p), 1000.0)), rtol=1e-5)


@pytest.mark.slow
def test_check_passes_every_registered_library_example():
    for name, example in examples().items():
        rep = ul.check(example(1.0), key=KEY, draws=1000, trials=TRIALS, alpha=testing.ALPHA)
        assert rep.ok, f"{name}: {rep}"
