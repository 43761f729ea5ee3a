"""Benchmark: the issue-17 Monte Carlo sweep, compile counts and wall time on both paths of ``ul.simulate``.

Sweep: ``n`` in {2e3, 5e3, 2e4, 1e5, 3e5, 1e6} x ``reps`` in {10, 20, 50} for ``ul.GRR(625, 1.0)`` with a fixed
Zipf-like ``p`` and ``methods=("emp",)``, once with ``path="counts"`` and once with ``path="per_user"``.
Before each path's sweep one warm-up call (n = 1000, reps = 2) runs, as "after the first call" in the issue
(its time and compiles are reported as ``first_call``);
then the sweep is timed end to end (results blocked on), and XLA backend compiles are counted through
``jax.monitoring`` (JAX's host-to-device "stage" programs excluded, as in tests/engine/test_compile_counts.py).
Targets (issue 17): at most 15 compiles per path; under 5 s on the counts path, under 10 s per user.

Run: ``nice python experiments/benchmarks/bench_sweep.py`` (writes ``bench_sweep.json`` next to this file).
The machine is shared: ``os.getloadavg()`` is recorded before and after each path's sweep.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import time

import jax
import numpy as np

import uldp_jax as ul

NS = (2000, 5000, 20000, 100000, 300000, 1000000)
REPS = (10, 20, 50)
_COMPILES: list = []


def _on_event(event, secs, **kw):
    if event == "/jax/core/compile/backend_compile_duration" and kw.get("fun_name") not in ("stage", "jit(stage)"):
        _COMPILES.append((kw.get("fun_name"), secs))


def sweep(path: str, mech, p) -> dict:
    c_first, t_first = len(_COMPILES), time.perf_counter()
    res = ul.simulate(jax.random.key(0), mech, p=p, n=1000, reps=2, methods=("emp",), path=path)
    jax.block_until_ready(res.estimates["emp"])
    first = {"seconds": round(time.perf_counter() - t_first, 3), "compiles": len(_COMPILES) - c_first,
             "compile_seconds": round(sum(s for _, s in _COMPILES[c_first:]), 3)}
    c0 = len(_COMPILES)
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    for n in NS:
        for reps in REPS:
            res = ul.simulate(jax.random.key(1), mech, p=p, n=n, reps=reps, methods=("emp",), path=path)
            jax.block_until_ready(res.estimates["emp"])
    secs = time.perf_counter() - t0
    new = _COMPILES[c0:]
    return {"path": path, "seconds": round(secs, 3), "compiles": len(new),
            "compile_seconds": round(sum(s for _, s in new), 3), "compiled": sorted({f for f, _ in new}),
            "loadavg_before": load0, "loadavg_after": os.getloadavg(), "first_call": first}


def main():
    jax.monitoring.register_event_duration_secs_listener(_on_event)
    mech = ul.GRR(625, 1.0)
    w = 1.0 / np.arange(1, 626)
    p = w / w.sum()
    rows = [sweep(path, mech, p) for path in ("counts", "per_user")]
    out = {"jax": jax.__version__, "backend": jax.default_backend(), "device": str(jax.devices()[0]),
           "cpu_count": os.cpu_count(), "machine": platform.machine(),
           "note": "shared 2-core machine; see loadavg per row", "ns": NS, "reps": REPS, "rows": rows}
    for r in rows:
        print(r)
    (pathlib.Path(__file__).parent / "bench_sweep.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
