"""HR for eps-LDP: FWHT decoding vs dense decoding, structured channel products, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.hadamard import _hadamard


def dense_decode(d, eps, counts):
    """Acharya-Sun-Zhang's estimator with the dense matrix: p_x = 2R (c(S_x)/n - 1/2), S_x = +1 set of row x+1."""
    K = counts.shape[-1]
    H = _hadamard.hadamard_matrix(K)[1 : d + 1]
    e = np.exp(eps)
    n = counts.sum()
    c_s = (H > 0).astype(np.float64) @ counts
    return 2 * (e + 1) / (e - 1) * (c_s / n - 0.5)


@pytest.mark.parametrize("d", [2, 3, 7, 8, 30])
def test_fwht_decode_equals_dense(d, x64):
    mech = ul.HR(d, 0.8)
    counts = np.random.default_rng(d).integers(0, 50, size=mech.K)
    np.testing.assert_allclose(np.asarray(ul.mechanisms.core.debias(mech, jnp.asarray(counts), counts.sum())),
                               dense_decode(d, 0.8, counts), rtol=1e-12, atol=1e-12)


def test_K_and_report_space():
    assert ul.HR(7, 1.0).K == 8 and ul.HR(8, 1.0).K == 16 and ul.HR(43750, 1.0).num_outputs == 65536
    assert ul.mechanisms.core.comm_bits(ul.HR(43750, 1.0)) == 16.0


def test_channel_products_match_dense(x64):
    mech = ul.HR(11, 1.3)
    Q = ul.channel(mech).Q
    rng = np.random.default_rng(0)
    p, w = rng.dirichlet(np.ones(11)), rng.normal(size=mech.K)
    np.testing.assert_allclose(np.asarray(mech.channel_matvec(jnp.asarray(p))), p @ Q, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(mech.channel_rmatvec(jnp.asarray(w))), Q @ w, rtol=1e-12, atol=1e-14)


def test_channel_form():
    """Q(y|x) = (1 + tanh(eps/2) H[x+1, y]) / K: two values, ratio e^eps, +1 set of size K/2."""
    eps = 1.0
    Q = ul.channel(ul.HR(5, eps)).Q
    assert set(np.round(np.unique(Q) * 8 * (np.e + 1), 12)) == {2.0, round(2 * np.e, 12)}
    assert np.all((Q > 1 / 8).sum(axis=1) == 4)
    rep = ul.audit(ul.HR(5, eps))
    assert rep.eps == pytest.approx(eps) and rep.eps_ldp == pytest.approx(eps)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(d=1, eps=1.0), ValueError, "d"),
    (dict(d=0, eps=1.0), ValueError, "d"),
    (dict(d=4.0, eps=1.0), TypeError, "d"),
    (dict(d=True, eps=1.0), TypeError, "d"),
    (dict(d=4, eps=0.0), ValueError, "eps"),
    (dict(d=4, eps=-1.0), ValueError, "eps"),
    (dict(d=4, eps=float("nan")), ValueError, "eps"),
    (dict(d=4, eps="1"), TypeError, "eps"),
    (dict(d=2**30, eps=1.0), ValueError, "d"),
])
def test_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ul.HR(**kwargs)


def test_bad_reports_and_items(key):
    mech = ul.HR(6, 1.0)
    with pytest.raises(ValueError, match="xs"):
        ul.perturb(key, mech, jnp.array([0, 6]))
    with pytest.raises(ValueError, match="ys"):
        ul.estimate(mech, jnp.array([0, 8]))


def test_tracer_construction_and_grad():
    """Rebuilt under jit/grad with a traced eps: the estimator is differentiable in eps."""
    stats = jnp.array([10, 3, 5, 7, 9, 2, 4, 6], jnp.int32)
    f = lambda e: jnp.sum(ul.mechanisms.core.debias(ul.HR(6, e), stats, 46) ** 2)
    g = jax.grad(f)(1.0)
    assert np.isfinite(float(g))
