"""Session-wide test set-up: compile the tests' XLA programs with flags that cut compile time.

Most of the suite's time is XLA compilation of small programs that then run briefly. The controlling pytest
process appends ``TEST_XLA_FLAGS`` to ``XLA_FLAGS`` before any backend starts; pytest-xdist workers and the
subprocesses some tests start (CLI, notebooks, the regression snapshot) inherit them, and the variable is restored
when the run ends, so nothing leaks into the user's environment. A flag the user set is kept;
``ULDP_JAX_TEST_XLA_O0=0`` turns this off.

* ``--xla_backend_optimization_level=0``: LLVM's optimisation pipeline off. XLA's CPU fast-math is off by
  default, so LLVM may not reorder floating-point arithmetic at any level: the same values.
* ``--xla_cpu_use_fusion_emitters=false``: fusions go through XLA's element-wise emitter instead of the MLIR fusion
  emitters, which cost more to compile for the suite's many small programs. Each result is still an IEEE
  computation of the same program (the regression snapshot's reports and non-EM estimates are bit-identical
  either way), but the element-wise emitter may order a reduction by the shape of its loop: float32 EM sums of
  one report set batched differently round differently. The checks that results are bit-identical under the
  library's own (default) code generation are marked ``@pytest.mark.default_codegen``: this run deselects them
  and ``tests/test_default_codegen.py`` runs them together in one process with the default flags.

Measured: experiments/benchmarks/README.md, "(t) The test suite".

The suite runs with uldp_jax's persistent compilation cache off (``ULDP_JAX_CACHE=0``, set the same way unless the
variable is already set): tests never write to the user's cache directory, and compile counts do not depend on
what an earlier run left there; tests/test_compile_cache.py turns it on in a temporary directory of its own.
(A throw-away persistent compilation cache shared by the workers was measured too and did not pay: the workers
run different files, so they rarely compile the same program twice.)

A pytest-xdist worker that dies of a native crash (a segmentation fault inside jaxlib: seen twice in full runs, in
tests/test_regression.py and in tests/tuning/test_collab.py, each of which passes on its own) gets its test run once
more on a fresh worker; a second crash of the same test fails the run. Only process crashes are retried: an assertion or an
exception is never re-run, and every retry is printed in the summary.

Statistical budget (``uldp_jax.testing``): every statistical check counts, and the counts of all xdist workers are
summed by the controller (``pytest_testnodedown``), so ``MAX_CHECKS`` bounds the whole run, not one worker.
``--seed-shift N`` (or ``ULDP_JAX_SEED_SHIFT=N``) shifts every seed the tests make, to measure the false-alarm
rate on fresh draws (``experiments/benchmarks/false_alarms.py``); never to make a failing check pass.
"""

import os
import signal
import threading
import warnings

import pytest

TEST_XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")
DEFAULT_CODEGEN = "default_codegen"  # the marker of checks that need the library's default code generation


