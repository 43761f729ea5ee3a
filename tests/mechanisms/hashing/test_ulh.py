"""``uldp_jax/mechanisms/hashing/_ulh.py``: uLH with 003's published z violates ULDP by the spec's worst ratio
(docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp), the corrected z passes, and the two agree for one
sensitive item."""

import numpy as np
import pytest

import uldp_jax as ul


@pytest.mark.parametrize("s,g,eps", [(2, 2, 1.0), (3, 2, 2.0), (4, 3, 5.0), (5, 2, 5.0), (3, 4, 0.5)])
def test_published_ulh_violates_uldp_by_spec_ratio(s, g, eps):
    d = s + 3
    mech = ul.ULH(d, range(s), eps, g=g, family="full", z_rule="published_unsafe")
    rep = ul.audit(mech)
    assert not rep.ok and rep.eps > eps
    e = np.exp(eps)
    expected = eps + np.log1p((s - 1) * (e - 1) / (g * (e + s - 1)))  # docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp worst ratio
    np.testing.assert_allclose(rep.eps, expected, rtol=1e-9)
    assert ul.audit(ul.ULH(d, range(s), eps, g=g, family="full")).ok


def test_published_z_equals_corrected_for_one_sensitive_item():
    a = ul.ULH(4, [2], 1.0, g=3, family="full", z_rule="published_unsafe")
    b = ul.ULH(4, [2], 1.0, g=3, family="full")
    np.testing.assert_allclose(ul.channel(a).Q, ul.channel(b).Q, rtol=1e-12)
    assert ul.audit(a).ok
