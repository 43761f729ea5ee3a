"""tests/conftest.py's time rules: a per-test limit on setup and call, and the listing of unmarked tests over SLOW_S."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

_TESTS = textwrap.dedent(
    """
    import time

    import pytest


    @pytest.fixture
    def slow_fixture():
        time.sleep(5)


    def test_setup_past_the_limit(slow_fixture):
        pass


    @pytest.mark.timeout(2)
    def test_call_past_its_own_limit():
        time.sleep(5)


    def test_unmarked_over_slow_s():
        time.sleep(0.3)


    @pytest.mark.slow
    def test_marked_over_slow_s():
        time.sleep(0.3)


    def test_quick():
        pass
    """
)


def test_limits_and_the_unmarked_slow_listing(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    (tmp_path / "test_sample.py").write_text(_TESTS)
    env = {**os.environ, "ULDP_JAX_TEST_TIMEOUT": "1", "ULDP_JAX_SLOW_S": "0.2"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                           "-o", "markers=slow", "test_sample.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "test_setup_past_the_limit (setup) ran past its 1 s limit" in out
    assert "test_call_past_its_own_limit (call) ran past its 2 s limit" in out
    assert "1 failed, 3 passed, 1 error" in out, out
    listing = out.split("not marked @pytest.mark.slow", 1)[1]
    assert "test_sample.py::test_unmarked_over_slow_s" in listing
    assert "test_marked_over_slow_s" not in listing and "test_quick" not in listing
