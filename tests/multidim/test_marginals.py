"""``uldp_jax/multidim/_marginals.py``: the per-attribute (marginal) estimators of SPL, SMP and RS+FD, exactly
unbiased on the exact channel, with their closed-form variances (SMP's given the users who sampled the attribute)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from uldp_jax import multidim as md

from tests.multidim._cases import CASES


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _per_report(m):
    """g[y]: each attribute's estimate from one report y (n = 1): the estimators are per-user averages."""
    M = m.num_outputs
    eye = jnp.eye(M)
    return [np.asarray(jax.vmap(lambda h: m.marginals(h, 1)[j])(eye)) for j in range(len(m.domains))]


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("smp")])
def test_marginals_exactly_unbiased_and_variance_closed_form(name):
    m = CASES[name]()
    Q, _ = m.channel_matrix()
    p = np.random.default_rng(3).dirichlet(np.ones(m.d))
    pi = p @ Q
    g = _per_report(m)
    ps = md.marginals_of(p, m.domains)
    n = 1000
    var = m.marginal_variance(ps, n)
    for j in range(len(m.domains)):
        mean = pi @ g[j]
        np.testing.assert_allclose(mean, ps[j], atol=1e-10)
        exact = (pi @ g[j] ** 2 - mean**2) / n
        np.testing.assert_allclose(np.asarray(var[j]), exact, rtol=1e-9)


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("smp")])
def test_smp_marginals_unbiased_given_nj_and_variance_at_n_over_k(name):
    m = CASES[name]()
    p = np.random.default_rng(4).dirichlet(np.ones(m.d))
    ps = md.marginals_of(p, m.domains)
    k, n = len(m.domains), 900
    var = m.marginal_variance(ps, n)
    off = 0
    for j, o in enumerate(m.oracles):
        Qj = np.asarray(o.channel_matrix()[0])
        pij = np.asarray(ps[j]) @ Qj  # column law given attribute j was sampled
        h = np.zeros((o.num_outputs, m.num_outputs))
        h[np.arange(o.num_outputs), off + np.arange(o.num_outputs)] = 1.0
        gj = np.asarray(jax.vmap(lambda v: m.marginals(v)[j])(jnp.asarray(h)))
        np.testing.assert_allclose(pij @ gj, ps[j], atol=1e-10)
        np.testing.assert_allclose(np.asarray(var[j]), (pij @ gj**2 - (pij @ gj) ** 2) / (n / k), rtol=1e-9)
        off += o.num_outputs
