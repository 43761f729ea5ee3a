"""The suite's native-crash policy (tests/conftest.py): a test whose xdist worker dies is re-run once on a fresh
worker, a second crash of the same test fails the run, and an ordinary failure is never re-run.

Each case runs pytest with two xdist workers in a subprocess on a throw-away directory holding a copy of the suite's
conftest and a test that kills its own worker with SIGSEGV (the signal jaxlib's crashes raise).
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
    if {crash_once} and not MARK.exists():
        MARK.write_text("x")
        os.kill(os.getpid(), signal.SIGSEGV)


def test_crashes_always():
    if {crash_always}:
        os.kill(os.getpid(), signal.SIGSEGV)


def test_fails():
    assert not {fail}, "an ordinary failure"
'''


def _run(tmp_path, *, crash_once=False, crash_always=False, fail=False):
    shutil.copy(_CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_x.py").write_text(textwrap.dedent(_TESTS).format(
        crash_once=crash_once, crash_always=crash_always, fail=fail))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "-p", "xdist",
         "--rootdir", str(tmp_path), "-c", "/dev/null", "-o", "faulthandler_timeout=0", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_crash_is_rerun_once_and_passes(tmp_path):
    rc, out = _run(tmp_path, crash_once=True)
    assert rc == 0, out
    assert "3 passed" in out, out
    assert "native crash of a worker while running test_x.py::test_crashes_once" in out, out


def test_a_second_crash_fails_the_run(tmp_path):
    rc, out = _run(tmp_path, crash_always=True)
    assert rc == 1, out
    assert "1 failed" in out and "2 passed" in out, out
    assert "worker 'gw" in out and "crashed while running 'test_x.py::test_crashes_always'" in out, out


def test_an_ordinary_failure_is_not_rerun(tmp_path):
    rc, out = _run(tmp_path, fail=True)
    assert rc == 1, out
    assert "1 failed" in out and "2 passed" in out, out
    assert "native crash" not in out and "rerun" not in out, out
