"""Shape-stable kernels (issue 17): a sweep over n and reps compiles a bounded number of engine kernels.

``n`` is data (chunk counts are traced; per user, the chunk size does not depend on n and the blocks past the full
chunks run one at a time), and repetition ids come in buckets (``2^k`` or ``3 * 2^k``: from 1 on the counts path,
which draws its padding repetitions; at least 64 per user, where padding ids are skipped), so the kernels of a
sweep are keyed on a few sizes only: one per user, at most two per octave of reps on the counts path. Counted: traces of the engine kernels
(``engine.TRACE_COUNTS``) and every XLA backend compile of ``ul.simulate_stats`` (``jax.monitoring``).
"""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.engine import _engine as engine

_COMPILES = []


def _on_event(event, secs, **kw):
    # "stage" programs are JAX's host-to-device staging of new input/output shapes (a few ms each), not kernels
    if event == "/jax/core/compile/backend_compile_duration" and kw.get("fun_name") not in ("stage", "jit(stage)"):
        _COMPILES.append(kw.get("fun_name"))


jax.monitoring.register_event_duration_secs_listener(_on_event)

P = np.random.default_rng(0).dirichlet(np.ones(25))
NS = (2000, 5000, 20000, 100000)
REPS = (3, 5, 10)


@pytest.mark.parametrize("path", ["per_user", "counts"])
def test_sweep_compiles_a_bounded_number_of_kernels(path):
    mech = ul.GRR(25, 1.0)
    # warm the small helpers (alias table, key handling) once, as "after the first call" in the issue
    ul.simulate_stats(jax.random.key(0), mech, p=P, n=1000, reps=2, path=path)
    traces0, compiles0 = engine.TRACE_COUNTS[path], len(_COMPILES)
    for n in NS:
        for reps in REPS:
            stats = np.asarray(ul.simulate_stats(jax.random.key(1), mech, p=P, n=n, reps=reps, path=path)[0])
            assert stats.shape == (reps, 25) and np.all(stats.sum(1) == n)
    traces = engine.TRACE_COUNTS[path] - traces0
    compiles = len(_COMPILES) - compiles0
    # per user: one rep length (64: padding reps are skipped) and one chunk size for every n: the warm-up's kernel
    # serves all 12 (n, reps) pairs. Counts: one kernel per rep bucket, reps 3, 5, 10 -> 3, 6, 12 (the warm-up's
    # reps = 2 is a fourth); n is data.
    assert traces <= {"per_user": 0, "counts": 3}[path], traces
    assert compiles <= {"per_user": 2, "counts": 4}[path], (compiles, _COMPILES[compiles0:])


def test_buckets():
    assert [engine.bucket(x) for x in (1, 2, 3, 4, 5, 7, 9, 10, 20, 50, 600, 1024)] == [
        1, 2, 3, 4, 6, 8, 12, 12, 24, 64, 768, 1024]


@pytest.mark.parametrize("path", ["per_user", "counts"])
def test_simulate_sweep_compiles_at_most_15(path):
    """The issue's sweep shape through ``ul.simulate`` (kernels and the estimate): n is data for the estimate too."""
    mech = ul.GRR(25, 1.0)
    ul.simulate(jax.random.key(0), mech, p=P, n=1000, reps=2, path=path)
    compiles0 = len(_COMPILES)
    for n in (2000, 5000, 20000):
        for reps in (10, 20, 50):
            res = ul.simulate(jax.random.key(1), mech, p=P, n=n, reps=reps, path=path)
            assert np.asarray(res.estimates["emp"]).shape == (reps, 25)
    # kernels: per user none new; counts 3 rep buckets (12, 24, 64); the jitted estimate pads its rows to 64 on
    # the counts path and runs eagerly per user
    assert len(_COMPILES) - compiles0 <= 4, _COMPILES[compiles0:]  # the bound is 15
