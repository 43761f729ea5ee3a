"""The protocol for report methods registered from outside the package (``uldp_jax.estimation._registry``): inside
``ul.simulate`` they receive each repetition's reports in ``ul.perturb``'s form, concrete, and those reports
aggregate to the repetition's ``stats``."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import _registry

RECEIVED = []


def outside_method(mech, ys):
    """A report method defined outside ``uldp_jax``: the debiased histogram of the reports it is given."""
    RECEIVED.append(ys)
    return ul.estimate(mech, ys, "emp")


@pytest.fixture(scope="module")
def registered():
    ul.estimation.register_method("test-outside", outside_method, input="reports")
    yield "test-outside"
    _registry._METHODS.pop("test-outside", None)


CASES = {  # name -> (mechanism, the report type ul.perturb returns for it)
    "RAPPOR": (lambda: ul.RAPPOR(10, 2.0), np.ndarray),
    "OLH": (lambda: ul.OLH(12, 1.0), ul.mechanisms.HashReport),
    "GRR": (lambda: ul.GRR(12, 1.0), np.ndarray),
    "RAPPOR-compact": (lambda: ul.RAPPOR(1024, 8.0), ul.CompactBits),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if "compact" in n else n for n in sorted(CASES)])
def test_an_outside_report_method_gets_perturbs_form(registered, name):
    make, kind = CASES[name]
    mech = make()
    assert _registry.get_method(registered, mech).forms == ()
    xs = np.arange(300) % min(mech.d, 40)
    key = jax.random.key(5)
    RECEIVED.clear()
    res = ul.simulate(key, mech, xs=xs, reps=2, methods=(registered, "emp"), block_size=128, path="per_user")
    assert len(RECEIVED) == 2  # one concrete call per repetition
    direct = ul.perturb(key, mech, xs)
    for r, ys in enumerate(RECEIVED):
        leaf = jax.tree_util.tree_leaves(ys)[0]
        assert isinstance(ys, kind) or (kind is np.ndarray and isinstance(ys, jax.Array)), type(ys)
        assert not isinstance(leaf, jax.core.Tracer) and leaf.shape[0] == 300
        assert type(ys) is type(direct) and leaf.dtype == jax.tree_util.tree_leaves(direct)[0].dtype
        np.testing.assert_array_equal(np.asarray(ul.aggregate(mech, ys)), np.asarray(res.stats[r]))
        np.testing.assert_allclose(np.asarray(res.estimates[registered][r]), np.asarray(res.estimates["emp"][r]),
                                   rtol=1e-6, atol=1e-6)


def test_a_grid_is_estimated_point_by_point(registered):
    grid = jax.vmap(lambda e: ul.RAPPOR(10, e))(np.array([0.5, 2.0], np.float32))
    RECEIVED.clear()
    res = ul.simulate(jax.random.key(6), grid, xs=np.arange(200) % 10, reps=2, methods=(registered, "emp"),
                      block_size=128, path="per_user")
    assert len(RECEIVED) == 4 and all(ys.shape == (200, 10) for ys in RECEIVED)
    np.testing.assert_allclose(np.asarray(res.estimates[registered]), np.asarray(res.estimates["emp"]),
                               rtol=1e-6, atol=1e-6)


def test_forms_are_checked():
    with pytest.raises(ValueError, match="forms"):
        ul.estimation.register_method("test-bad-forms", outside_method, input="reports", forms=("dense",))
