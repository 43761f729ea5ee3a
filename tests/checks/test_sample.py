"""``uldp_jax/checks/_sample.py``: the reports row of ``ul.check`` names a report outside the space and its input."""

from __future__ import annotations

import pytest

from tests import check_mutants as cm
from tests.test_check_mutants import _check


def test_reports_outside_the_space_name_the_report_and_its_input_never_a_numpy_error():
    rep = _check(cm.NegativeReports(4, 1.0), draws=2000, trials=2000)
    assert rep["reports"].detail.startswith("outside the declared report space: input 0 gave report -1"), str(rep)
    assert rep["sampler"].status == "skip" and rep["leak"].status == "skip"
    frac = _check(cm.FractionLeak(4, 1.0), draws=2000, trials=2000)["reports"].detail
    x, y = frac.split("input ")[1].split(" gave report ")
    assert float(y.split(" ")[0]) % 1 == pytest.approx(int(x) / 10, abs=1e-6), frac  # the leaked input, shown