def with_test_flags(flags: str | None) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) with each of ``TEST_XLA_FLAGS`` appended that it does not set already."""
    out = (flags or "").strip()
    for flag in TEST_XLA_FLAGS:
        if flag.split("=")[0] not in out:
            out = f"{out} {flag}".strip()
    return out


def without_test_flags(flags: str | None) -> str:
    """``flags`` without ``TEST_XLA_FLAGS`` (what a default-codegen process runs under)."""
    return " ".join(f for f in (flags or "").split() if f not in TEST_XLA_FLAGS)


def uses_test_codegen() -> bool:
    """Whether this session compiles under ``TEST_XLA_FLAGS`` (then ``default_codegen`` checks run elsewhere)."""
    active = os.environ.get("XLA_FLAGS", "").split()
    return os.environ.get("ULDP_JAX_TEST_XLA_O0", "1") != "0" and all(f in active for f in TEST_XLA_FLAGS)

# Per-test time limit in seconds, on setup (fixtures) and call each (a hung test fails instead of stalling the run);
# ``@pytest.mark.timeout(s)`` overrides it for one test, ``ULDP_JAX_TEST_TIMEOUT=0`` turns it off. Generous: it guards
# against hangs, it is not a speed assertion (timings belong in experiments/benchmarks/; tests/test_time_limits.py).
TEST_TIMEOUT_S = int(os.environ.get("ULDP_JAX_TEST_TIMEOUT", "600"))
# A test whose setup + call + teardown take more than SLOW_S seconds belongs under ``@pytest.mark.slow``: the second
# tier (``python -m pytest -m slow``; the default run deselects it, pyproject.toml's addopts, and CI runs both). Every run lists the unmarked ones it timed over
# SLOW_S at its end (a report, not a failure: timings move with the machine's load).
SLOW_S = float(os.environ.get("ULDP_JAX_SLOW_S", "10"))

_SAVED = []  # the previous XLA_FLAGS, when this process changed it
_CACHE_SET = []  # True when this process set ULDP_JAX_CACHE


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): this test's time limit (default TEST_TIMEOUT_S)")
    config.addinivalue_line("markers", f"{DEFAULT_CODEGEN}: a bit-identity check under the library's default XLA "
                                       "code generation (run by tests/test_default_codegen.py; module docstring)")
    shift = config.workerinput.get("uldp_seed_shift", 0) if hasattr(config, "workerinput") else seed_shift(config)
    if shift:
        _install_seed_shift(shift)
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has set the environment
        return
    if _TIMES_PATH and _TIMES_OWNER not in os.environ:
        os.environ[_TIMES_OWNER] = str(os.getpid())
    if "ULDP_JAX_CACHE" not in os.environ:
        os.environ["ULDP_JAX_CACHE"] = "0"
        _CACHE_SET.append(True)
    flags = os.environ.get("XLA_FLAGS")
    if os.environ.get("ULDP_JAX_TEST_XLA_O0", "1") == "0" or with_test_flags(flags) == (flags or "").strip():
        return
    _SAVED.append(flags)
    os.environ["XLA_FLAGS"] = with_test_flags(flags)


def pytest_collection_modifyitems(config, items):
    """Under ``TEST_XLA_FLAGS`` the ``default_codegen`` checks are deselected here: tests/test_default_codegen.py
    runs them in a process with the default flags (never skipped, never lost)."""
    if not uses_test_codegen():
        return
    elsewhere = [item for item in items if item.get_closest_marker(DEFAULT_CODEGEN)]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = [item for item in items if not item.get_closest_marker(DEFAULT_CODEGEN)]


_CRASHED = []  # node ids whose worker crashed once and that were re-queued


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """Re-queue a test whose xdist worker died of a native crash, once (see the module docstring)."""
    if crashitem in _CRASHED:
        return  # the second crash of the same test: the report stays "failed"
    _CRASHED.append(crashitem)
    sched.mark_test_pending(crashitem)
    report.outcome = "rerun"


_SECONDS = {}  # node id -> [setup + call + teardown seconds, marked slow]


# ``ULDP_JAX_TIMES=path``: each process writes ``path.<worker>.json`` with, per test, its wall seconds and the
# seconds JAX spent tracing, lowering and compiling inside it (jax.monitoring's compile events), for issue 48's
# "where the time goes" table (experiments/benchmarks/suite_times.py reads them).
_TIMES_PATH = os.environ.get("ULDP_JAX_TIMES")
_TIMES_OWNER = "ULDP_JAX_TIMES_OWNER"  # the pid of the controller whose run is being timed (``_owns_times``)
_COMPILE = {"trace_lower_s": 0.0, "backend_s": 0.0, "compiles": 0}
_TIMES = {}
_LISTENING = []  # True once this process listens to JAX's compile events


def _on_jax_duration(event, duration, **kwargs):
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILE["backend_s"] += duration
        _COMPILE["compiles"] += 1
    elif event in ("/jax/core/compile/jaxpr_trace_duration", "/jax/core/compile/jaxpr_to_mlir_module_duration"):
        _COMPILE["trace_lower_s"] += duration


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _TIMES_PATH:
        yield
        return
    import time

    if not _LISTENING:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_on_jax_duration)
        _LISTENING.append(True)
    before, start = dict(_COMPILE), time.perf_counter()
    yield
    _TIMES[item.nodeid] = {"wall_s": time.perf_counter() - start,
                           **{k: _COMPILE[k] - before[k] for k in _COMPILE}}


def _owns_times(config) -> bool:
    """Whether this process belongs to the run that set ``ULDP_JAX_TIMES``: the tests that start a pytest of their
    own (tests/test_time_limits.py, tests/test_crash_requeue.py) inherit the variable, and their files would
    otherwise overwrite the outer run's (seen in a full run). The outer controller records its pid; its xdist
    workers are its children."""
    owner = os.environ.get(_TIMES_OWNER)
    pid = os.getppid() if hasattr(config, "workerinput") else os.getpid()
    return owner == str(pid)


def _write_times(config):
    import json

    if not _owns_times(config):
        return
    worker = config.workerinput["workerid"] if hasattr(config, "workerinput") else "main"
    with open(f"{_TIMES_PATH}.{worker}.json", "w") as f:
        json.dump(_TIMES, f)


def pytest_runtest_logreport(report):
    """Adds up each test's time (on the xdist controller too: worker reports carry durations and keywords)."""
    entry = _SECONDS.setdefault(report.nodeid, [0.0, "slow" in report.keywords])
    entry[0] += report.duration


