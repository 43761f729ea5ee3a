"""003 eqs 10, 30-31 (non-pure GLUTF aggregation) checked against exact channels; discrepancy documented."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.mechanisms.transform._glutf_channel import base_support
from uldp_jax.mechanisms.transform import _nonpure_uldp as npth
from uldp_jax.mechanisms.core import _pure_uldp as th
from uldp_jax.mechanisms.core._records import pure_floats

CASES = [
    (ul.SS(4, 1.0, k=2), 8, [0, 2, 4, 6]),
    (ul.UE(3, 2.0, p=0.5), 6, [1, 3, 5]),
    (ul.OLH(3, 0.5, g=2, family="full"), 7, [0, 1, 2]),
    (ul.GRR(2, 1.0), 5, [3, 4]),
]


def _eq30_matrix(mech):
    """G [m, d]: eq 30 is ``c_hat = (1/n) sum_i G[col(y_i)]`` (a per-report linear estimator)."""
    Q, _ = mech.base.channel_matrix()
    Sb = base_support(mech.base)
    m_b, s, d = Q.shape[1], mech.s, mech.d
    dn = d - s
    with th.x64():
        f, z = float(mech.f()), float(mech.z())
        p, q = (float(v) for v in (mech.base.probs() if hasattr(mech.base, "probs") else mech.base._pq()))
    sens = np.zeros(d, bool)
    sens[list(mech.sensitive)] = True
    nonsens = np.flatnonzero(~sens)
    G = np.zeros((m_b * (1 + dn) + dn, d))
    GA = np.zeros_like(G)
    G[:m_b, sens] = GA[:m_b, sens] = (Sb - q) / (p - q)
    for j, x in enumerate(nonsens):
        G[m_b + j, x] = 1.0 / (1.0 - f)
        G[m_b + j, sens] = -(f * (1.0 - z) / s) / (1.0 - f)
    return G, GA, f, z, sens


def _moments(Q, G, c, n):
    mean = c @ Q @ G
    var = (c @ (Q @ G**2 - (Q @ G) ** 2)) / n
    return mean, var


@pytest.mark.parametrize("rule", ["pure", "non_pure"])
@pytest.mark.parametrize("base,d,sens", CASES, ids=lambda v: type(v).__name__ if hasattr(v, "eps") else "")
def test_eq30_unbiased_and_eq31_gap(base, d, sens, rule):
    mech = ul.glutf(base, d, sens, rule=rule)
    rep = ul.audit(mech)
    assert rep.ok, rep  # eq 10's f with the largest valid z is ULDP too
    Q = ul.channel(mech).Q
    G, GA, f, z, smask = _eq30_matrix(mech)
    c = np.linspace(1.0, 3.0, d)
    c /= c.sum()
    n = 1000
    mean, var = _moments(Q, G, c, n)
    np.testing.assert_allclose(mean, c, atol=1e-12)  # Theorem 7: unbiased
    _, ua = _moments(Q, GA, c, n)
    theta_n = c[~smask].sum()
    with th.x64():
        eq31 = np.asarray(npth.nonpure_variance_eq31(ua, c, n, f, z, smask))
        gap = float(npth.nonpure_covariance_gap(theta_n, n, f, z, mech.s))
        # the library's estimator on the exact expected statistic
        stats = n * (c @ Q @ _stat_matrix(mech))
        est = np.asarray(mech.estimate_eq30(jnp.asarray(stats), n))
    np.testing.assert_allclose(est, c, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(var[~smask], eq31[~smask], rtol=1e-9)  # X_N part of eq 31: exact
    # X_S part: eq 31 drops -2 f(1-z)/s Cov(Agg, theta'); the exact variance exceeds it by exactly the gap
    np.testing.assert_allclose(var[smask] - eq31[smask], gap, rtol=1e-7, atol=1e-15)


def _stat_matrix(mech):
    """[m, d + 1]: the contribution of each channel column to ``eq30_stats``."""
    Sb = base_support(mech.base)
    m_b, s, d = Sb.shape[0], mech.s, mech.d
    dn = d - s
    M = np.zeros((m_b * (1 + dn) + dn, d + 1))
    M[:m_b, list(mech.sensitive)] = Sb
    M[:m_b, d] = 1.0
    nonsens = [x for x in range(d) if x not in mech.sensitive]
    for j, x in enumerate(nonsens):
        M[m_b + j, x] = 1.0
    return M


def test_nonpure_sampling_stats_and_refusals():
    mech = ul.glutf(ul.UE(3, 1.0), 7, [0, 3, 6], rule="non_pure")
    assert ul.mechanisms.core.num_stats(mech) == 8
    with pytest.raises(ValueError, match="not pure"):
        pure_floats(mech)
    assert mech.estimator().affine is None  # no affine form: debias is 003 eq 30, its variance from the channel
    assert mech.estimator().debias == mech.estimate_eq30
    xs = jnp.asarray(np.repeat(np.arange(7), 1500), jnp.int32)
    ys = ul.perturb(jax.random.key(0), mech, xs)
    stats = ul.aggregate(mech, ys)
    assert stats.shape == (8,) and stats.dtype == jnp.int32
    est = np.asarray(mech.estimate_eq30(stats, xs.shape[0]))
    _, var = _moments(ul.channel(mech).Q, _eq30_matrix(mech)[0], np.full(7, 1 / 7), xs.shape[0])  # exact
    assert testing.within_se(est, 1 / 7, np.sqrt(var))
    for x in (0, 1):
        assert testing.fits(testing.sampler_vs_channel(jax.random.key(x), mech, x, 10_000))
    # eq 10's f differs from eq 9's
    pure = ul.glutf(ul.UE(3, 1.0), 7, [0, 3, 6])
    assert float(mech.f()) != pytest.approx(float(pure.f()))
