"""``uldp_jax/checks/_likelihood.py``: the likelihood row of ``ul.check`` against the exact channel."""

from __future__ import annotations

import uldp_jax as ul
from uldp_jax import testing

from tests import check_mutants as cm
from tests.test_check_mutants import _check


def test_the_likelihood_row_checks_a_users_likelihood_against_the_exact_channel():
    right = _check(cm.THERightRates(4, 1.0), draws=2000, trials=2000, alpha=testing.ALPHA)
    assert right.ok and right["likelihood"].status == "pass" and "report" in right["likelihood"].detail, str(right)
    for mech in (ul.OUE(4, 1.0), ul.URAP(5, [0, 2], 1.0), ul.OLH(4, 1.0, family="full")):  # product and report forms
        row = _check(mech, draws=2000, trials=2000, alpha=testing.ALPHA)["likelihood"]
        assert row.status == "pass", (mech, row)
