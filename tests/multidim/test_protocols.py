"""SPL, SMP and RS+FD alike: exact audits, sampler vs channel, simulate on the engine with marginals within SE
(the marginals' exact moments: tests/multidim/test_marginals.py; each protocol's own tests: test_spl.py,
test_smp.py, test_rsfd.py)."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md
from uldp_jax import testing

from tests.multidim._cases import CASES


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("name", CASES)
def test_exact_audit_certifies_the_whole_report(name):
    m = CASES[name]()
    a = ul.audit(m)
    assert a.ok and a.tight, a
    assert a.kind == "ldp"


@pytest.mark.parametrize("name", ["spl-oue-232", "smp-grr-34", "rsfd-grr-232", "rsfd-ouez-232", "rsfd-suer-34"])
def test_sampler_matches_channel(name, key):
    m = CASES[name]()
    for x, k in zip((0, m.d - 1), jax.random.split(key, 2)):
        assert testing.fits(testing.sampler_vs_channel(k, m, x, 30_000))


@pytest.mark.parametrize("name", ["spl-grr-34", "rsfd-grr-34", "smp-oue-232"])
def test_simulate_runs_on_the_engine_and_marginals_within_se(name, key):
    m = CASES[name]()
    p = np.random.default_rng(7).dirichlet(np.ones(m.d))
    n = 20_000
    with jax.enable_x64(False), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="SMP's statistic has rank")  # SMP's joint: not identifiable
        res = ul.simulate(key, m, p=p, n=n, reps=2)
    ps = md.marginals_of(p, m.domains)
    var = m.marginal_variance(ps, n)
    for r in range(2):
        est = m.marginals(jnp.asarray(res.stats[r], jnp.float64), n)
        for j in range(len(m.domains)):
            assert testing.within_se(np.asarray(est[j]), np.asarray(ps[j]), np.sqrt(np.asarray(var[j])))
