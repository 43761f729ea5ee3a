"""The docs' mechanism page has an example of every public mechanism (the strict docs build fails otherwise;
this test says so in the suite, which runs without the docs extra)."""

import importlib.util
import pathlib
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _hooks():
    if "mkdocs" not in sys.modules and importlib.util.find_spec("mkdocs") is None:  # the hook imports mkdocs:
        # stand in for it (once: a stand-in has no __spec__, so find_spec would raise on the second call)
        files = types.ModuleType("mkdocs.structure.files")
        files.File = object
        for name, mod in {"mkdocs": types.ModuleType("mkdocs"), "mkdocs.structure": types.ModuleType("mkdocs.structure"),
                          "mkdocs.structure.files": files}.items():
            sys.modules.setdefault(name, mod)
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_public_mechanism_has_a_docs_example():
    table = _hooks()._mechanism_table()  # raises RuntimeError naming a mechanism without an example
    assert "HadamardResponse" in table and "GRR" in table


def test_missing_example_is_reported(monkeypatch):
    hooks = _hooks()
    real = hooks._examples
    monkeypatch.setattr(hooks, "_examples", lambda ul: {k: v for k, v in real(ul).items() if k != "GRR"})
    with pytest.raises(RuntimeError, match="GRR"):
        hooks._mechanism_table()