def unmarked_slow(seconds: dict, limit: float) -> list:
    """``(seconds, node id)`` of the tests over ``limit`` seconds that are not marked ``slow``, slowest first."""
    return sorted(((t, nodeid) for nodeid, (t, marked) in seconds.items() if t > limit and not marked), reverse=True)


def pytest_terminal_summary(terminalreporter):
    for nodeid in _CRASHED:
        terminalreporter.write_line(f"native crash of a worker while running {nodeid}: re-run once on a fresh worker")
    found = unmarked_slow(_SECONDS, SLOW_S)
    if found:
        terminalreporter.write_line(f"tests over SLOW_S={SLOW_S:g} s not marked @pytest.mark.slow (tests/conftest.py):")
        for t, nodeid in found:
            terminalreporter.write_line(f"  {t:6.1f} s {nodeid}")


def pytest_runtest_teardown(item, nextitem):
    """Frees compiled programs before a long-lived worker runs out of memory mappings: the library's own guard
    (``uldp_jax._cache.guard_map_limit``, also run by ``ul.simulate``), checked after every test. A worker that runs
    ~2000 tests otherwise reaches ``vm.max_map_count`` and the next compilation dies natively."""
    from uldp_jax import _cache

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _cache.guard_map_limit()


def _time_limited(item, phase):
    """Fails a test phase that runs past the test's time limit (SIGALRM in the worker's main thread; POSIX only)."""
    marker = item.get_closest_marker("timeout")
    limit = int(marker.args[0]) if marker and marker.args else TEST_TIMEOUT_S
    if limit <= 0 or not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"{item.nodeid} ({phase}) ran past its {limit} s limit (tests/conftest.py TEST_TIMEOUT_S)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):  # fixtures too: a module fixture (tests/test_regression.py) takes 1-3 minutes
    yield from _time_limited(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _time_limited(item, "call")


_WORKER_CHECKS = []  # statistical checks each finished xdist worker made (collected by the controller)


def pytest_addoption(parser):
    parser.addoption("--seed-shift", type=int, default=None,
                     help="shift every seed the tests make (jax.random.key/PRNGKey, np.random.default_rng) by N "
                          "steps, to measure the statistical tests' false-alarm rate on fresh draws; also "
                          "ULDP_JAX_SEED_SHIFT=N. Tests that compare against stored draws are meaningless shifted.")


def seed_shift(config) -> int:
    """The run's seed shift: ``--seed-shift N``, else ``ULDP_JAX_SEED_SHIFT``, else 0."""
    shift = config.getoption("--seed-shift")
    if shift is None:
        shift = int(os.environ.get("ULDP_JAX_SEED_SHIFT", "0") or 0)
    return int(shift)


def _install_seed_shift(shift: int) -> None:
    """Every integer seed ``s`` given to ``jax.random.key``/``PRNGKey`` or ``np.random.default_rng`` becomes
    ``(s + shift * SEED_STRIDE) mod 2**31``: the same tests on fresh, still reproducible, draws."""
    import jax
    import numpy as np

    stride = 1_000_003

    def shifted(seed):
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return (int(seed) + shift * stride) % 2**31
        return seed

    key, prng_key, default_rng = jax.random.key, jax.random.PRNGKey, np.random.default_rng
    jax.random.key = lambda seed, *a, **k: key(shifted(seed), *a, **k)
    jax.random.PRNGKey = lambda seed, *a, **k: prng_key(shifted(seed), *a, **k)
    np.random.default_rng = lambda seed=None, *a, **k: default_rng(shifted(seed), *a, **k)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):  # xdist controller: hand the shift to every worker explicitly
    node.workerinput["uldp_seed_shift"] = seed_shift(node.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist controller: collect each worker's count of statistical checks (the budget is suite-wide)."""
    _WORKER_CHECKS.append(int(getattr(node, "workeroutput", {}).get("uldp_stat_checks", 0)))


def pytest_sessionfinish(session, exitstatus):
    """The statistical false-alarm budget (uldp_jax.testing): at most MAX_CHECKS checks at level ALPHA each,
    counted over the whole run (a worker reports its count to the controller, which sums them)."""
    from uldp_jax import testing

    config = session.config
    if _TIMES_PATH and _TIMES:
        _write_times(config)
    if hasattr(config, "workerinput"):  # an xdist worker: report, the controller judges
        config.workeroutput["uldp_stat_checks"] = testing.checks_run()
        return
    total = testing.checks_run() + sum(_WORKER_CHECKS)
    if total:  # the run's real count, for the record (the budget is MAX_CHECKS x ALPHA = SUITE_ALPHA)
        print(f"\nstatistical checks (uldp_jax.testing, all workers): {total} of MAX_CHECKS={testing.MAX_CHECKS} "
              f"at ALPHA={testing.ALPHA:.2g}")
    if total > testing.MAX_CHECKS:
        session.exitstatus = 1
        print(f"\nstatistical checks: {total} > MAX_CHECKS={testing.MAX_CHECKS} over all workers; the suite-wide "
              f"false-alarm budget SUITE_ALPHA={testing.SUITE_ALPHA} no longer holds: raise MAX_CHECKS (lowers ALPHA).")


def pytest_report_header(config):
    shift = seed_shift(config)
    return f"uldp_jax seed shift: {shift}" if shift else None


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput") and os.environ.get(_TIMES_OWNER) == str(os.getpid()):
        os.environ.pop(_TIMES_OWNER)
    if _CACHE_SET:
        os.environ.pop("ULDP_JAX_CACHE", None)
        _CACHE_SET.clear()
    while _SAVED:
        flags = _SAVED.pop()
        if flags is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = flags


@pytest.fixture
def calls_to(monkeypatch):
    """``calls_to(module, name)``: patches ``module.name`` to count its calls (behaviour unchanged) and returns the
    list that grows by one entry a call (``monkeypatch`` restores the function)."""

    def spy(module, name):
        calls, fn = [], getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: calls.append(1) or fn(*a, **k))
        return calls

    return spy
