"""Measures the statistical tests' false-alarm rate: the same statistical test files under several seed shifts.

Each shift runs the files once (``pytest --seed-shift N``, every seed the tests make shifted: fresh, reproducible
draws) and records whether any statistical check failed. With a correct implementation every failure is a false
alarm; the suite's budget (``uldp_jax.testing.SUITE_ALPHA``) promises at most 1% per full run.

Usage::

    python experiments/benchmarks/false_alarms.py --shifts 1-20 [--out results/false_alarms.csv] [FILES...]

Runs one pytest process per shift (``-n 0``), one after another; prints one line per shift and the total.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "tests/test_conformance.py::test_sampler_matches_channel",
    "tests/test_conformance.py::test_emp_mean_matches_the_exact_moments",
    "tests/mechanisms/core/test_compact.py::test_compact_sampler_matches_channel",
    "tests/mechanisms/core/test_compact.py::test_number_of_ones_is_binomial",
    "tests/engine/test_engine.py::test_iid_sampling_follows_p",
    "tests/engine/test_counts_path.py",
    "tests/mechanisms/transform/test_glutf_counts.py",
    "tests/test_mutants.py",
]


def _shifts(text: str) -> list[int]:
    if "-" in text:
        lo, hi = (int(v) for v in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(v) for v in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shifts", default="1-20", help="shifts to run: 'A-B' or 'a,b,c'")
    parser.add_argument("--out", default=None, help="CSV with one row per shift")
    parser.add_argument("files", nargs="*", default=FILES)
    args = parser.parse_args(argv)
    rows = []
    for shift in _shifts(args.shifts):
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                               f"--seed-shift={shift}", *args.files], cwd=ROOT, capture_output=True, text=True)
        tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        failed = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
        rows.append({"shift": shift, "rc": proc.returncode, "failed": ";".join(failed), "summary": tail,
                     "seconds": round(time.time() - t0, 1)})
        print(f"shift {shift}: rc={proc.returncode} {tail} {rows[-1]['seconds']} s", flush=True)
        for f in failed:
            print(f"  FAILED {f}", flush=True)
    alarms = sum(r["rc"] != 0 for r in rows)
    print(f"runs with a failure: {alarms} of {len(rows)}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
