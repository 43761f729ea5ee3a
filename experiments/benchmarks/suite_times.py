"""Where the test suite's time goes (issue 48): per file and per test, wall time against JAX compile time.

Record a run, then read it::

    ULDP_JAX_TIMES=/tmp/suite python -m pytest            # each worker writes /tmp/suite.<worker>.json
    python experiments/benchmarks/suite_times.py /tmp/suite [--top 40] [--json out.json]

``tests/conftest.py`` records, per test (setup + call + teardown), the wall seconds, the seconds JAX spent in the
XLA backend compiling (``backend_s``), the seconds it spent tracing and lowering to MLIR (``trace_lower_s``) and the
number of backend compilations. "run" is what is left: executing programs, Python, subprocesses.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json


def load(prefix: str) -> dict:
    rows = {}
    for path in sorted(glob.glob(f"{prefix}.*.json")):
        with open(path) as f:
            rows.update(json.load(f))
    if not rows:
        raise SystemExit(f"no {prefix}.*.json: run the suite with ULDP_JAX_TIMES={prefix}")
    return rows


def by_file(rows: dict) -> list:
    files = collections.defaultdict(lambda: {"tests": 0, "wall_s": 0.0, "backend_s": 0.0, "trace_lower_s": 0.0,
                                             "compiles": 0})
    for nodeid, r in rows.items():
        f = files[nodeid.split("::")[0]]
        f["tests"] += 1
        for k in ("wall_s", "backend_s", "trace_lower_s", "compiles"):
            f[k] += r[k]
    return sorted(files.items(), key=lambda kv: -kv[1]["wall_s"])


def _line(name, r, tests=None):
    run = r["wall_s"] - r["backend_s"] - r["trace_lower_s"]
    lead = f"{tests:5d} " if tests is not None else ""
    return (f"{lead}{r['wall_s']:8.1f} {r['backend_s']:8.1f} {r['trace_lower_s']:8.1f} {run:8.1f} "
            f"{r['compiles']:7d}  {name}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--json", help="write the per-file table here")
    args = parser.parse_args(argv)
    rows = load(args.prefix)
    total = {k: sum(r[k] for r in rows.values()) for k in ("wall_s", "backend_s", "trace_lower_s", "compiles")}
    print(f"{len(rows)} tests; summed over workers: wall {total['wall_s']:.0f} s, backend compile "
          f"{total['backend_s']:.0f} s, trace+lower {total['trace_lower_s']:.0f} s, {total['compiles']} compilations")
    files = by_file(rows)
    print(f"\n{'tests':>5} {'wall_s':>8} {'backend':>8} {'trace':>8} {'run':>8} {'compiles':>7}  file")
    for name, r in files[:args.top]:
        print(_line(name, r, r["tests"]))
    print(f"\n{'wall_s':>8} {'backend':>8} {'trace':>8} {'run':>8} {'compiles':>7}  test")
    for nodeid, r in sorted(rows.items(), key=lambda kv: -kv[1]["wall_s"])[:args.top]:
        print(_line(nodeid, r))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"total": total, "files": dict(files)}, f, indent=1)


if __name__ == "__main__":
    main()
