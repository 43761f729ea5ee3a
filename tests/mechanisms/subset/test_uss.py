"""``uldp_jax/mechanisms/subset/_uss.py``: uSS with k = 1, and GLUTF over GRR, are uRR exactly (their channels mapped
to item columns)."""

import numpy as np
import pytest

import uldp_jax as ul

EPS = (0.1, 0.5, 1.0, 2.0, 5.0)


def _as_item_channel(mech):
    """Maps a GRR-like GLUTF channel (base columns = sensitive items, no pair mass) to item columns."""
    Q = ul.channel(mech).Q
    s, d = mech.s, mech.d
    nonsens = [x for x in range(d) if x not in mech.sensitive]
    out = np.zeros((d, d))
    out[:, list(mech.sensitive)] = Q[:, :s]
    out[:, nonsens] = Q[:, s:s + d - s]
    assert np.all(Q[:, s + d - s:] == 0)  # z = 0: no pairs
    return out


@pytest.mark.parametrize("eps", EPS)
def test_uss_k1_and_glutf_grr_equal_urr(eps):
    for d, sens in [(6, [0, 2, 5]), (9, [1, 2, 3, 4, 7]), (5, [3, 4])]:
        urr = ul.channel(ul.URR(d, sens, eps)).Q
        np.testing.assert_allclose(_as_item_channel(ul.USS(d, sens, eps, k=1)), urr, rtol=1e-13, atol=0)
        np.testing.assert_allclose(_as_item_channel(ul.glutf(ul.GRR(len(sens), eps), d, sens)), urr, rtol=1e-13,
                                   atol=0)
