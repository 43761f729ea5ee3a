"""``ul.Mechanism``'s contract: required members checked at class creation, the documented member table."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _base, _estimation, _protocol

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


def _keep_body(**drop):
    body = {
        "__annotations__": {"d": "int", "eps": "float"},
        "d": ul.static_field(),
        "report_kind": "item",
        "num_outputs": property(lambda self: self.d),
        "perturb_batch": lambda self, key, xs: xs,
        "privacy_spec": lambda self: ul.PrivacySpec.ldp(self.d, self.eps),
    }
    for name in drop:
        body.pop(name)
        body["__annotations__"].pop(name, None)
    return body


def test_a_complete_subclass_is_accepted():
    m = type("Keep", (ul.Mechanism,), _keep_body())(3, 1.0)
    assert m.d == 3 and m.num_outputs == 3


@pytest.mark.parametrize("name", sorted(_protocol.REQUIRED))
def test_a_missing_required_member_is_refused_with_what_to_write(name):
    with pytest.raises(TypeError, match=rf"Keep subclasses ul.Mechanism but does not define {name}\. Write {name}: "):
        type("Keep", (ul.Mechanism,), _keep_body(**{name: True}))


def test_an_abstract_base_skips_the_check():
    base = type("Shared", (ul.Mechanism,), {"report_kind": "item"}, abstract=True)
    body = _keep_body(report_kind=True)
    m = type("Keep", (base,), body)(3, 1.0)
    assert m.report_kind == "item"


def test_an_annotated_class_constant_is_refused():
    body = _keep_body()
    body["__annotations__"]["report_kind"] = "str"
    with pytest.raises(TypeError, match=r"report_kind is annotated .*plain class constant.*report_kind = 'item'"):
        type("Keep", (ul.Mechanism,), body)


FOLDED_INTO_RECORDS = sorted(n for n, t in _protocol.FOLDED.items() if t.endswith("()"))
FOLDED_INTO_FUNCTIONS = sorted(n for n, t in _protocol.FOLDED.items() if not t.endswith("()"))


@pytest.mark.parametrize("name", FOLDED_INTO_RECORDS)
def test_a_member_folded_into_a_record_is_refused_with_what_to_write(name):
    """``count_sampler`` and friends are now ``counts()``, ``report_likelihood`` and friends ``likelihood()``:
    defining one would be silently ignored."""
    body = _keep_body()
    body[name] = lambda self, *args: None
    record = re.escape(_protocol.FOLDED[name])  # "counts()" or "likelihood()"
    member = record.split(r"\(")[0]
    with pytest.raises(TypeError, match=rf"Keep defines {name}, which ul.Mechanism no longer reads: {record} "
                                        rf"replaces it\. Write {record}: `def {member}\(self\)`"):
        type("Keep", (ul.Mechanism,), body)


@pytest.mark.parametrize("name", FOLDED_INTO_FUNCTIONS)
def test_a_member_folded_into_a_function_is_refused_saying_to_delete_it(name):
    """``batch_shape`` and ``validate_grid`` are functions of a mechanism (``ul.mechanisms.core``): a class's own
    copy would be silently ignored."""
    body = _keep_body()
    body[name] = lambda self, *args: None
    function = _protocol.FOLDED[name]
    assert callable(getattr(ul.mechanisms.core, function.split(".")[-1].split("(")[0]))
    with pytest.raises(TypeError, match=rf"Keep defines {name}, which ul.Mechanism no longer reads: "
                                        rf"{re.escape(function)} replaces it\. Delete it: .*{re.escape(function)}"):
        type("Keep", (ul.Mechanism,), body)


def test_a_folded_member_in_a_mixin_is_refused_naming_the_mixin():
    """A mixin before ``Mechanism`` that still defines ``report_index`` would be ignored just the same."""
    mixin = type("Columns", (), {"report_index": lambda self, ys: ys})
    with pytest.raises(TypeError, match=r"Keep defines report_index \(in Columns\), which ul.Mechanism no longer "
                                        r"reads: likelihood\(\) replaces it\. Write likelihood\(\): "
                                        r"`def likelihood\(self\)` returning `_records.Likelihood\("):
        type("Keep", (mixin, ul.Mechanism), _keep_body())


def test_report_kind_as_classvar_annotation_is_accepted():
    body = _keep_body()
    body["__annotations__"]["report_kind"] = "ClassVar[str]"
    m = type("Keep", (ul.Mechanism,), body)(2, jnp.float32(1.0))
    assert m.report_kind == "item"


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
