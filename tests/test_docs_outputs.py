"""Committed outputs are current (issue 51, item 5): how a rerun's text is compared with the committed one, and
the check that no committed output names the machine it was made on.

``differences(committed, rerun)`` compares two texts line by line: the words must be equal and every number within
``RTOL`` (relative) or ``ATOL`` (absolute) of its committed value; run times (a number followed by ``s``) and
dates are not compared. The notebooks' test (tests/experiments/test_notebooks.py) and ``.ci/run``, for the demo,
use it:

    python tests/test_docs_outputs.py results/demo experiments/demo    # a fresh `uldp demo` against the committed
"""

from __future__ import annotations

import csv
import os
import re
import sys

# Reruns draw with the same keys, so on the same backend they repeat the committed numbers exactly; the tolerance
# covers another CPU's float summation order (XLA versions), never a changed estimator or sampler (those move the
# demo's numbers by far more than 2%).
RTOL, ATOL = 0.02, 1e-6
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
TIMING = re.compile(r"[-+]?\d+(?:\.\d+)?\s?s\b|\d{4}-\d\d-\d\d(?: \d\d:\d\d(?: UTC)?)?|load average [\d.\-]+")
PATHS = re.compile(r"(?:/home/|/work/|/tmp/|/Users/|/root/|[A-Z]:\\\\)")


def machine_paths(text: str) -> list[str]:
    """The lines of ``text`` that name a machine's folder (``/home/...``, ``/work/...``, ``/tmp/...``)."""
    return [ln for ln in text.splitlines() if PATHS.search(ln)]


def _close(a: str, b: str) -> bool:
    x, y = float(a), float(b)
    return abs(x - y) <= ATOL + RTOL * max(abs(x), abs(y))


def differences(committed: str, rerun: str) -> list[str]:
    """Where ``rerun`` differs from ``committed`` beyond the tolerance: ``"line 3: ..."`` messages (empty: same)."""
    a, b = committed.splitlines(), rerun.splitlines()
    out = [f"{len(a)} lines committed, {len(b)} in the rerun"] if len(a) != len(b) else []
    for i, (la, lb) in enumerate(zip(a, b), 1):
        la, lb = TIMING.sub("<time>", la), TIMING.sub("<time>", lb)
        if NUMBER.sub("<n>", la) != NUMBER.sub("<n>", lb):
            out.append(f"line {i}: {la!r} -> {lb!r}")
        elif not all(_close(x, y) for x, y in zip(NUMBER.findall(la), NUMBER.findall(lb))):
            out.append(f"line {i}: numbers beyond rtol={RTOL}: {la!r} -> {lb!r}")
    return out


def _csv_text(path: str) -> str:
    with open(path, newline="", encoding="utf-8") as fh:
        return "\n".join(",".join(row) for row in csv.reader(fh))


def compare_run(rerun_dir: str, committed_dir: str) -> list[str]:
    """A rerun's ``results.csv`` and ``summary.md`` against the committed ones (the summary's elapsed-time line
    is a run time, not compared)."""
    out = []
    for name in ("results.csv", "summary.md"):
        a, b = os.path.join(committed_dir, name), os.path.join(rerun_dir, name)
        read = _csv_text if name.endswith(".csv") else (lambda p: open(p, encoding="utf-8").read())
        out += [f"{name}: {d}" for d in differences(read(a), read(b))]
    return out


def test_same_text_and_numbers_within_tolerance_pass():
    assert differences("TV 0.0100 at eps = 1 (3.2 s)", "TV 0.0101 at eps = 1 (9.9 s)") == []


def test_a_changed_word_fails():
    assert differences("ahead by z = 2.7: significant", "ahead by z = 2.7: not significant")


def test_a_number_beyond_tolerance_fails():
    assert differences("TV 0.0100", "TV 0.0110") and differences("187", "180")


def test_line_count_and_dates():
    assert differences("a\nb", "a")
    assert differences("run 2026-11-25 12:00 UTC: 5", "run 2026-12-01 23:00 UTC: 5") == []


def test_machine_paths_are_found():
    assert machine_paths("uldp_jax 0.1.0 from /work/main/uldp_jax") and not machine_paths("uldp_jax 0.1.0")


def test_committed_demo_and_summaries_name_no_machine_path():
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments", "demo")
    for name in ("summary.md", "results.csv"):
        with open(os.path.join(root, name), encoding="utf-8") as fh:
            assert not machine_paths(fh.read()), name


if __name__ == "__main__":  # .ci/run: python tests/test_docs_outputs.py RERUN_DIR COMMITTED_DIR
    diffs = compare_run(sys.argv[1], sys.argv[2])
    print("\n".join(diffs) if diffs else f"{sys.argv[1]} matches {sys.argv[2]} (rtol {RTOL}, run times skipped)")
    sys.exit(1 if diffs else 0)
