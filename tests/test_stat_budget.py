"""The statistical budget is suite-wide (tests/conftest.py): the controller sums the ``uldp_jax.testing`` checks of
every pytest-xdist worker and fails the run when the total exceeds ``MAX_CHECKS``, though no worker alone does.

Each case runs pytest with two workers (``--dist loadfile``, one file each) in a subprocess on a throw-away directory
holding a copy of the suite's conftest with ``MAX_CHECKS`` lowered, and two files of two checks each.
"""

import pathlib
import shutil
import subprocess
import sys

import pytest

_CONFTEST = pathlib.Path(__file__).with_name("conftest.py")
_TEST = '''
import os

from uldp_jax import testing


def test_two_checks():
    assert os.environ.get("PYTEST_XDIST_WORKER")  # runs on a worker
    assert testing.within_se(0.0, 0.0, 1.0) and testing.within_se(0.1, 0.0, 1.0)
'''


def _run(tmp_path, max_checks):
    text = _CONFTEST.read_text() + f"\n\nfrom uldp_jax import testing as _t\n_t.MAX_CHECKS = {max_checks}\n"
    (tmp_path / "conftest.py").write_text(text)
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(_TEST)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile",
         "-p", "xdist", "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.slow
def test_checks_of_all_workers_are_summed_against_max_checks(tmp_path):
    rc, out = _run(tmp_path, max_checks=3)  # 2 + 2 checks on two workers: each alone is within 3, the run is not
    assert rc == 1, out
    assert "statistical checks: 4 > MAX_CHECKS=3 over all workers" in out, out


@pytest.mark.slow
def test_a_run_within_max_checks_passes(tmp_path):
    rc, out = _run(tmp_path, max_checks=4)
    assert rc == 0, out
    assert "2 passed" in out and "> MAX_CHECKS" not in out, out
    assert "statistical checks (uldp_jax.testing, all workers): 4 of MAX_CHECKS=4" in out, out


def test_estimate_within_se_passes_an_honest_estimate_and_refuses_a_biased_one():
    """The helper that replaced fixed tolerances on estimates: the SE is the mechanism's own (``_estimation.debias_variance``)."""
    import jax
    import numpy as np

    import uldp_jax as ul
    from uldp_jax import testing

    mech = ul.OUE(6, 1.0)
    xs = np.repeat(np.arange(6), 5000)
    est = np.asarray(ul.estimate(mech, ul.perturb(jax.random.key(5), mech, xs)), np.float64)
    truth = np.full(6, 1 / 6)
    assert testing.estimate_within_se(mech, est, truth, xs.size)
    before = testing.checks_run()
    assert not testing.estimate_within_se(mech, 1.5 * est, truth, xs.size, alpha=1e-6)  # power: 50% bias
    assert not testing.estimate_within_se(mech, np.stack([est + 0.05] * 400), truth, xs.size, alpha=1e-6)
    assert testing.checks_run() == before + 2  # one check per call


def test_at_most_is_one_sided_and_emp_tv_matches_simulation():
    """``at_most`` (ordering claims) is one check at the per-check level, one-sided; ``emp_tv`` (the normal
    approximation of emp's TV) agrees with 400 simulated emp estimates of GRR (mean and sd within their SEs)."""
    import jax
    import numpy as np

    import uldp_jax as ul
    from uldp_jax import testing

    before = testing.checks_run()
    z1 = testing.z_critical(2 * testing.ALPHA)  # one-sided critical value, 4.42
    assert testing.at_most(1.0 + 0.99 * z1, 1.0, 1.0) and testing.at_most(-50.0, 1.0, 1.0)
    assert not testing.at_most(1.0 + 1.01 * z1, 1.0, 1.0)
    assert testing.checks_run() == before + 3

    mech, n, reps = ul.GRR(8, 1.0), 20_000, 400
    p = np.linspace(1.0, 2.0, 8) / np.linspace(1.0, 2.0, 8).sum()
    res = ul.simulate(jax.random.key(11), mech, p=p, n=n, reps=reps, methods=("emp",))
    est = np.asarray(res.estimates["emp"], np.float64)
    tv = 0.5 * np.abs(est - p).sum(-1)
    mean, sd = testing.emp_tv(mech, p, n)
    assert testing.within_se(tv.mean(), mean, tv.std(ddof=1) / np.sqrt(reps))
    # sd of the sample sd of 400 draws ~ sd / sqrt(2 * 399) (normal); the folded sum is close to normal at d = 8
    assert testing.within_se(tv.std(ddof=1), sd, 2 * sd / np.sqrt(2 * (reps - 1)))
