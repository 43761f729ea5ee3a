"""``uldp_jax.tuning._optimize``: tuning honours a closed form's declared domain (a family defined outside the
package)."""

import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core._family import Family

from tests.outside_mechanisms import Keep


def _family(domain, integer=False, closed=False):
    # n * MSE = (w - 1)^2 + 1: the unconstrained optimum w = 1 lies below every domain here
    return Family("Wide", "width", lambda e, s, th, w: (w - 1.0) ** 2 + 1.0, None, ldp=True, integer=integer,
                  domain=domain, closed=closed)


OPEN, INTEGER, CLOSED = _family(lambda s: (2.0, 1000.0)), _family(lambda s: (3, 50), integer=True), \
    _family(lambda s: (2.0, 1000.0), closed=True)


class WideOpen(Keep):
    width: float = 5.0

    def closed_form(self):
        return OPEN


class WideInteger(Keep):
    width: int = ul.static_field(default=7)

    def closed_form(self):
        return INTEGER


class WideClosed(Keep):
    width: float = 5.0

    def closed_form(self):
        return CLOSED


def test_tune_honours_an_outside_family_domain():
    w_open = float(ul.tune(WideOpen(4, 1.0), steps=300).width)
    assert 2.0 < w_open < 2.1  # open: approaches its lower end, never reaches it (the old tuner returned 1)
    assert ul.tune(WideInteger(4, 1.0), steps=300).width == 3  # integer: the smallest integer of [3, 50]
    assert float(ul.tune(WideClosed(4, 1.0), steps=300).width) == pytest.approx(2.0, abs=0.1)
    with pytest.raises(ValueError, match="declared domain"):
        ul.tuning._optimize.check_in_domain(OPEN, 4, 2.0)
    with pytest.raises(ValueError, match="declared domain"):
        ul.tuning._optimize.check_in_domain(INTEGER, 4, 3.5)
