"""Every run setting reaches the report path (issue 47): a report-EM ``ul.simulate`` with ``rep_batch=``,
``rep_chunk=``, ``chunk_blocks=``, ``progress=``, ``devices=`` and ``shard=`` gives the same estimates and stats as
without them, and its progress bar counts the repetitions (report kernels run on the engine's runner, ``_shard``).
"""

import json
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import uldp_jax as ul

# one mechanism per device report form: dense bit-packed, compact bit-packed, compact support lists; and dense
# reports of another kind (OLH's hashed reports, EM on their supports)
MECHS = {"packed": "ul.RAPPOR(40, 1.0)", "compact-packed": "ul.URAP(1100, range(40), 1.0)",
         "compact-support": "ul.RAPPOR(1100, 9.0)", "dense-olh": "ul.OLH(6, 1.0)"}


def _run(mech, **kw):
    # 3 repetitions: with rep_chunk=2 the bar moves after a full chunk and after a short one
    d = mech.d
    res = ul.simulate(jax.random.key(5), mech, p=np.linspace(1, 2, d) / np.linspace(1, 2, d).sum(), n=300, reps=3,
                      methods=("em",), block_size=128, **kw)
    return np.asarray(res.estimates["em"]), np.asarray(res.stats)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["packed", "compact-support"])
def test_run_settings_do_not_change_report_estimates(name, capsys):
    """All settings at once against none: the stats bit for bit; EM's estimates equal within float32 rounding
    (the kernel is compiled for its chunk length and batch, and XLA may order EM's float32 sums differently)."""
    mech = eval(MECHS[name])
    base = _run(mech)
    got = _run(mech, rep_batch=2, rep_chunk=2, chunk_blocks=1, progress="stderr")
    np.testing.assert_array_equal(got[1], base[1])
    np.testing.assert_allclose(got[0], base[0], rtol=0, atol=1e-6)
    err = capsys.readouterr().err
    assert "2/3" in err and "3/3" in err, err  # the bar counted the repetitions chunk by chunk


SCRIPT = textwrap.dedent(
    """
    import json, jax, numpy as np
    import uldp_jax as ul
    assert len(jax.devices()) == 3, jax.devices()
    out = {}
    for name, src in MECHS.items():
        mech = eval(src)
        d = mech.d
        p = np.linspace(1, 2, d) / np.linspace(1, 2, d).sum()
        run = lambda **kw: ul.simulate(jax.random.key(5), mech, p=p, n=300, reps=5, methods=("em",),
                                       block_size=128, **kw)
        one = run(devices=jax.devices()[:1])
        for label, kw in (("all", {}), ("reps", dict(shard="reps")), ("users", dict(shard="users"))):
            res = run(**kw)
            est = np.abs(np.asarray(res.estimates["em"]) - np.asarray(one.estimates["em"])).max()
            out[f"{name}/{label}"] = [bool(est <= 1e-6), bool(np.array_equal(np.asarray(res.stats),
                                                                             np.asarray(one.stats)))]
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_report_path_on_several_devices_equals_one_device():
    """Three fake CPU devices (a count that does not divide the 5 repetitions): repetitions are split over them,
    with the stats bit-identical to one device and EM within float32 rounding, whatever ``shard`` says (one
    repetition's EM reads all its reports)."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=3".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    code = f"MECHS = {MECHS!r}\n" + SCRIPT
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900,
                          cwd=os.path.dirname(os.path.dirname(ul.__file__)), check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {f"{n}/{label}": [True, True] for n in MECHS for label in ("all", "reps", "users")}, out
