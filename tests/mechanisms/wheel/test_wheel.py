"""``uldp_jax.mechanisms.wheel._wheel``: the Wheel's coverage l, capped at large eps and refused below its limit."""

import pytest

import uldp_jax as ul


def test_wheel_coverage_limits():
    assert float(ul.Wheel(6, 100.0).l) == pytest.approx(2.0**-14)
    assert float(ul.UWheel(6, [0, 1], 1e-3).l) < 1.0
    with pytest.raises(ValueError, match="l="):
        ul.Wheel(6, 1.0, l=1e-6)
