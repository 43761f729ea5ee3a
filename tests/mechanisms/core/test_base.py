"""``ul.Mechanism``'s contract (``uldp_jax/mechanisms/core/_base.py``): the documented member table, the required
members declared on the base, the records and the functions of a mechanism (what class creation refuses:
tests/mechanisms/core/test_protocol.py)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _base, _estimation, _protocol

from tests.mechanisms.core._bodies import _keep_body
from tests.outside_mechanisms import Keep


def _table_members() -> list[str]:
    """Member names in the first column of the table in ``Mechanism``'s module docstring."""
    table = _base.__doc__.split("====\n", 2)[2].split("\n====")[0]  # the rows between the header and the end
    return re.findall(r"^``(\w+)", table, re.M)


def test_public_members_match_the_documented_table():
    declared = set(dir(ul.Mechanism)) | set(ul.Mechanism.__annotations__)  # d, num_outputs: declared, no value
    public = sorted(n for n in declared if not n.startswith("_"))
    documented = _table_members()
    assert len(documented) == len(set(documented))
    assert public == sorted(documented)
    # issue 25 asks for ~15; pure_probs() is a kept public name (GLUTF issue's contract), revealed_inputs(ys) is
    # the protected-report predicate ULDP audits read (issue 50)
    assert len(public) == 16


def test_required_members_are_declared_on_the_base():
    for name in _protocol.REQUIRED:
        assert name in ul.Mechanism.__annotations__ or name in vars(ul.Mechanism), name
    assert set(_protocol.REQUIRED) <= set(_table_members())


def test_closed_form_tuned_sets_the_parameter_and_records_theta_n():
    urap = ul.URAP(6, (0, 1), 1.0)
    tuned = urap.closed_form().tuned(urap, 0.3, 0.2)  # URAP records no theta_n
    assert float(tuned.theta) == 0.3 and type(tuned) is ul.URAP
    ulh = ul.ULH(6, (0, 1, 2), 1.0, g=3, family="full")
    tuned = ulh.closed_form().tuned(ulh, 4, 0.25)  # rebuild: the "full" family follows g; theta_n recorded
    assert tuned.g == 4 and tuned.theta_n == 0.25 and tuned.num_hashes == 4**3  # g**s hash functions
    olh = ul.OLH(5, 1.0, g=3, family="full")
    tuned = olh.closed_form().tuned(olh, 6)
    assert tuned.g == 6 and tuned.family_size == ul.OLH(5, 1.0, g=6, family="full").family_size


def test_estimator_records():
    keep = type("Keep", (ul.Mechanism,), _keep_body())(3, 1.0)
    assert keep.estimator() is None and _estimation.affine(keep) is None
    a, b = ul.GRR(4, 1.0).estimator().affine
    assert a.shape == b.shape == (4,)
    hr = ul.HR(6, 1.0)
    est = hr.estimator()
    assert est.affine is None and est.variance == hr.item_variance


@pytest.mark.parametrize("make", [lambda: ul.GRR(6, 1.0), lambda: ul.USS(8, [0, 1, 2], 1.0),
                                  lambda: ul.UUE(8, [0, 1], 1.0), lambda: ul.ULH(8, [0, 1], 1.0)])
def test_pure_probs_is_kept_as_the_public_name(make):
    """The GLUTF issue's contract: ``mech.pure_probs()`` -> (p*, q*, z*) as floats, read from ``pure()``."""
    mech = make()
    probs = mech.pure_probs()
    assert all(isinstance(v, float) for v in probs)
    pure = mech.pure()
    assert probs[0] == pytest.approx(float(pure.p), rel=1e-6) and probs[1] == pytest.approx(float(pure.q), rel=1e-6)


def test_pure_probs_refuses_a_mechanism_that_is_not_pure():
    with pytest.raises(ValueError, match="not pure"):
        ul.glutf(ul.GRR(3, 1.0), 8, [0, 1, 2], rule="non_pure").pure_probs()


def test_functions_of_a_mechanism_read_the_records_with_their_defaults():
    """``ul.mechanisms.core``'s functions replace the folded members: defaults for a plain item mechanism, the
    record's answer where a mechanism gives one."""
    core = ul.mechanisms.core
    keep = type("Keep", (ul.Mechanism,), _keep_body())(3, 1.0)
    assert keep.reports() is None
    assert core.num_stats(keep) == 3 and core.comm_bits(keep) == pytest.approx(np.log2(3))
    core.check_reports(keep, jnp.asarray([0, 2], jnp.int32))
    with pytest.raises(ValueError, match="ys"):
        core.check_reports(keep, jnp.asarray([0, 3], jnp.int32))
    assert core.grid_shape(keep) == () and core.validate_grid(keep) is keep
    grid = jax.vmap(lambda e: ul.GRR(4, e))(jnp.asarray([0.5, 1.0, 2.0]))
    assert core.grid_shape(grid) == (3,)
    with pytest.raises(ValueError, match=r"mech.*\(1,\)"):
        core.validate_grid(jax.vmap(lambda e: ul.GRR(4, e))(jnp.asarray([0.5, -1.0])))
    olh = ul.OLH(10, 1.0, g=4)
    assert core.num_stats(olh) == 10 and core.comm_bits(olh) == pytest.approx(2.0 + 32.0)
    stats = jnp.asarray([5, 1, 1, 1], jnp.int32)
    np.testing.assert_allclose(np.asarray(core.debias(ul.GRR(4, 1.0), stats, 8)),
                               np.asarray(_estimation.default_debias(ul.GRR(4, 1.0), stats, 8)))


def test_a_reports_method_must_return_a_reports_record():
    body = _keep_body()
    body["reports"] = lambda self: {"stats": 3}
    m = type("Keep", (ul.Mechanism,), body)(3, 1.0)
    with pytest.raises(TypeError, match=r"Keep.reports\(\) to return a Reports record"):
        ul.mechanisms.core.num_stats(m)


def test_mechanisms_are_hashable_by_value():
    assert hash(ul.GRR(6, 1.0)) == hash(ul.GRR(6, 1.0)) and ul.GRR(6, 1.0) == ul.GRR(6, 1.0)
    assert hash(ul.GRR(6, 1.0)) != hash(ul.GRR(6, 2.0))
    assert len({ul.URR(6, [0, 1], 1.0), ul.URR(6, [1, 0], 1.0), Keep(4, 1.0), Keep(4, 1.0)}) == 2
