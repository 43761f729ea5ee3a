"""``uldp_jax/checks/_draws.py``: ``ul.check``'s draws row (x64-widened draws warn, 16-bit draws fail)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

from tests import check_mutants as cm
from tests.outside_mechanisms import Keep
from tests.test_check import DRAWS, KEY, TRIALS
from tests.test_check_mutants import _check


class Undtyped(Keep):
    """Keep's law, but its draws name no dtype: 64-bit random words when x64 is enabled."""

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        other = jax.random.randint(k2, xs.shape, 0, self.d - 1)
        keep = jax.random.uniform(k1, xs.shape) < self.keep()
        return jnp.where(keep, xs, other + (other >= xs)).astype(jnp.int32)


def test_check_warns_on_draws_that_widen_under_x64():
    """The draws row reads perturb_batch's jaxpr under x64: a warning (a cost, not a wrong law), ok unchanged."""
    assert ul.check(Keep(4, 1.0), key=KEY, draws=DRAWS, trials=TRIALS, alpha=testing.ALPHA)["draws"].status == "pass"
    rep = ul.check(Undtyped(4, 1.0), key=KEY, draws=DRAWS, trials=TRIALS, alpha=testing.ALPHA)
    assert rep.ok and rep["draws"].status == "warn" and "64-bit" in rep["draws"].detail, str(rep)
    assert "warn" in str(rep).splitlines()[-1]
    for mech in (ul.GRR(4, 1.0), ul.OUE(4, 1.0), ul.OLH(4, 1.0), ul.USS(5, [0, 1], 1.0)):  # the library's samplers
        assert ul.check(mech, key=KEY, draws=1000, trials=TRIALS, alpha=testing.ALPHA)["draws"].status == "pass", mech


def test_float16_draws_are_flagged_with_the_eps_they_realize():
    exact = cm.float16_realized_eps(1e-3)
    assert exact == pytest.approx(np.log(513 / 511), rel=1e-12)  # 3.9e-3 realized for 1e-3 claimed
    rep = _check(cm.Float16Draws(2, 1e-3), draws=2000, trials=2000)
    assert rep.failed == ("draws",), str(rep)
    detail = rep["draws"].detail
    assert "16-bit" in detail and "claimed 0.001" in detail, detail
    estimate, se = (float(v) for v in detail.split("realized eps ~ ")[1].split(" (")[0].split(" +- "))
    assert abs(estimate - exact) <= 6 * se and estimate > 0.001, detail  # the realized eps, measured
