"""``ul.replace`` (``mechanisms/core/_pytree.py``) on every registered mechanism: no change round-trips, one
replaced field changes exactly that field, and what the constructor refuses is refused (the class's
``__post_init__`` checks run on the replaced fields, PUM's included)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _pytree, _registry
from uldp_jax.mechanisms.core._records import likelihood_of

EXAMPLES = _registry.examples()


def _init_fields(m) -> list[str]:
    return [f.name for f in dataclasses.fields(m) if f.init]


def _same(a, b) -> bool:
    return _pytree.hashable(a) == _pytree.hashable(b)


@pytest.fixture(params=list(EXAMPLES))
def name(request):
    return request.param


def test_replace_without_changes_round_trips(name):
    m = EXAMPLES[name](1.0)
    r = ul.replace(m)
    assert r is not m and type(r) is type(m) and r == m and hash(r) == hash(m)
    assert all(_same(getattr(r, f.name), getattr(m, f.name)) for f in dataclasses.fields(m))  # derived ones too


def test_replacing_one_field_changes_exactly_that_field(name):
    m, other = EXAMPLES[name](1.0), EXAMPLES[name](2.0)
    changed = [f for f in _init_fields(m) if not _same(getattr(m, f), getattr(other, f))]
    assert changed, name  # the example's eps reaches a field
    for f in changed:
        r = ul.replace(m, **{f: getattr(other, f)})
        assert _same(getattr(r, f), getattr(other, f)), f
        assert all(_same(getattr(r, g), getattr(m, g)) for g in _init_fields(m) if g != f), f
    both = ul.replace(m, **{f: getattr(other, f) for f in changed})
    density = likelihood_of(both).density
    if density is not None:  # real-valued reports (SHE): no finite channel; the same density
        np.testing.assert_array_equal(density(), likelihood_of(other).density())
    else:
        np.testing.assert_allclose(ul.channel(both).Q, ul.channel(other).Q, rtol=1e-12, atol=1e-15)


def test_invalid_replacements_are_refused_as_the_constructor_refuses_them(name):
    m = EXAMPLES[name](1.0)
    with pytest.raises(TypeError, match="no_such_field"):
        ul.replace(m, no_such_field=1)
    fields = _init_fields(m)
    checked = 0
    if "d" in fields:
        with pytest.raises(ValueError, match="d=1"):
            ul.replace(m, d=1)
        checked += 1
    for f in (f for f in fields if f.startswith("eps")):
        with pytest.raises(ValueError, match="eps"):
            ul.replace(m, **{f: -1.0})
        checked += 1
    for f in (f for f in fields if isinstance(getattr(m, f), ul.Mechanism)):  # a nested mechanism (GLUTF, PUM)
        with pytest.raises(ValueError):
            ul.replace(m, **{f: ul.GRR(11, 1.0)})  # over the wrong domain
        checked += 1
    assert checked, name  # every registered mechanism has a checked field


def test_derived_fields_are_not_replaced():
    with pytest.raises(ValueError, match="default_theta"):
        ul.replace(ul.RAPPOR(4, 1.0), default_theta=False)
    with pytest.raises(TypeError, match="mechanism"):
        ul.replace(ul.GRR, eps=1.0)


def test_default_theta_follows_eps_only_while_it_is_eps_default():
    """RAPPOR's default ``theta`` (from eps) survives ``replace`` of another field; a new eps keeps theta as it
    was (one field changes), now an explicit theta."""
    m = ul.RAPPOR(4, 1.0)
    assert m.default_theta and ul.replace(m).default_theta
    r = ul.replace(m, eps=2.0)
    assert not r.default_theta and float(r.theta) == float(m.theta) and r == ul.RAPPOR(4, 2.0, theta=m.theta)
    assert ul.replace(ul.URAP(5, (0, 2), 1.0), sensitive=(1,)).default_theta


def test_pum_replace_checks_its_common_mechanism():
    pum = ul.PUM(5, (0, 2, 3), 2, 1.0)
    r = ul.replace(pum, cmn=ul.URR(7, (0, 2, 3, 5, 6), 2.0))
    assert float(r.eps) == 2.0 and r.d == 5 and r.num_tags == 2
    with pytest.raises(ValueError, match=r"cmn.sensitive"):
        ul.replace(pum, cmn=ul.URR(7, (0, 2, 3), 1.0))
    with pytest.raises(ValueError, match="sensitive"):
        ul.replace(pum, sensitive=(0, 1, 2, 3, 4))
