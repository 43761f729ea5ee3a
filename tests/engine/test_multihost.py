"""Multi-host: 2 local processes (``jax.distributed.initialize``, CPU, gloo) give one process's numbers bit for bit.

The engine shards repetitions (or users, with an exact int32 ``psum``) over the global mesh, and every
repetition/block draws from ``fold_in`` keys, so the process layout never changes a result.
"""

import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import uldp_jax as ul

_WORKER = Path(__file__).with_name("_multihost_worker.py")
sys.path.insert(0, str(_WORKER.parent))
import _multihost_worker as worker  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_match_one_process_bit_for_bit(tmp_path):
    if not hasattr(jax.config, "jax_cpu_collectives_implementation"):
        pytest.skip("this jax has no CPU collectives option (gloo)")
    out = tmp_path / "two.npz"
    port = str(_free_port())
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join([str(Path(ul.__file__).parents[1]),
                                                                            os.environ.get("PYTHONPATH", "")]))
    env["XLA_FLAGS"] = " ".join(f for f in env.get("XLA_FLAGS", "").split() if "device_count" not in f)
    procs = [subprocess.Popen([sys.executable, str(_WORKER), str(i), "2", port, str(out)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
    try:
        logs = [p.communicate(timeout=240)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(logs)[-4000:]
    two = np.load(out)
    one = worker.run(ul, devices=jax.devices()[:1])
    assert set(two.files) == set(one)
    for name, stats in one.items():
        np.testing.assert_array_equal(two[name], stats, err_msg=name)
