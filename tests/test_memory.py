"""Issue 53 item 5: ``ul.aggregate``, ``ul.estimate`` and EM refuse a call whose working memory exceeds
``sizing().call_memory_bytes`` before anything of that size is allocated (``uldp_jax/_memory.py``)."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _memory
from uldp_jax import _sizing

# The calls of the probe: each allocated 3-8 GB (or ran for minutes) before this guard.
REFUSED = {
    "emp_grr_2e28": "ul.estimate(ul.GRR(2**28, 1.0), np.zeros(10, np.int32), 'emp')",
    "aggregate_grr_2e31": "ul.aggregate(ul.GRR(2**31 - 1, 1.0), np.zeros(10, np.int32))",
    # 5,000 dense OUE reports: a broadcast view, so the input itself costs nothing
    "em_oue_2e16": "ul.estimate(ul.OUE(2**16, 1.0), np.broadcast_to(np.zeros(2**16, bool), (5000, 2**16)), 'em')",
    "em_grr_2e26": "ul.estimate(ul.GRR(2**26, 1.0), np.zeros(100, np.int32), 'em')",
}

# One fresh CPU process runs every refused call; it prints its own peak RSS (VmHWM: this process image only;
# RUSAGE_CHILDREN's ru_maxrss can carry a forking parent's peak, and the test process holds compiled programs).
SCRIPT = """
import re, time, numpy as np, uldp_jax as ul
from uldp_jax import _sizing
_sizing.SIZING_OVERRIDE["call_memory_bytes"] = 2**31  # the smallest CPU budget, on any machine
for name, call in CALLS.items():
    t = time.time()
    try:
        eval(call)
        print(name, "NOT-REFUSED")
    except ValueError as err:
        assert "call_memory_bytes" in str(err), str(err)
        print(name, "refused", time.time() - t)
print("VmHWM", re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
"""


def test_oversized_calls_are_refused_before_allocating():
    code = f"CALLS = {REFUSED!r}\n" + SCRIPT
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"}, cwd=os.path.dirname(os.path.dirname(ul.__file__)))
    assert out.returncode == 0, out.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.strip().splitlines())
    for name in REFUSED:
        verdict, seconds = lines[name].split()
        assert verdict == "refused", (name, out.stdout)
        assert float(seconds) < 5, (name, seconds)  # refused from shapes: no pass, no compile
    assert int(lines["VmHWM"]) < 1_000_000, out.stdout  # peak RSS under 1 GB (kB): nothing d- or n x d-sized


@pytest.mark.parametrize("call, match", [
    (lambda: ul.estimate(ul.GRR(2**28, 1.0), np.zeros(10, np.int32), "emp"), r"mech=GRR\(d=268435456.*GiB"),
    (lambda: ul.aggregate(ul.GRR(2**31 - 1, 1.0), np.zeros(10, np.int32)), r"ul.aggregate .*d=2147483647"),
    (lambda: ul.estimate(ul.OUE(2**16, 1.0), np.broadcast_to(np.zeros(2**16, bool), (5000, 2**16)), "em"),
     r"ys of shape \(5000, 65536\).*fewer reports"),
    (lambda: ul.estimation.em(ul.GRR(2**26, 1.0), np.zeros(100, np.int32)), r"EM with mech=GRR\(d=67108864"),
    (lambda: ul.estimation.em_stats(ul.GRR(2**26, 1.0), np.zeros(2**4, np.int32)), r"EM \(em_stats\)"),
])
def test_refusal_names_the_argument_size_and_remedy(call, match, monkeypatch):
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "call_memory_bytes", 2**31)  # the CPU default, on any device
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert re.search(r"\d GiB of working memory, more than the budget of 2 GiB", str(err.value))
    assert "SIZING_OVERRIDE['call_memory_bytes']" in str(err.value)


def test_cpu_budget_is_half_the_physical_memory_and_at_least_2_gib():
    import jax

    cpu = jax.devices("cpu")[0]
    assert _sizing.sizing(cpu).call_memory_bytes == max(2**31, _sizing.physical_memory_bytes() // 2)
    assert _sizing.physical_memory_bytes() > 2**30  # the OS says: this machine has more than 1 GiB


def test_default_budget_keeps_normal_calls():
    """GRR's "emp" up to d = 2**24 (the library's largest domains) and EM at d = 2**22 fit the smallest CPU budget."""
    budget = _sizing.Sizing(1, 1, 1).call_memory_bytes
    assert _memory.call_bytes(ul.GRR(2**24, 1.0), stage="estimate") <= budget
    assert _memory.call_bytes(ul.GRR(2**22, 1.0), stage="em") <= budget
    ys = np.zeros((10_000, 1024), bool)
    assert _memory.call_bytes(ul.OUE(1024, 1.0), ys, stage="em") <= budget


def test_budget_is_read_from_sizing(monkeypatch):
    mech = ul.GRR(1000, 1.0)
    ys = np.arange(100, dtype=np.int32) % 1000
    assert ul.aggregate(mech, ys).shape == (1000,)
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "call_memory_bytes", 1000)  # below 4 bytes x 1000 counts
    with pytest.raises(ValueError, match="call_memory_bytes"):
        ul.aggregate(mech, ys)
    with pytest.raises(ValueError, match="call_memory_bytes"):
        ul.estimate(mech, ys, "emp")
