"""The mechanism registry (``mechanisms/core/_registry.py``) against what the package exports.

The conformance suite, ``uldp list`` and the docs' mechanism page read the registry; the package's exports are
written out (``__all__``, as the style guide asks), so these checks tie the two together: a mechanism that is
exported but not registered (it would escape the conformance suite) or registered but not exported fails here.
"""

import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _registry


def _exported_classes() -> set[str]:
    return {n for n in ul.__all__ if isinstance(getattr(ul, n), type) and issubclass(getattr(ul, n), ul.Mechanism)
            and getattr(ul, n) is not ul.Mechanism}


def test_every_exported_mechanism_class_is_registered():
    assert _exported_classes() - set(ul.mechanisms.examples()) == set()


@pytest.mark.parametrize("name", list(ul.mechanisms.examples()))
def test_every_registered_constructor_is_exported_and_builds_a_mechanism(name):
    assert name in ul.__all__
    assert isinstance(ul.mechanisms.examples()[name](1.0), ul.Mechanism)


def test_a_name_registers_once():
    name = next(iter(ul.mechanisms.examples()))
    with pytest.raises(ValueError, match="registered twice"):
        _registry.register(name, lambda e: None)


def test_the_cli_lists_the_registry(capsys):
    from uldp_jax import cli

    cli.main(["list"])
    out = capsys.readouterr().out
    assert all(name in out for name in ul.mechanisms.examples())
