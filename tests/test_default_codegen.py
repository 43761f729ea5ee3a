"""The checks marked ``@pytest.mark.default_codegen`` run here, in one process compiled with XLA's default flags.

The suite compiles under ``tests/conftest.py``'s ``TEST_XLA_FLAGS`` (cheaper compiles), whose element-wise
emitter may order a float32 reduction by the shape of its loop. A check that results are
bit-identical under the library's own code generation (EM estimates of one report set batched two ways) is
therefore deselected from the main run and run by this test in a fresh pytest process without those flags: it
is never skipped, and a failure there fails this test with the inner run's report.
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

_TESTS = pathlib.Path(__file__).parent
_spec = importlib.util.spec_from_file_location("_suite_conftest", _TESTS / "conftest.py")
_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_conftest)


def _files_with_marked_checks() -> list[str]:
    mark = f"@pytest.mark.{_conftest.DEFAULT_CODEGEN}"
    me = pathlib.Path(__file__).resolve()
    return sorted(str(p.relative_to(_TESTS.parent)) for p in _TESTS.rglob("test_*.py")
                  if p.resolve() != me and mark in p.read_text())


def test_the_marked_files_are_found():
    assert "tests/engine/test_report_batch.py" in _files_with_marked_checks()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_default_codegen_checks_pass_under_the_default_flags():
    if not _conftest.uses_test_codegen():  # this session compiles with the default flags: they ran in place
        files = _files_with_marked_checks()
        assert files
        return
    env = dict(os.environ, XLA_FLAGS=_conftest.without_test_flags(os.environ.get("XLA_FLAGS")),
               ULDP_JAX_TEST_XLA_O0="0")
    env.pop("ULDP_JAX_TIMES", None)  # this test's own record holds the inner run's time
    files = _files_with_marked_checks()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-v",
                           "-m", _conftest.DEFAULT_CODEGEN, *files], cwd=_TESTS.parent, env=env,
                          capture_output=True, text=True, timeout=1700, check=False)
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, tail
    passed = re.search(r"(\d+) passed", proc.stdout)
    assert passed and int(passed.group(1)) >= len(files), tail
    assert "skipped" not in proc.stdout.splitlines()[-1], tail
