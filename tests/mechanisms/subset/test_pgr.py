"""PGR (Feldman, Nelson, Nguyen, Talwar 2022): its variance is its closed form's and subset selection's, its aggregate
counts hyperplane supports (the points and hyperplanes: tests/mechanisms/subset/test_projective.py), GLUTF over it is
ULDP, and it agrees with minilek/private_frequency_oracles (tests/mechanisms/subset/minilek_pgr.py, a port): same
estimate on the same reports; minilek's randomizer is not the paper's channel (its rejection loop under-samples one
point), shown on that randomizer's exact channel."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401
from uldp_jax.mechanisms.subset import _pgr, _projective as pg

from tests.mechanisms.subset import minilek_pgr as ref

# (d, eps, q): t = 2 (K = q + 1), t = 3, t = 4, padded and unpadded
CASES = [(5, 3.0, 5), (7, 1.0, 2), (13, 2.0, 3), (15, 0.7, 2), (30, 1.5, 7)]


@pytest.mark.parametrize("d,eps,q", CASES)
def test_variance_is_the_closed_form(d, eps, q, x64):
    m = ul.PGR(d, eps, q=q)
    rng = np.random.default_rng(0)
    for p in [np.full(d, 1.0 / d), rng.dirichlet(np.ones(d))]:
        for model in ("iid", "fixed"):
            exact = ul.theory.exact_item_mse(m, p, 500.0, model=model)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 500.0, model)), exact, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(ul.theory.pgr_item_nvar(eps, p, q, m.t)),
                               500.0 * ul.theory.exact_item_mse(m, p, 500.0), rtol=1e-10)


@pytest.mark.parametrize("q,t", [(5, 3), (7, 3), (3, 4), (11, 2)])
def test_subset_selections_variance_with_log2_K_bits(q, t, x64):
    """At q = e^eps + 1 (a prime) and d = K, PGR's risk is subset selection's at its optimal k (to 1e-9), and a
    report costs log2 K bits against SS's log2 C(K, k)."""
    eps, K = np.log(q - 1.0), pg.num_points(q, t)
    m, ss = ul.PGR(K, eps, q=q), ul.SS(K, eps)
    p = np.full(K, 1.0 / K)
    np.testing.assert_allclose(float(ul.theory.mse(m, p, 1.0)), float(ul.theory.mse(ss, p, 1.0)), rtol=1e-9)
    assert ul.mechanisms.core.comm_bits(m) == pytest.approx(np.log2(K))
    assert ul.mechanisms.core.comm_bits(m) <= ul.mechanisms.core.comm_bits(ss)


def test_aggregate_counts_supports_in_chunks(monkeypatch):
    m = ul.PGR(30, 1.5, q=7)
    ys = ul.perturb(jax.random.key(0), m, jnp.asarray(np.arange(3000) % 30, jnp.int32))
    dense = np.asarray(m.support(ys)).sum(axis=0)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), dense)
    monkeypatch.setattr(_pgr, "CHUNK_POINTS", 64)  # 8 reports per chunk, a ragged last chunk
    w = jnp.asarray(np.arange(3000) % 3 == 0, jnp.int32)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys, w)), np.asarray(m.support(ys))[np.asarray(w) > 0].sum(0))


def test_same_estimate_as_minilek(x64):
    """minilek's estimate_freq (alpha * cnt + beta * n, divided by n) on our reports is our debias."""
    d, eps, q = 30, 1.5, 7
    m = ul.PGR(d, eps, q=q)
    ys = ul.perturb(jax.random.key(1), m, jnp.asarray(np.arange(600) % d, jnp.int32))
    ours = np.asarray(ul.estimate(m, ys, "emp"), np.float64)
    np.testing.assert_allclose(ours, ref.estimate_all(np.asarray(ys), d, eps, q, m.t) / 600, rtol=1e-10, atol=1e-12)


def test_minileks_randomizer_is_not_the_papers_channel(x64):
    """util.cc's rejection loop rejects an all-zero draw before overwriting the solved coordinate, so off the
    hyperplane the point e_i has weight (q - 1)/q: at q = 2 the port's samples fit that channel, not the paper's
    (which ours samples: conformance suite), and it is not eps-LDP (eps + log(2 (1 - 2^-t)) here)."""
    d, eps, q = 7, 1.0, 2
    m = ul.PGR(d, eps, q=q)
    Qm = ref.channel(d, eps, q, m.t)
    np.testing.assert_allclose(Qm.sum(axis=1), 1.0, atol=1e-12)
    rng = np.random.default_rng(3)
    Q = ul.channel(m).Q
    for x in (0, 3):
        counts = np.bincount([ref.local_randomizer(rng, x, eps, q, m.t) for _ in range(4000)], minlength=7)
        assert ul.testing.fits(ul.testing.chi_square(counts, Qm[x]))
        assert ul.testing.chi_square(counts, Q[x]).pvalue < 1e-8
    lq = np.log(Qm)
    np.testing.assert_allclose(np.max(lq[:, None, :] - lq[None, :, :]), eps + np.log(2 * (1 - 2.0**-m.t)),
                               rtol=1e-12)


def test_glutf_over_pgr_is_uldp():
    g = ul.glutf(ul.PGR(7, 1.0, q=2), 10, (0, 1, 2, 4, 5, 7, 8))
    rep = ul.audit(g)
    assert rep.ok and rep.tight and rep.kind == "uldp"
    p = np.full(10, 0.1)
    np.testing.assert_allclose(float(ul.theory.mse(g, p, 100.0)), ul.theory.exact_mse(g, p, 100.0), rtol=1e-5)


@pytest.mark.parametrize("kwargs,match", [
    (dict(d=7, eps=1.0, q=4), "prime"),
    (dict(d=7, eps=1.0, q=1), "q"),
    (dict(d=7, eps=1.0, q=50000), "q"),
    (dict(d=2400, eps=1.0, q=2371), "2\\^24"),
    (dict(d=2**30, eps=0.1, q=2), "2\\^31"),
    (dict(d=1, eps=1.0, q=2), "d"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ul.PGR(**kwargs)


def test_default_q_is_minileks():
    assert ul.PGR(1000, 5.0).q == 151  # the smallest prime >= ceil(e^5 + 1)
    assert ul.PGR(1000, 1.0).q == 5
    assert ul.PGR(10, 30.0).q == 11  # q + 1 >= d: one line holds the domain
    with pytest.raises(ValueError, match="q=None needs a concrete"):
        jax.vmap(lambda e: ul.PGR(10, e))(jnp.asarray([1.0, 2.0]))
