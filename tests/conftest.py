"""Session-wide test set-up: compile the tests' XLA programs at LLVM optimisation level 0.

Most of the suite's time is XLA compilation of small programs that then run briefly, so the backend's LLVM
optimisation costs far more than it saves (about 40% of the CPU time of tests/core). The controlling pytest
process appends ``--xla_backend_optimization_level=0`` to ``XLA_FLAGS`` before any backend starts; pytest-xdist
workers and the subprocesses some tests start (CLI, notebooks) inherit it, and the variable is restored when the
run ends, so nothing leaks into the user's environment.

The programs compute the same thing: XLA's CPU fast-math is off by default, so LLVM may not reorder
floating-point arithmetic at any level (the bit-exact jit-vs-eager, chunking and sharding checks pass either way).
A user-set ``xla_backend_optimization_level`` is kept; ``ULDP_JAX_TEST_XLA_O0=0`` turns this off.

The suite runs with uldp_jax's persistent compilation cache off (``ULDP_JAX_CACHE=0``, set the same way unless the
variable is already set): tests never write to the user's cache directory, and compile counts do not depend on
what an earlier run left there; tests/test_compile_cache.py turns it on in a temporary directory of its own.
(A throw-away persistent compilation cache shared by the workers was measured too and did not pay: the workers
run different files, so they rarely compile the same program twice.)

A pytest-xdist worker that dies of a native crash (a segmentation fault inside jaxlib: seen twice in full runs, in
tests/test_regression.py and in tests/tuning/test_collab.py, each of which passes on its own) gets its test run once
more on a fresh worker; a second crash of the same test fails the run. Only process crashes are retried: an assertion or an
exception is never re-run, and every retry is printed in the summary.
"""

import os

import pytest

_FLAG = "--xla_backend_optimization_level=0"
_SAVED = []  # the previous XLA_FLAGS, when this process changed it
_CACHE_SET = []  # True when this process set ULDP_JAX_CACHE


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has set the environment
        return
    if "ULDP_JAX_CACHE" not in os.environ:
        os.environ["ULDP_JAX_CACHE"] = "0"
        _CACHE_SET.append(True)
    flags = os.environ.get("XLA_FLAGS")
    if os.environ.get("ULDP_JAX_TEST_XLA_O0", "1") == "0" or "xla_backend_optimization_level" in (flags or ""):
        return
    _SAVED.append(flags)
    os.environ["XLA_FLAGS"] = f"{flags or ''} {_FLAG}".strip()


_CRASHED = []  # node ids whose worker crashed once and that were re-queued


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """Re-queue a test whose xdist worker died of a native crash, once (see the module docstring)."""
    if crashitem in _CRASHED:
        return  # the second crash of the same test: the report stays "failed"
    _CRASHED.append(crashitem)
    sched.mark_test_pending(crashitem)
    report.outcome = "rerun"


def pytest_terminal_summary(terminalreporter):
    for nodeid in _CRASHED:
        terminalreporter.write_line(f"native crash of a worker while running {nodeid}: re-run once on a fresh worker")


def pytest_sessionfinish(session, exitstatus):
    """The statistical false-alarm budget (uldp_jax.testing): at most MAX_CHECKS checks at level ALPHA each."""
    from uldp_jax import testing

    if testing.checks_run() > testing.MAX_CHECKS:
        session.exitstatus = 1
        print(f"\nstatistical checks: {testing.checks_run()} > MAX_CHECKS={testing.MAX_CHECKS}; the suite-wide "
              f"false-alarm budget SUITE_ALPHA={testing.SUITE_ALPHA} no longer holds: raise MAX_CHECKS (lowers ALPHA).")


def pytest_unconfigure(config):
    if _CACHE_SET:
        os.environ.pop("ULDP_JAX_CACHE", None)
        _CACHE_SET.clear()
    while _SAVED:
        flags = _SAVED.pop()
        if flags is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = flags
