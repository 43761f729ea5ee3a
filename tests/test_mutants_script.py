"""experiments/benchmarks/mutants.py (issue 48): every mutant applies to this checkout exactly once.

A refactor that moves or rewrites a mutated snippet makes its mutant inapplicable; this test names it at once
instead of leaving it to the next mutation run. Text reads only (no JAX import, well under a second).
"""

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "benchmarks" / "mutants.py"


def _load():
    spec = importlib.util.spec_from_file_location("mutants_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_once_and_has_its_home_tests():
    mod = _load()
    assert mod.verify(ROOT) == []
    assert len(mod.MUTANTS) >= 30
    names = [m.name for m in mod.MUTANTS]
    assert len(set(names)) == len(names)
    for m in mod.MUTANTS:
        assert m.path.startswith("uldp_jax/") and (ROOT / m.path).is_file(), m.name
        assert (ROOT / m.path).read_text().count(m.old) == 1, m.name
        assert m.new != m.old and m.why and m.home, m.name
        assert all((ROOT / h.split("::")[0]).exists() for h in m.home), m.name


def test_verify_names_a_snippet_that_no_longer_applies(tmp_path):
    mod = _load()
    m = mod.MUTANTS[0]
    (tmp_path / m.path).parent.mkdir(parents=True)
    (tmp_path / m.path).write_text((ROOT / m.path).read_text().replace(m.old, ""))
    for h in m.home:
        (tmp_path / h.split("::")[0]).mkdir(parents=True, exist_ok=True)
    assert mod.verify(tmp_path, (m,)) == [f"{m.name}: old snippet occurs 0 times in {m.path}, expected once"]
