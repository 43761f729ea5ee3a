"""``uldp_jax/checks/_estimator.py``: the debias and rank rows of ``ul.check`` (a given or missing statistic)."""

from __future__ import annotations

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

from tests import check_mutants as cm
from tests.test_check import KEY, TRIALS
from tests.test_check_mutants import _check


def test_check_warns_not_fails_on_a_declared_finite_hash_family():
    # Wheel's estimator models an ideal hash family; 64 seeds give it a small exact bias that it declares
    # (estimator().exact is False): a library mechanism must not fail the library's own check for it.
    rep = ul.check(ul.Wheel(4, 1.0, l=0.3, num_hashes=64), key=KEY, draws=1000, trials=TRIALS, alpha=testing.ALPHA)
    assert rep.ok and rep["debias"].status == "warn" and "exact is False" in rep["debias"].detail, str(rep)
    # the same bias without the declaration is still a failure (BiasedDebias above); an exact estimator passes
    assert ul.check(ul.OUE(4, 1.0), key=KEY, draws=1000, trials=TRIALS, alpha=testing.ALPHA)["debias"].status == "pass"


def test_a_custom_report_kind_skips_debias_and_rank_without_a_statistic_and_says_so():
    rep = _check(cm.CMS(4, 1.0), alpha=testing.ALPHA)
    assert rep.skipped == ("debias", "rank") and rep.verdict == "ok (2 of 9 checks skipped)", str(rep)
    assert str(rep).splitlines()[0] == "ul.check(CMS): ok (2 of 9 checks skipped)"
    assert "statistic=" in rep["debias"].detail


def test_the_standard_cms_estimator_fails_debias_given_the_statistic():
    mech = cm.CMS(4, 1.0)
    rep = _check(mech, statistic=mech.statistic(), draws=2000, trials=2000)
    assert rep.failed == ("debias",) and rep["rank"].status == "pass", str(rep)
    assert "max |E[debias] - p| = 0.667" in rep["debias"].detail, rep["debias"].detail
    with pytest.raises(ValueError, match="statistic"):
        ul.check(mech, statistic=np.zeros((3, 3)))
    wrong = mech.statistic().copy()
    wrong[:, -1] = 0.0  # forgets the per-row counts: aggregate disagrees
    assert "statistic is wrong" in _check(mech, statistic=wrong, draws=2000, trials=2000)["debias"].detail
