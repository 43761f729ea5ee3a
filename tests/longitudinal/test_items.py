"""``uldp_jax/longitudinal/_items.py``: L-GRR's two-stage probabilities against multi-freq-ldpy's ``L_GRR_Client``
(ported): the peer's closed form on binary domains, and one report costing exactly eps_1 on larger ones."""

import numpy as np
import pytest

from uldp_jax import longitudinal as lg

from tests.longitudinal._protocols import D


# ---- against multi-freq-ldpy (long_freq_est): a ported reference runs without it; the package itself if installed

def _ref_lgrr(k, eps_perm, eps_1):
    """multi-freq-ldpy ``L_GRR_Client``'s probabilities, ported."""
    p1 = np.exp(eps_perm) / (np.exp(eps_perm) + k - 1)
    q1 = (1 - p1) / (k - 1)
    e = np.exp(eps_1)
    p2 = (q1 - e * p1) / ((-p1 * e) + k * q1 * e - q1 * e - p1 * (k - 1) + q1)
    return p1, q1, p2, (1 - p2) / (k - 1)


def _one_report_eps(p1, q1, p2, q2, k):
    prr = np.full((k, k), q1) + np.eye(k) * (p1 - q1)
    irr = np.full((k, k), q2) + np.eye(k) * (p2 - q2)
    q = prr @ irr
    return float(np.max(np.log(q.max(0) / q.min(0))))


@pytest.mark.parametrize("eps_perm,eps_1", [(2.0, 1.0), (4.0, 0.5), (1.0, 0.9)])
def test_lgrr_probabilities_against_the_peers(eps_perm, eps_1):
    """Binary domains: the peer's closed form. Larger domains: the peer's IRR (the binary form with k put in) makes
    one report cost less than eps_1 (0.90 at eps 2/1, k = 4: utility given away), ours exactly eps_1."""
    mech = lg.LGRR(2, eps_perm, eps_1)
    np.testing.assert_allclose((mech.p1, mech.q1, mech.p2, mech.q2), _ref_lgrr(2, eps_perm, eps_1), rtol=1e-10)
    mech = lg.LGRR(D, eps_perm, eps_1)
    assert _one_report_eps(mech.p1, mech.q1, mech.p2, mech.q2, D) == pytest.approx(eps_1, abs=1e-9)
    assert _one_report_eps(*_ref_lgrr(D, eps_perm, eps_1), D) < eps_1 - 1e-3
