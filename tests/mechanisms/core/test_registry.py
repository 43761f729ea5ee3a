"""The mechanism registry (``mechanisms/core/_registry.py``) drives the exports, the conformance suite's factories
and ``uldp list``: a new library mechanism is one module, its test file and one ``register`` line.

Proved here with a throw-away mechanism registered in a fixture (and unregistered after it): it reaches
``uldp_jax.mechanisms`` (and ``__all__``) when the package is re-executed, the list of constructors the top level
binds, ``uldp list`` and the conformance factories, with no other file touched. And no exported mechanism escapes
the registry: every public constructor of ``uldp_jax`` and ``uldp_jax.mechanisms`` is a registered one.
"""

import ast
import importlib
import importlib.util
import inspect
import pathlib
import typing

import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _registry

from tests.library_mechanisms import distinct_examples

CONFORMANCE = pathlib.Path(__file__).resolve().parents[2] / "test_conformance.py"


class ThrowawayRR(ul.GRR):
    """GRR under a new name: a stand-in for a new library mechanism (its class and one ``register`` line)."""


@pytest.fixture
def throwaway():
    _registry.register(ThrowawayRR, lambda e: ThrowawayRR(5, e))
    try:
        yield "ThrowawayRR"
    finally:
        _registry.unregister("ThrowawayRR")


def _is_mechanism_constructor(obj) -> bool:
    """A Mechanism subclass, or a function whose annotated return is one (``OUE``, ``Warner``, ``glutf``)."""
    if inspect.isclass(obj):
        return issubclass(obj, ul.Mechanism) and obj is not ul.Mechanism
    if inspect.isfunction(obj):
        ret = typing.get_type_hints(obj).get("return")
        return inspect.isclass(ret) and issubclass(ret, ul.Mechanism)
    return False


@pytest.mark.parametrize("module", [ul, ul.mechanisms], ids=["uldp_jax", "uldp_jax.mechanisms"])
def test_no_exported_mechanism_escapes_the_registry(module):
    exported = {n for n in module.__all__ if _is_mechanism_constructor(getattr(module, n))}
    assert exported, "the check found no mechanism constructor at all"
    assert exported - set(_registry.constructors()) == set()
    assert {"GRR", "OUE", "Warner", "glutf", "HadamardResponse"} <= exported  # classes and functions alike


def test_the_exports_are_the_registered_constructors():
    regs = _registry.constructors()
    assert set(regs) <= set(ul.__all__)
    assert all(getattr(ul, n) is c for n, c in regs.items())
    family = {n for n, c in regs.items() if c.__module__.startswith("uldp_jax.mechanisms.")}
    assert family <= set(ul.mechanisms.__all__) and "PUM" in set(regs) - family  # PUM lives in uldp_jax.pum
    assert all(getattr(ul.mechanisms, n) is regs[n] for n in family)


@pytest.mark.parametrize("name", list(_registry.examples()))
def test_every_registered_example_builds_its_constructors_mechanism(name):
    m = _registry.examples()[name](1.0)
    assert isinstance(m, ul.Mechanism)
    ctor = _registry.constructors()[name]
    if inspect.isclass(ctor):
        assert isinstance(m, ctor)


def test_register_refuses_a_second_registration_and_non_callables():
    name, ctor = next(iter(_registry.constructors().items()))
    with pytest.raises(ValueError, match="registered twice"):
        _registry.register(ctor, lambda e: None)
    with pytest.raises(TypeError, match="constructor"):
        _registry.register("GRR", lambda e: None)
    with pytest.raises(TypeError, match="example"):
        _registry.register(ThrowawayRR, None)
    with pytest.raises(ValueError, match="name"):
        _registry.unregister("NoSuchMechanism")
    assert name in _registry.constructors()


def test_a_registered_mechanism_is_exported_with_no_export_edit(throwaway):
    assert _registry.constructors()[throwaway] is ThrowawayRR  # what uldp_jax binds and lists (its __init__)
    try:
        importlib.reload(ul.mechanisms)  # re-runs uldp_jax/mechanisms/__init__.py as it is on disk
        assert ul.mechanisms.ThrowawayRR is ThrowawayRR and throwaway in ul.mechanisms.__all__
    finally:
        _registry.unregister(throwaway)
        importlib.reload(ul.mechanisms)
        del ul.mechanisms.ThrowawayRR
        _registry.register(ThrowawayRR, lambda e: ThrowawayRR(5, e))  # the fixture unregisters it
    assert throwaway not in ul.mechanisms.__all__ and ul.mechanisms.GRR is ul.GRR


def test_a_registered_mechanism_is_listed_by_the_cli(throwaway, capsys):
    from uldp_jax import cli

    cli.main(["list"])
    out = capsys.readouterr().out
    assert all(name in out for name in _registry.examples())
    assert "ThrowawayRR(" in out  # the example's repr


def test_the_factory_tables_drop_only_repeated_instances():
    """tests/library_mechanisms.py feeds the conformance suite, tests/mechanisms/core/test_grid_check.py and
    tests/theory/test_grid.py: every registered example's instance is in it, once (SUE repeats RAPPOR's example,
    glutf GLUTF's)."""
    reprs = [repr(make(1.0)) for make in distinct_examples().values()]
    assert len(reprs) == len(set(reprs))
    assert {repr(make(1.0)) for make in _registry.examples().values()} == set(reprs)
    assert {"SUE", "glutf"}.isdisjoint(distinct_examples()) and {"RAPPOR", "GLUTF", "Mangat"} <= set(distinct_examples())


def test_a_registered_mechanism_joins_the_factory_tables(throwaway):
    assert throwaway in distinct_examples()
    spec = importlib.util.spec_from_file_location("conformance_for_registry", CONFORMANCE)  # the suite's own table
    conformance = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conformance)
    assert throwaway in conformance._factories()
    assert set(conformance._factories()) - {"KeepRR", throwaway} <= set(_registry.examples())


# ---- what static tools see (py.typed): no type checker needed, the same syntax they read --------------------------

def _static_star_modules(path: pathlib.Path) -> list[str]:
    """The modules ``path`` star-imports under ``if typing.TYPE_CHECKING:`` (what type checkers read instead of the
    runtime ``globals().update(constructors())``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            out += [n.module for n in node.body
                    if isinstance(n, ast.ImportFrom) and [a.name for a in n.names] == ["*"]]
    return out


def _reexported(module: str) -> set[str]:
    """Names ``module`` re-exports for type checkers: ``from x import N as N`` (PEP 484's explicit re-export)."""
    tree = ast.parse(pathlib.Path(importlib.util.find_spec(module).origin).read_text())
    return {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names if a.asname == a.name}


@pytest.mark.parametrize("package", ["uldp_jax", "uldp_jax.mechanisms"])
def test_type_checkers_see_exactly_the_registered_constructors(package):
    """``ul.GRR`` resolves statically (mypy, pyright): each family re-exports what it registers (``GRR as GRR``,
    on the import line its ``register`` needs) and the package star-imports every family under TYPE_CHECKING."""
    path = pathlib.Path(importlib.util.find_spec(package).origin)
    static = set().union(*(_reexported(m) for m in _static_star_modules(path)))
    registered = {name for name, c in _registry.constructors().items() if c.__module__.startswith(package + ".")}
    assert static == registered, (sorted(registered - static), sorted(static - registered))
    for name in static:
        assert getattr(importlib.import_module(package), name) is _registry.constructors()[name]
