"""Counts the ``while`` loops in the compiled (optimized) HLO of ``ul.perturb`` per mechanism (issue 17, item 5).

A data-dependent ``while`` on the per-user hot path syncs with the host on a GPU once per iteration check, so
each one left in a chunk step costs a round trip per step. This prints, for GRR, uRR, OUE, uRAP, OLH and SS,
the number of ``while`` instructions in the optimized HLO of ``jax.jit(lambda k, xs: ul.perturb(k, mech, xs))``
on 4096 users (the per-user engine calls the same ``perturb_batch`` per block).

Run: ``nice python experiments/benchmarks/hlo_while_count.py``.

Measured (CPU, jax 0.10.2, branch accel; before = main 614e5c5, after = this branch: no sampler changed)::

    mechanism  data-dependent while loops  fixed-trip-count loops (CPU threefry rounds, rolled; none on GPU)
    GRR        1 -> 1                      6
    uRR        1 -> 1                      7
    OUE        0 -> 0                      1
    uRAP       0 -> 0                      3
    OLH        0 -> 0                      6
    SS         1 -> 1                      8

Counts path (issue 26; ``counts_while_counts``, CPU, d = 25 in ``tests/engine/test_kernels.py``), before ->
after the binomial of ``mechanisms/core/_binomial.py``: GRR 2 -> 1, OUE 4 -> 2, SS 7 -> 4, uSS 11 -> 6. One loop
per binomial call site (its fallback, which runs no iteration unless a cell needs more than the unrolled terms /
tries; ``jax.random.binomial`` had two that always iterate). SS keeps its window loop, which sits inside the
``d``-step item scan with two binomial sites and so runs once per item.

The one data-dependent loop in GRR, uRR and SS is the Lemire redraw of ``mechanisms/core/_uniform.py`` (SS: after a
spare word per user); its module docstring says why no fixed number of tries can be exact. "Uniform other than
x" is already one draw ``u`` on ``[0, m - 1)`` mapped ``u + (u >= x)``, with no loop of its own.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp

import uldp_jax as ul

def mechanisms():
    sens = list(range(0, 625, 5))
    return {
        "GRR": ul.GRR(625, 1.0),
        "uRR": ul.URR(625, sens, 1.0),
        "OUE": ul.OUE(625, 1.0),
        "uRAP": ul.URAP(625, sens, 1.0),
        "OLH": ul.OLH(625, 1.0),
        "SS": ul.SS(625, 1.0),
    }


def while_counts(mech, n=4096) -> tuple[int, int]:
    """``(data_dependent, fixed)`` while loops in the optimized HLO; fixed = XLA knows the trip count."""
    xs = jnp.zeros((n,), jnp.int32)
    fn = jax.jit(lambda k, x: ul.perturb(k, mech, x))
    text = fn.lower(jax.random.key(0), xs).compile().as_text()
    loops = [line for line in text.splitlines() if re.search(r"\swhile\(", line) and "condition=" in line]
    fixed = sum("known_trip_count" in line for line in loops)
    return len(loops) - fixed, fixed


def counts_while_counts(mech) -> tuple[int, int]:
    """``(data_dependent, fixed)`` while loops in the optimized HLO of the exact iid count sampler (x64, as the
    engine runs it): ``ul.fastpath.sample_counts_iid``. Loops inside a scan count once here but run every step."""
    with ul.fastpath.x64_context():
        p = jnp.full((mech.d,), 1.0 / mech.d, jnp.float64)
        fn = jax.jit(lambda k, n: ul.fastpath.sample_counts_iid(k, mech, n, p))
        text = fn.lower(jax.random.key(0), jnp.float64(1e6)).compile().as_text()
    loops = [line for line in text.splitlines() if re.search(r"\swhile\(", line) and "condition=" in line]
    fixed = sum("known_trip_count" in line for line in loops)
    return len(loops) - fixed, fixed


def main():
    print(f"jax {jax.__version__}, backend {jax.default_backend()}")
    for name, mech in mechanisms().items():
        dep, fixed = while_counts(mech)
        print(f"{name:5s} data-dependent while loops per call: {dep}   fixed-trip-count loops: {fixed}")
    sens = list(range(0, 625, 5))
    counts = {"GRR": ul.GRR(625, 1.0), "uRR": ul.URR(625, sens, 1.0), "OUE": ul.OUE(625, 1.0),
              "uRAP": ul.URAP(625, sens, 1.0), "uUE": ul.UUE(625, sens, 1.0), "HR": ul.HR(625, 1.0),
              "SS": ul.SS(625, 1.0), "uSS": ul.USS(625, sens, 1.0)}
    for name, mech in counts.items():
        dep, fixed = counts_while_counts(mech)
        print(f"{name:5s} counts sampler: data-dependent while loops {dep}   fixed-trip-count loops: {fixed}")


if __name__ == "__main__":
    main()
