"""The XLA flags the test session compiles under (tests/conftest.py), shared with the scripts that record what the
tests compare against (tests/data/make_regression.py), so a snapshot is recorded under the flags it is checked
under.

Both flags cut compile time only; the programs compute the same values:

* ``--xla_backend_optimization_level=0``: LLVM's optimisation pipeline off. XLA's CPU fast-math is off by
  default, so LLVM may not reorder floating-point arithmetic at any level.
* ``--xla_cpu_use_fusion_emitters=false``: fusions are emitted by XLA's element-wise emitter instead of the MLIR
  fusion emitters, which cost more to compile for the suite's many small programs. The regression snapshot's
  reports and non-EM estimates are bit-identical either way (its float32 EM estimates move by at most 8e-6,
  within its stated tolerance).

Measured: experiments/benchmarks/README.md, "Test suite".
"""

TEST_XLA_FLAGS = ("--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false")


def with_test_flags(flags: str | None) -> str:
    """``flags`` (an ``XLA_FLAGS`` value) with each test flag appended that it does not set already."""
    out = (flags or "").strip()
    for flag in TEST_XLA_FLAGS:
        if flag.split("=")[0] not in out:
            out = f"{out} {flag}".strip()
    return out
