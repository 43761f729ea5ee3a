"""The statistical budget is suite-wide (tests/conftest.py): the controller sums the ``uldp_jax.testing`` checks of
every pytest-xdist worker and fails the run when the total exceeds ``MAX_CHECKS``, though no worker alone does.

Each case runs pytest with two workers (``--dist loadfile``, one file each) in a subprocess on a throw-away directory
holding a copy of the suite's conftest with ``MAX_CHECKS`` lowered, and two files of two checks each.
"""

import pathlib
import shutil
import subprocess
import sys

import pytest

_CONFTEST = pathlib.Path(__file__).with_name("conftest.py")
_TEST = '''
import os

from uldp_jax import testing


def test_two_checks():
    assert os.environ.get("PYTEST_XDIST_WORKER")  # runs on a worker
    assert testing.within_se(0.0, 0.0, 1.0) and testing.within_se(0.1, 0.0, 1.0)
'''


def _run(tmp_path, max_checks):
    text = _CONFTEST.read_text() + f"\n\nfrom uldp_jax import testing as _t\n_t.MAX_CHECKS = {max_checks}\n"
    (tmp_path / "conftest.py").write_text(text)
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(_TEST)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile",
         "-p", "xdist", "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.slow
def test_checks_of_all_workers_are_summed_against_max_checks(tmp_path):
    rc, out = _run(tmp_path, max_checks=3)  # 2 + 2 checks on two workers: each alone is within 3, the run is not
    assert rc == 1, out
    assert "statistical checks: 4 > MAX_CHECKS=3 over all workers" in out, out


@pytest.mark.slow
def test_a_run_within_max_checks_passes(tmp_path):
    rc, out = _run(tmp_path, max_checks=4)
    assert rc == 0, out
    assert "2 passed" in out and "> MAX_CHECKS" not in out, out
    assert "statistical checks (uldp_jax.testing, all workers): 4 of MAX_CHECKS=4" in out, out
