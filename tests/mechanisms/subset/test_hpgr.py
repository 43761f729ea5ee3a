"""HPGR (Feldman, Nelson, Nguyen, Talwar 2022, §4): its variance is its closed form's, its estimator is minilek's
(``hybrid_projective_geometry.cc``'s alpha, beta, gamma, ported below) on the same reports, h = 1 is PGR, and it
is refused as a GLUTF base (not pure). Audit, sampler vs channel, debias and grids: the conformance suite."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

from tests.mechanisms.subset import minilek_pgr as ref

CASES = [(6, 1.0, 2, 2), (14, 1.0, 2, 2), (40, 2.0, 3, 3), (50, 2.0, 5, 2)]


@pytest.mark.parametrize("d,eps,h,q", CASES)
def test_variance_is_the_closed_form(d, eps, h, q, x64):
    m = ul.HPGR(d, eps, h=h, q=q)
    rng = np.random.default_rng(0)
    for p in [np.full(d, 1.0 / d), rng.dirichlet(np.ones(d))]:
        for model in ("iid", "fixed"):
            exact = ul.theory.exact_item_mse(m, p, 300.0, model=model)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 300.0, model)), exact, rtol=1e-10)


def _minilek_estimate(reports, m):
    """``HybridProjectiveGeometryResponse::estimate_freq`` for every item, divided by n."""
    b, t, q, e = m.b, m.t, m.q, np.exp(float(m.eps))
    cset, cint = (q ** (t - 1) - 1) // (q - 1), (q ** (t - 2) - 1) // (q - 1)
    p = 1.0 / (b * m.h + (e - 1) * cset)
    alpha = (b * m.h + (e - 1) * cset) / ((e - 1) * (cset - cint))
    beta = -alpha * cint / cset
    gamma = -alpha * p * cset - beta * p * b
    out = np.zeros(m.d)
    for x in range(m.d):
        v = ref.index_to_vec(x % b, t, q)
        same = [int(r) % b for r in reports if int(r) // b == x // b]
        c1 = sum(1 for u in same if sum(a * c for a, c in zip(ref.index_to_vec(u, t, q), v)) % q == 0)
        out[x] = alpha * c1 + beta * len(same) + gamma * len(reports)
    return out / len(reports)


def test_same_estimate_as_minilek(x64):
    m = ul.HPGR(40, 2.0, h=3, q=3)
    ys = ul.perturb(jax.random.key(0), m, jnp.asarray(np.arange(400) % 40, jnp.int32))
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "emp"), np.float64), _minilek_estimate(np.asarray(ys), m),
                               rtol=1e-10, atol=1e-12)


def test_aggregate_is_support_and_block_counts():
    m = ul.HPGR(50, 2.0, h=5, q=2)
    ys = ul.perturb(jax.random.key(1), m, jnp.asarray(np.arange(2000) % 50, jnp.int32))
    cols = np.asarray(ys)
    dense = m._column_stats()[cols].sum(axis=0)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), dense)


def test_one_block_is_pgr(x64):
    p = np.random.default_rng(2).dirichlet(np.ones(13))
    np.testing.assert_allclose(ul.theory.exact_item_mse(ul.HPGR(13, 1.5, h=1, q=3), p, 10.0),
                               ul.theory.exact_item_mse(ul.PGR(13, 1.5, q=3), p, 10.0), rtol=1e-10)


def test_not_a_glutf_base():
    with pytest.raises(TypeError, match="pure LDP"):
        ul.glutf(ul.HPGR(14, 1.0, h=2, q=2), 20, tuple(range(14)))


@pytest.mark.parametrize("kwargs,match", [(dict(d=14, eps=1.0, h=0, q=2), "h"), (dict(d=14, eps=1.0, h=2, q=4), "prime")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ul.HPGR(**kwargs)
