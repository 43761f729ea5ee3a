"""The issue's extreme cases: exact or refused, never silent garbage; no O(d) host work for O(s) state."""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _validate


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda e: ul.Wheel(6, e, num_hashes=16),
                                  lambda e: ul.UWheel(6, [0, 2], e, num_hashes=16), lambda e: ul.OUE(6, e),
                                  lambda e: ul.UUE(6, [0, 2], e), lambda e: ul.RAPPOR(6, e)],
                         ids=["Wheel", "UWheel", "OUE", "UUE", "RAPPOR"])
def test_large_eps_exact_up_to_the_limit_and_refused_beyond(make):
    for e in (70.0, _validate.EPS_MAX):  # [1e-3, 50] is covered for every mechanism in test_properties
        mech = make(e)
        ch = ul.channel(mech)
        np.testing.assert_allclose(ch.Q.sum(1), 1.0, atol=1e-12)
        rep = ul.audit(mech)
        assert rep.ok and rep.tight and rep.eps == pytest.approx(e, rel=1e-9), (mech, rep)
        ys = ul.perturb(jax.random.key(0), mech, jnp.arange(6, dtype=jnp.int32))
        assert np.all(np.isfinite(np.asarray(ul.estimate(mech, ys))))
        res = ul.simulate(jax.random.key(1), mech, p=np.full(6, 1 / 6), n=60, reps=1)
        assert np.all(np.isfinite(np.asarray(res.estimates["emp"])))
    for e in (200.0, 700.0):
        with pytest.raises(ValueError, match="eps"):
            make(e)


def test_bit_product_channel_audited_in_log_space():
    # 0.5 q^13 with q = e^-100 / (1 + ...) underflows float64: exp(-1300); the log-space audit stays exact
    for mech in (ul.OUE(14, 100.0), ul.UUE(14, list(range(12)), 100.0), ul.URAP(14, [0, 1, 2], 100.0)):
        assert np.any(ul.channel(mech).Q == 0)  # the float64 channel has underflowed entries ...
        rep = ul.audit(mech)
        assert rep.ok and rep.eps == pytest.approx(100.0, rel=1e-9), (mech, rep)  # ... the audit does not care


def test_wheel_coverage_limits():
    assert float(ul.Wheel(6, 100.0).l) == pytest.approx(2.0**-14)
    assert float(ul.UWheel(6, [0, 1], 1e-3).l) < 1.0
    with pytest.raises(ValueError, match="l="):
        ul.Wheel(6, 1.0, l=1e-6)


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
