"""uBD, PGR and HPGR at the ends of the exact eps range (docs/mechanisms.md: [1e-6, 100], tested on [1e-3, 50]):
built with their defaults, channels are probability matrices, audits pass and tight, debias exact on the channel."""

from __future__ import annotations

import numpy as np
import pytest

import uldp_jax as ul

BUILD = {
    "UBD": lambda e: ul.UBD(6, (0, 2, 3), e),
    "UBD-mixed": lambda e: ul.UBD(6, (0, 2, 3), e, sizes=(1, 2, 3), weights=(0.5, 0.3, 0.2), alpha=0.5),
    "PGR": lambda e: ul.PGR(6, e),
    "HPGR": lambda e: ul.HPGR(6, e, h=2),
}


@pytest.mark.parametrize("name", sorted(BUILD))
@pytest.mark.parametrize("eps", [1e-3, 0.5, 50.0, 100.0])
def test_extreme_eps(name, eps, x64):
    m = BUILD[name](eps)
    Q, _ = ul.channel(m)
    assert np.all(Q >= 0) and np.allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    rep = ul.audit(m)
    assert rep.ok and rep.tight, rep
    W, c = ul.theory.estimator_matrix(m)
    np.testing.assert_allclose(Q @ (W + c), np.eye(m.d), atol=1e-6 * max(1.0, 1.0 / eps**2))
