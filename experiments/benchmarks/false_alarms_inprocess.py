"""Reduced false-alarm measurement in one process: the conformance sampler checks (README's KeepRR and every
library mechanism: ``tests/test_conformance.py::test_sampler_matches_channel``'s chi-square test of every input)
and the compact-sampler checks, re-run on ``S`` seed shifts with the compiled samplers reused.

Each shift replaces the tests' fixed key ``s`` by ``s + shift * 1_000_003`` (the same rule as ``pytest
--seed-shift``) and applies the same ``ul.testing.fits`` check at the suite's per-check level. Prints, per
shift, how many checks ran and failed; then the fraction of shifts with a failure. Used where a full
``false_alarms.py`` run per shift does not fit the machine.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul

ROOT = Path(__file__).resolve().parents[2]
STRIDE = 1_000_003


def _load(rel: str):
    spec = importlib.util.spec_from_file_location(rel.replace("/", "_"), ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(shifts: int) -> int:
    conf = _load("tests/test_conformance.py")
    alarms = 0
    for shift in range(1, shifts + 1):
        checks = failed = 0
        for name in conf.IDS:
            m = conf._user_view(name, 1.0, conf.USER_TAGS)
            Q = ul.channel(m).Q
            xs = jnp.repeat(jnp.arange(m.d, dtype=jnp.int32), conf.DRAWS)
            key = jax.random.key((7 + shift * STRIDE) % 2**31)
            idx = ul.testing.report_index(m, conf._SAMPLER(m, key, xs)).reshape(m.d, conf.DRAWS)
            for x in range(m.d):
                checks += 1
                failed += not ul.testing.fits(ul.testing.chi_square(np.bincount(idx[x], minlength=Q.shape[1]), Q[x]))
        alarms += failed > 0
        print(f"shift {shift}: {checks} checks, {failed} failed", flush=True)
    print(f"shifts with a false alarm: {alarms} of {shifts} (per-check level {ul.testing.ALPHA:g})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
