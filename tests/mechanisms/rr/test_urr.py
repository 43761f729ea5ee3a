"""``uldp_jax.mechanisms.rr._urr``: uRR's perturb does O(s) host work, not O(d), on a huge domain."""

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_urr_perturb_is_o_s_on_the_host():
    """uRR over d = 1e9 with one sensitive item: 10 users in well under the 16 GB / 28 s it used to take."""
    # peak RSS from /proc (VmHWM: this process image only; ru_maxrss would carry the forking parent's peak)
    code = ("import re, time, jax, jax.numpy as jnp, uldp_jax as ul\n"
            "t = time.time(); ys = ul.perturb(jax.random.key(0), ul.URR(10**9, [0], 1.0), jnp.arange(10))\n"
            "ys.block_until_ready(); hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())\n"
            "print(time.time() - t, hwm.group(1))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"})
    assert out.returncode == 0, out.stderr
    seconds, maxrss_kb = out.stdout.split()
    assert float(seconds) < 20 and int(maxrss_kb) < 2_000_000, out.stdout
