"""Suite-wide false-alarm rate of the statistical tests, in one pytest process: every statistical test on S seed shifts.

``false_alarms.py`` starts one pytest process per shift and recompiles every program each time; on a loaded 2-core
machine that did not fit. This driver runs the statistical test files once, in one process (``-n 0``), with every
test parametrized over the shifts ``1..S``: the compiled programs are reused across shifts (a key is a run-time
argument), so only the first shift pays the compilation.

- Every integer seed given to ``jax.random.key``/``PRNGKey`` or ``np.random.default_rng`` inside a test becomes
  ``(s + shift * 1_000_003) mod 2**31``, the rule of ``pytest --seed-shift`` (tests/conftest.py), with the shift of
  the test being run. Seeds made at import or collection time take the first shift.
- A test is statistical when it makes at least one ``uldp_jax.testing`` check (``fits``/``within_se``) on the first
  shift; the others run once and are skipped on later shifts.
- A fixture of wider scope than a test (``scope="module"``, ``"class"``, ``"session"``) is built once, on the first
  shift: a check that reads its draws sees the same draws on every shift. The driver lists such tests
  (``unshifted``) and does not count them as measured; measure their files with ``false_alarms.py`` (one pytest
  process per ``--seed-shift``, which shifts the fixtures' seeds too). Found: tests/mechanisms/core/test_counts.py
  and tests/pum/test_simulate.py. The same holds for a key made at import (``KEY = jax.random.key(0)`` at
  module level: tests/test_check.py), which this driver cannot see: measure such files with ``false_alarms.py``.
- A shift has a false alarm when a statistical test fails on it. A test that fails on every shift compares fixed
  draws or is broken, not a false alarm: it is listed apart; so is a test stopped by the per-test time limit
  (tests/conftest.py; a loaded machine). Every failure's last line (the assertion or error) is printed as ``why``.

Usage (one process per file by default: a line per file with running totals, then one line per shift)::

    python experiments/benchmarks/false_alarms_inprocess.py --shifts 20 [FILES_OR_NODEIDS...]

Only some tests of a file (a node id with ``[params]`` no longer matches once the shift is in the id): ``-k EXPR``
as in pytest, e.g. ``-k "test_quick_run_writes_outputs and 001-fig5"``.

A slow file in chunks (each chunk a fresh process that compiles again): ``--start 1 --shifts 5``, then
``--start 6 --shifts 5``, and so on; the per-shift lines of the chunks together cover shifts 1..20.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRIDE = 1_000_003
# The test files that make statistical checks (found by name: ``fits``, ``within_se``, ``sampler_vs_channel``,
# ``estimate_within_se``, ``ul.check``), in path order.
_CALLS = re.compile(r"\b(fits|within_se|estimate_within_se|sampler_vs_channel)\(|\bul\.check\(")
FILES = sorted(str(f.relative_to(ROOT)) for f in (ROOT / "tests").rglob("test_*.py") if _CALLS.search(f.read_text()))


class ShiftEveryTest:
    """pytest plugin: parametrizes every test over the shifts and records checks and failures per shift."""

    def __init__(self, shifts: list[int]):
        self.shifts = shifts
        self.current = shifts[0]
        self.statistical: dict[str, int] = {}  # base node id -> checks on the first shift
        self.checks = collections.Counter()  # shift -> checks made
        self.failed = collections.defaultdict(set)  # shift -> base ids of failed statistical tests
        self.timed_out = collections.defaultdict(set)  # shift -> base ids stopped by the per-test time limit
        self.why: dict[str, str] = {}  # "base @ shift" -> the failure's last line (the assertion or the error)
        self.started: dict[str, tuple[int, int]] = {}  # node id -> (shift, checks before)
        self.unshifted: dict[str, list[str]] = {}  # base id -> the test suite's wider-scope fixtures it uses

    def pytest_collection_modifyitems(self, items):
        for item in items:
            info = getattr(item, "_fixtureinfo", None)
            wide = sorted(name for name, defs in (info.name2fixturedefs.items() if info else ())
                          if defs and str(defs[-1].scope) != "function" and name != "fa_shift"
                          and str(getattr(defs[-1], "baseid", "")).startswith("tests"))
            if wide:
                self.unshifted[self.base(item.nodeid, item.callspec.params["fa_shift"])] = wide

    def pytest_configure(self, config):
        import jax
        import numpy as np

        def shifted(seed):
            if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
                return (int(seed) + self.current * STRIDE) % 2**31
            return seed

        key, prng_key, default_rng = jax.random.key, jax.random.PRNGKey, np.random.default_rng
        jax.random.key = lambda seed, *a, **k: key(shifted(seed), *a, **k)
        jax.random.PRNGKey = lambda seed, *a, **k: prng_key(shifted(seed), *a, **k)
        np.random.default_rng = lambda seed=None, *a, **k: default_rng(shifted(seed), *a, **k)

    def pytest_generate_tests(self, metafunc):
        metafunc.fixturenames.append("fa_shift")
        metafunc.parametrize("fa_shift", self.shifts, ids=[f"fa{s}" for s in self.shifts])

    @staticmethod
    def base(nodeid: str, shift: int) -> str:
        """The node id without its shift (the same string for every shift of one test)."""
        return re.sub(rf"(?<=[\[-])fa{shift}(?=[\]-])", "", nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        from uldp_jax import testing

        self.current = item.callspec.params["fa_shift"]
        if self.current != self.shifts[0] and self.statistical.get(self.base(item.nodeid, self.current), 1) == 0:
            pytest.skip("not statistical (no uldp_jax.testing check on the first shift)")
        self.started[item.nodeid] = (self.current, testing.checks_run())

    def pytest_runtest_logreport(self, report):
        from uldp_jax import testing

        if report.nodeid not in self.started:
            return
        shift, before = self.started[report.nodeid]
        base = self.base(report.nodeid, shift)
        if report.failed:
            text = (report.longreprtext or "").strip().splitlines()
            self.why[f"{base} @ shift {shift}"] = text[-1][:300] if text else ""
            # The per-test time limit (tests/conftest.py) on a loaded machine is not a statistical false alarm.
            limited = any("ran past its" in ln and "TimeoutError" in ln for ln in text)
            (self.timed_out if limited else self.failed)[shift].add(base)
        if report.when == "teardown":
            made = testing.checks_run() - before
            del self.started[report.nodeid]
            self.checks[shift] += made
            if shift == self.shifts[0]:
                self.statistical[base] = made


def run_files(files: list[str], shifts: list[int], select: str | None = None) -> dict:
    """Runs ``files`` (only the tests ``-k select`` picks, if given) in this process over ``shifts``; returns the
    counts (JSON-ready)."""
    plugin = ShiftEveryTest(shifts)
    pytest.main([*files, "-n", "0", "-q", "-p", "no:cacheprovider", "--no-header", "-rN", "--tb=line",
                 *(["-k", select] if select else [])], plugins=[plugin])
    other = {b for s in shifts for b in plugin.failed[s] if not plugin.statistical.get(b)}
    failed = {s: plugin.failed[s] - other for s in shifts}
    everywhere = set.intersection(*failed.values())
    return {"checks": {str(s): plugin.checks[s] for s in shifts},
            "failed": {str(s): sorted(failed[s] - everywhere) for s in shifts},
            "everywhere": sorted(everywhere), "other": sorted(other),
            "timed_out": {str(s): sorted(plugin.timed_out[s]) for s in shifts if plugin.timed_out[s]},
            "why": plugin.why,
            "statistical": sum(1 for v in plugin.statistical.values() if v),
            "unshifted": {b: v for b, v in plugin.unshifted.items() if plugin.statistical.get(b)}}


def _merge(total: dict, part: dict) -> None:
    for k in ("checks", "failed", "timed_out"):
        for s, v in part.get(k, {}).items():
            total[k][s] = total[k].get(s, 0 if k == "checks" else []) + v
    total["why"].update(part.get("why", {}))
    for k in ("everywhere", "other"):
        total[k] += part[k]
    total["statistical"] += part["statistical"]
    total["unshifted"].update(part.get("unshifted", {}))


def _summary(total: dict, shifts: list[int], files_done: int, wall: float) -> str:
    lines = [f"shift {s}: {total['checks'].get(str(s), 0)} checks, failed: "
             f"{', '.join(total['failed'].get(str(s), [])) or 'none'}" for s in shifts]
    alarms = sum(1 for s in shifts if total["failed"].get(str(s)))
    checks = sum(total["checks"].values())
    failed_checks = sum(len(v) for v in total["failed"].values())
    lines.append(f"files: {files_done}; statistical tests: {total['statistical']}; checks per shift: "
                 f"{total['checks'].get(str(shifts[0]), 0)}; total checks {checks}")
    if total["everywhere"]:
        lines.append(f"failing on every shift (fixed draws or broken, not counted): {', '.join(total['everywhere'])}")
    if total["other"]:
        lines.append(f"non-statistical tests that failed (not counted): {', '.join(total['other'])}")
    for s, v in total["timed_out"].items():
        lines.append(f"shift {s}: past the per-test time limit (not counted as a false alarm): {', '.join(v)}")
    for b, names in total["unshifted"].items():
        lines.append(f"NOT shifted (reads wider-scope fixtures {', '.join(names)}, built once on the first shift; "
                     f"use false_alarms.py): {b}")
    lines += [f"why {k}: {v}" for k, v in total["why"].items()]
    lines.append(f"shifts with a false alarm: {alarms} of {len(shifts)}; failed statistical tests: {failed_checks}; "
                 f"wall {wall:.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shifts", type=int, default=20, help="shifts 1..S (default 20)")
    parser.add_argument("--start", type=int, default=1,
                        help="first shift (default 1): --start 6 --shifts 5 runs shifts 6..10, so a slow file can be "
                             "measured in chunks whose counts add up")
    parser.add_argument("--one-process", action="store_true",
                        help="all files in this process (default: one process per file, running totals printed "
                             "after each file, so memory stays that of one file and a cut-short run still counts)")
    parser.add_argument("-k", dest="select", default=None,
                        help="pytest -k expression: run only the tests it picks (a node id with [params] does not "
                             "match once the shift is added to its id; select a parametrized case here instead)")
    parser.add_argument("files", nargs="*", default=FILES)
    args = parser.parse_args(argv)
    os.environ.pop("ULDP_JAX_SEED_SHIFT", None)
    os.chdir(ROOT)
    shifts = list(range(args.start, args.start + args.shifts))
    t0 = time.perf_counter()
    if args.one_process:
        part = run_files(args.files, shifts, args.select)
        print("RESULT " + json.dumps(part), flush=True)
        if len(args.files) > 1:
            print(_summary(part, shifts, len(args.files), time.perf_counter() - t0))
        return 0
    total = {"checks": {}, "failed": {}, "timed_out": {}, "why": {}, "everywhere": [], "other": [], "statistical": 0,
             "unshifted": {}}
    for i, f in enumerate(args.files, 1):
        proc = subprocess.run([sys.executable, __file__, "--one-process", "--shifts", str(args.shifts),
                               "--start", str(args.start), *(["-k", args.select] if args.select else []), f],
                              capture_output=True, text=True)
        found = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if not found:
            print(f"{f}: no result (rc {proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}", flush=True)
            continue
        part = json.loads(found[-1][len("RESULT "):])
        _merge(total, part)
        bad = sum(len(v) for v in part["failed"].values())
        print(f"[{i}/{len(args.files)}] {f}: {part['statistical']} statistical tests, "
              f"{sum(part['checks'].values())} checks, {bad} failed; running total: "
              f"{sum(1 for s in shifts if total['failed'].get(str(s)))} shifts with a false alarm, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    print(_summary(total, shifts, len(args.files), time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
