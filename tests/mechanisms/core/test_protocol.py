"""``uldp_jax/mechanisms/core/_protocol.py``: what ``Mechanism.__init_subclass__`` checks at class creation: a missing
required member is refused with what to write (abstract bases skip the check), class constants are plain (an
annotation is refused, ``ClassVar`` accepted), and a member folded into a record or a function is refused with its
replacement, in a mixin too."""

import re

import jax.numpy as jnp
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _protocol

from tests.mechanisms.core._bodies import _keep_body


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
