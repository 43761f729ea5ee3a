"""The suite's native-crash policy (tests/conftest.py): a test whose xdist worker dies is re-run once on a fresh
worker, a second crash of the same test fails the run, and an ordinary failure is never re-run.

One pytest run with two xdist workers, in a subprocess on a throw-away directory holding a copy of the suite's
conftest, checks all three: it holds a test that kills its own worker with SIGSEGV (the signal jaxlib's crashes
raise) once, one that does so every time, and one that fails with an assertion. (One run, not one per case: each
start of xdist workers costs seconds, and the three cases do not interfere: each worker crash is of one test.)
"""

import pathlib
import shutil
import subprocess
import sys
import textwrap

_CONFTEST = pathlib.Path(__file__).with_name("conftest.py")

_TESTS = '''
import os
import pathlib
import signal

MARK = pathlib.Path(__file__).with_name("crashed_once")


def test_crashes_once():
    if not MARK.exists():
        MARK.write_text("x")
        os.kill(os.getpid(), signal.SIGSEGV)


def test_crashes_always():
    os.kill(os.getpid(), signal.SIGSEGV)


def test_fails():
    assert False, "an ordinary failure"
'''


def test_crashes_are_rerun_once_and_failures_never(tmp_path):
    shutil.copy(_CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_x.py").write_text(textwrap.dedent(_TESTS))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "-p", "xdist",
         "--rootdir", str(tmp_path), "-c", "/dev/null", "-o", "faulthandler_timeout=0", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "2 failed, 1 passed, 2 rerun" in out, out  # one re-run for each crashing test, none for the failure
    # a crash is re-run once and then passes: test_crashes_once is the one that passed
    assert "native crash of a worker while running test_x.py::test_crashes_once" in out, out
    assert "FAILED test_x.py::test_crashes_once" not in out, out
    # a second crash of the same test fails the run
    assert "worker 'gw" in out and "crashed while running 'test_x.py::test_crashes_always'" in out, out
    # an ordinary failure is not re-run
    assert "an ordinary failure" in out, out
    assert "native crash of a worker while running test_x.py::test_fails" not in out, out
