"""``uldp_jax/longitudinal/_bits.py``: memoized bit-vector protocols: dBitFlipPM's cost whatever tau, and L-SUE's
iid variance against multi-freq-ldpy's ``VAR_Long_Pure`` (ported, and the package itself if installed)."""

import numpy as np
import pytest

from uldp_jax import longitudinal as lg

from tests.longitudinal._protocols import D


def test_dbitflip_costs_eps_perm_whatever_tau():
    """The closed form, and the exact channel of its sequences (its SUE bits keep with e^{eps/2}/(e^{eps/2}+1))."""
    mech = lg.DBitFlipPM(8, 1.5, b=4, d_bits=2)
    assert [float(mech.closed_form_eps(t)) for t in (1, 10, 100)] == [1.5, 1.5, 1.5]
    assert [lg.sequence_eps(mech, t) for t in (1, 2)] == pytest.approx([1.5, 1.5], abs=1e-9)
    assert float(lg.DBitFlipPM(8, 1.5, b=4, d_bits=1).closed_form_eps(5)) == pytest.approx(0.75)


# ---- against multi-freq-ldpy (long_freq_est): a ported reference runs without it; the package itself if installed

def _ref_var_long_pure(p1, q1, p2, q2, n, f):
    """multi-freq-ldpy ``VAR_Long_Pure``, ported (iid users; exact for symmetric pairs)."""
    sig = f * (2 * p1 * p2 - 2 * p1 * q2 + 2 * q2 - 1) + p2 * q1 + q2 * (1 - q1)
    return sig * (1 - sig) / (n * (p1 - q1) ** 2 * (p2 - q2) ** 2)


def test_sue_iid_variance_equals_the_peers_var_long_pure():
    """L-SUE (symmetric PRR and IRR): the iid-model variance is multi-freq-ldpy's ``VAR_Long_Pure``."""
    mech = lg.l_sue(D, 2.0, 1.0)
    f = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(lg.variance_rounds(mech, f, 1000, iid=True), _ref_var_long_pure(*mech.p, 1000, f),
                               rtol=1e-10)


def test_against_the_installed_peer():
    peer = pytest.importorskip("multi_freq_ldpy.long_freq_est.Variance_LONG_PURE")
    mech = lg.l_sue(D, 3.0, 1.5)
    f = np.array([0.4, 0.3, 0.2, 0.1])
    np.testing.assert_allclose(lg.variance_rounds(mech, f, 500, iid=True), peer.VAR_Long_Pure(*mech.p, n=500, f=f),
                               rtol=1e-10)
