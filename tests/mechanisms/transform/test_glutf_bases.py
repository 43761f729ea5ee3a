"""Pure LDP bases for GLUTF: SS, OLH (seeded hash families), Wheel; plus UE/GRR pure probabilities."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.mechanisms.core import _pure_uldp as th
from uldp_jax.mechanisms.core._records import likelihood_of, pure_floats

EPS = (0.1, 1.0, 5.0)


def _bases(eps):
    return [
        ul.SS(6, eps, k=2),
        ul.SS(5, eps, k=1),
        ul.SS(7, eps, k=4),
        ul.OLH(4, eps, g=3, family="full"),
        ul.OLH(3, eps, g=4, family="full"),
        ul.OLH(5, eps, g=2, num_hashes=16),
        ul.Wheel(4, eps, l=0.3, num_hashes=8),
        ul.Wheel(3, eps, l=0.7, num_hashes=5),
    ]


def _pure_from_channel(mech):
    ch = ul.channel(mech)
    A = ch.Q @ likelihood_of(mech).support()  # A[x, j] = P(report of x supports j)
    off = A[~np.eye(mech.d, dtype=bool)]
    return np.diag(A), off


@pytest.mark.parametrize("eps", EPS)
def test_channels_audit_tight_and_pure(eps):
    for mech in _bases(eps):
        ch = ul.channel(mech)
        assert ch.Q.shape == (mech.d, mech.num_outputs)
        np.testing.assert_allclose(ch.Q.sum(axis=1), 1.0, atol=1e-12)
        rep = ul.audit(mech)
        assert rep.ok and rep.tight, (mech, rep)
        p, q, z = pure_floats(mech)
        assert math.isnan(z)
        diag, off = _pure_from_channel(mech)
        np.testing.assert_allclose(diag, p, rtol=1e-12)
        exact_q = mech.estimator().exact  # SS, OLH "full": the affine (pure) model holds on the channel
        if exact_q:  # exactly pure; finite "hash" families are pure only approximately
            np.testing.assert_allclose(off, q, rtol=1e-12)
        # closed-form share (used by GLUTF's z) equals the channel's worst share
        from uldp_jax.mechanisms.transform._glutf_channel import share_from_channel
        if exact_q or isinstance(mech, ul.Wheel):
            np.testing.assert_allclose(share_from_channel(mech), float(mech.pure().share), rtol=1e-6)


@pytest.mark.parametrize("mech", [m for i, m in enumerate(_bases(1.0)) if i not in (1, 4)],
                         ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("batched", [True, False])
def test_samplers_match_channel(mech, batched):
    key = jax.random.key(0)
    for x in (0, mech.d - 1):
        n = 20_000 if batched else 8_000  # per-user keys are costly; 8k draws still resolve these channels
        res = testing.sampler_vs_channel(jax.random.fold_in(key, x), mech, x, n, batched=batched)
        assert testing.fits(res), (mech, x, res)


@pytest.mark.parametrize("mech,wrong", [
    (ul.SS(6, 1.0, k=2), ul.SS(6, 1.6, k=2)),
    (ul.OLH(4, 1.0, g=3, family="full"), ul.OLH(4, 1.6, g=3, family="full")),
    (ul.OLH(5, 1.0, g=2, num_hashes=16), ul.OLH(5, 1.6, g=2, num_hashes=16)),
    (ul.Wheel(4, 1.0, l=0.3, num_hashes=8), ul.Wheel(4, 1.0, l=0.45, num_hashes=8)),
], ids=["SS", "OLH-full", "OLH-hash", "Wheel"])
def test_wrong_channel_rejected(mech, wrong):
    res = testing.sampler_vs_channel(jax.random.key(1), mech, 0, 40_000, Q=ul.channel(wrong).Q)
    assert res.pvalue < 1e-6


def test_report_shapes_and_purity_of_sampling():
    key = jax.random.key(0)
    xs = jnp.arange(5, dtype=jnp.int32)
    ys = ul.perturb(key, ul.SS(5, 1.0, k=2), xs)
    assert ys.shape == (5, 5) and ys.dtype == jnp.bool_ and np.all(np.asarray(ys).sum(1) == 2)
    r = ul.perturb(key, ul.OLH(5, 1.0), xs)
    assert r.seed.dtype == jnp.uint32 and r.value.dtype == jnp.int32 and r.value.shape == (5,)
    w = ul.perturb(key, ul.Wheel(5, 1.0), xs)
    assert w.y.dtype == jnp.float32 and np.all((np.asarray(w.y) >= 0) & (np.asarray(w.y) < 1))
    # same key, same draws; different keys differ
    for mech in (ul.SS(5, 1.0), ul.OLH(5, 1.0), ul.Wheel(5, 1.0)):
        a = jax.tree.leaves(ul.perturb(key, mech, xs))
        b = jax.tree.leaves(ul.perturb(key, mech, xs))
        c = jax.tree.leaves(ul.perturb(jax.random.key(7), mech, xs))
        assert all(np.array_equal(u, v) for u, v in zip(a, b))
        assert not all(np.array_equal(u, v) for u, v in zip(a, c))


def test_defaults_are_mse_optimal():
    for d, eps in [(10, 1.0), (50, 2.0), (7, 0.1)]:
        k = ul.SS(d, eps).k
        mse = lambda kk: float(th.pure_uldp_mse(*[float(v) for v in th.ss_probs(d, eps, kk)], 1.0, d, 0.0))
        assert mse(k) <= min(mse(kk) for kk in range(1, d)) + 1e-12
        g = ul.OLH(d, eps).g
        olh = lambda gg: float(th.pure_uldp_mse(*[float(v) for v in th.lh_probs(eps, gg)], 1.0, d, 0.0))
        assert olh(g) <= min(olh(gg) for gg in range(2, 200)) * (1 + 1e-6)
        l = float(ul.Wheel(d, eps).l)
        wheel = lambda ll: float(th.pure_uldp_mse(*[float(v) for v in th.wheel_probs(eps, ll)], 1.0, d, 0.0))
        assert wheel(l) <= min(wheel(ll) for ll in np.linspace(0.01, 0.99, 99)) * (1 + 1e-6)
    assert ul.OLH(1000, 2.0).g in (8, 9)  # ~ e^eps + 1 for large d


def test_aggregate_support_counts_and_emp():
    key = jax.random.key(3)
    xs = jax.random.randint(key, (3000,), 0, 6, dtype=jnp.int32)
    for mech in (ul.SS(6, 2.0), ul.OLH(6, 2.0)):
        ys = ul.perturb(jax.random.fold_in(key, 1), mech, xs)
        stats = ul.aggregate(mech, ys)
        assert stats.dtype == jnp.int32 and stats.shape == (6,)
        est = ul.estimate(mech, ys, "emp")
        target = np.bincount(np.asarray(xs), minlength=6) / 3000
        assert testing.estimate_within_se(mech, est, target, 3000)


@pytest.mark.parametrize("bad,match", [
    (lambda: ul.SS(5, 1.0, k=0), "k"),
    (lambda: ul.SS(5, 1.0, k=5), "k"),
    (lambda: ul.SS(5, 1.0, k=1.5), "k"),
    (lambda: ul.OLH(5, 1.0, g=1), "g"),
    (lambda: ul.OLH(5, 1.0, family="nope"), "family"),
    (lambda: ul.OLH(5, 1.0, g=2, num_hashes=0), "num_hashes"),
    (lambda: ul.OLH(40, 1.0, g=3, family="full"), "full"),
    (lambda: ul.Wheel(5, 1.0, l=0.0), "l"),
    (lambda: ul.Wheel(5, 1.0, l=1.0), "l"),
    (lambda: ul.Wheel(5, -1.0), "eps"),
    (lambda: ul.channel(ul.OLH(5, 1.0)), "hash family"),
])
def test_bad_input(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad()
