"""``uldp_jax/mechanisms/wheel/_uwheel.py``: uWheel with 003's published z violates ULDP
(docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp); the corrected z passes."""

import pytest

import uldp_jax as ul


@pytest.mark.parametrize("s,l,eps", [(2, 0.3, 1.0), (3, 0.5, 2.0), (4, 0.2, 5.0)])
def test_published_uwheel_violates_uldp(s, l, eps):
    mech = ul.UWheel(s + 2, range(s), eps, l=l, num_hashes=8, z_rule="published_unsafe")
    rep = ul.audit(mech)
    assert not rep.ok and rep.eps > eps
    assert ul.audit(ul.UWheel(s + 2, range(s), eps, l=l, num_hashes=8)).ok
