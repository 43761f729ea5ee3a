"""``uldp_jax/checks/_leak.py``: the leak row of ``ul.check`` (the black-box eps bound from fresh reports)."""

from __future__ import annotations

import jax
import pytest

import uldp_jax as ul
from uldp_jax import testing

from tests import check_mutants as cm
from tests.test_check_mutants import _check


def test_a_leak_into_rare_outputs_is_caught_by_the_black_box_bound_with_its_number():
    """4% of reports name the input in outputs the channel calls rare: every chi-square cell is pooled (p = 1)."""
    rep = _check(cm.RareLeak(4, 1.0))
    assert rep["sampler"].status == "pass" and rep.failed == ("leak",), str(rep)
    assert "black-box eps >= " in rep["leak"].detail and float(rep["leak"].detail.split(">= ")[1].split(",")[0]) > 1
    honest = _check(cm.Padded(4, 1.0), alpha=testing.ALPHA)  # the same channel, sampled honestly
    assert honest.ok and honest["leak"].status == "pass", str(honest)


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow) for s in range(1, 8)])
def test_a_sampler_spending_eps_1_05_behind_a_channel_of_eps_1_fails_for_every_key(seed):
    rep = ul.check(cm.SlightlyLeaky(8, 1.0), key=jax.random.key(seed))
    assert rep["leak"].status == "FAIL", str(rep)  # the chi-square test alone saw it for 3 of these 8 keys
