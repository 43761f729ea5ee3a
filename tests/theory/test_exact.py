"""``uldp_jax/theory/_exact.py``: ``exact_mse`` (risks from the exact channel), its identities and affine choice."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import theory as th

from tests.theory.test_closed_forms import CASES, _p


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("mech,eps", CASES[:22:3])
def test_iid_minus_fixed_on_the_exact_channel(mech, eps):
    """Hand-derived: an unbiased linear estimator's iid and fixed-model MSEs differ by (1 - sum p^2) / n (the
    multinomial spread of the true counts). Checked on ``exact_mse`` (channel moments, not the closed forms,
    whose iid form is built from this identity: comparing those with it would re-test the same line)."""
    p = _p(mech.d, 3)
    for n in (1.0, 50.0):
        diff = th.exact_mse(mech, p, n, "iid") - th.exact_mse(mech, p, n, "fixed")
        np.testing.assert_allclose(diff, (1.0 - np.sum(p**2)) / n, rtol=1e-7)


@pytest.mark.parametrize("mech", [ul.Wheel(4, 1.0, l=0.3, num_hashes=256),
                                  ul.UWheel(6, (0, 2, 3), 1.0, l=0.3, num_hashes=256)])
def test_wheel_nearly_uniform_family(mech):
    """Wheel's q* = l holds for uniform hashing; a 256-function family is within 1% (the estimator's bias)."""
    p = _p(mech.d, 6)
    np.testing.assert_allclose(float(th.mse(mech, p, 10.0)), th.exact_mse(mech, p, 10.0, affine="mechanism"),
                               rtol=1e-2)
    with pytest.raises(ValueError, match="affine"):
        th.exact_mse(mech, p, 10.0)
