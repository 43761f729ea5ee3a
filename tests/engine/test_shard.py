"""Multi-device sharding is bit-identical to one device (4 fake CPU devices, in a subprocess).

Covers repetitions sharded with a device count that does not divide them (padding), users sharded when
there are fewer repetitions than devices (psum of int32 partial counts), the counts path, and a mechanism grid.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json
    import jax, numpy as np
    import uldp_jax as ul

    assert len(jax.devices()) == 4, jax.devices()
    key, one = jax.random.key(3), jax.devices()[:1]
    p = np.array([0.3, 0.1, 0.2, 0.1, 0.2, 0.1])
    xs = np.arange(3001) % 6
    grid = jax.vmap(lambda e: ul.GRR(6, e))(np.array([0.5, 1.0, 2.0]))
    cases = {
        "reps_pad": (ul.GRR(6, 1.0), dict(p=p, n=3000, reps=6, path="per_user", block_size=256)),
        "users": (ul.GRR(6, 1.0), dict(xs=xs, reps=2, path="per_user", block_size=128, chunk_blocks=2)),
        "counts": (ul.GRR(6, 1.0), dict(p=p, n=10**6, reps=7, path="counts")),
        "grid": (grid, dict(p=p, n=1000, reps=5, path="per_user", block_size=256)),
    }
    out = {}
    for name, (mech, kw) in cases.items():
        a = np.asarray(ul.simulate(key, mech, **kw).stats)
        b = np.asarray(ul.simulate(key, mech, devices=one, **kw).stats)
        out[name] = [bool(np.array_equal(a, b)), list(a.shape)]
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_sharded_equals_single_device():
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4".strip()  # keep the rest
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"reps_pad": [True, [6, 6]], "users": [True, [2, 6]], "counts": [True, [7, 6]],
                   "grid": [True, [3, 5, 6]]}
