"""``uldp_jax/mechanisms/core/_nmse.py``: closed-form nMSEs against pure eq 28, finite in float32 at large eps."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import theory as th

from tests.theory.test_closed_forms import RTOL, _mechs


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_nmse_equals_pure_eq28_and_support_affine(eps):
    for mech in _mechs(eps):
        if type(mech).__name__ in ("HR", "HighLowHR", "BlockHR"):
            continue
        fam = th.family_of(mech)
        s, mask = th._families.sizes(mech, fam)
        P, Q, Z = th.pure_probs(mech)
        for theta_n in (0.0, 0.3, 1.0):
            tn = 0.0 if fam.ldp else theta_n
            np.testing.assert_allclose(float(th.nmse(mech, theta_n)), float(th.pure_nmse(P, Q, Z, s, tn)),
                                       rtol=RTOL)
        mom = th.support_moments(mech)
        a, b = mech.estimator().affine
        if getattr(mech, "z_rule", "max") == "published_unsafe":  # 003's published z: estimator uses its z*
            continue
        np.testing.assert_allclose(mom.a, np.asarray(a), rtol=RTOL)
        np.testing.assert_allclose(mom.b, np.asarray(b), rtol=RTOL, atol=1e-300)


def test_large_eps_finite_float32():
    with jax.enable_x64(False):
        m = ul.URAP(6, (0, 1), 50.0, theta=0.5)
        v = th.mse(m, np.full(6, 1 / 6), 100.0)
        assert np.isfinite(float(v)) and float(v) > 0
        for f in (th.uss_nmse, th.uue_nmse, th.ulh_nmse, th.uwheel_nmse):
            assert np.isfinite(float(f(50.0, 424.0, 0.5, 0.4 if f in (th.uue_nmse, th.uwheel_nmse) else 3.0)))
