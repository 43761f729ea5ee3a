"""RWS (Fang et al., USENIX Security 2025; SEUNICK/LDP_Frequency_Protocols ``fp/RWS.py``): its supports have subset
selection's exact law on the "full" seed family, so its per-item variance is SS's closed form; the "hash" family's
subsets are uniform k-subsets (tests/mechanisms/subset/test_rws_subsets.py); its estimator is Fang et al.'s; its
report is ceil(log2 d) bits and a seed; it is eps-LDP for every seed family."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401

# (d, eps, k): k = 1 (GRR's support law), k < d / 2, k > d / 2 (Floyd on the complement), k = d - 1
CASES = [(5, 1.0, 1), (6, 0.5, 2), (7, 2.0, 4), (6, 3.0, 5)]


def _support_law(m) -> np.ndarray:
    """float ``[d, 2**d]``: the law of a report's support set (bit pattern) under each input, from the channel."""
    Q = ul.channel(m).Q
    sup = m._column_support()
    codes = (sup.astype(np.int64) << np.arange(m.d)).sum(axis=1)
    law = np.zeros((m.d, 2**m.d))
    np.add.at(law.T, codes, Q.T)
    return law


@pytest.mark.parametrize("d,eps,k", CASES)
def test_full_family_support_law_is_subset_selections(d, eps, k, x64):
    rws, ss = ul.RWS(d, eps, k=k, family="full"), ul.SS(d, eps, k=k)
    ss_sup = ss._column_support()
    ss_codes = (ss_sup.astype(np.int64) << np.arange(d)).sum(axis=1)
    want = np.zeros((d, 2**d))
    want[:, ss_codes] = ul.channel(ss).Q
    np.testing.assert_allclose(_support_law(rws), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("d,eps,k", CASES)
def test_variance_is_subset_selections_closed_form(d, eps, k, x64):
    rws, ss = ul.RWS(d, eps, k=k, family="full"), ul.SS(d, eps, k=k)
    rng = np.random.default_rng(0)
    for p in [np.full(d, 1.0 / d), rng.dirichlet(np.ones(d))]:
        for model in ("iid", "fixed"):
            exact = ul.theory.exact_item_mse(rws, p, 500.0, model=model)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(rws, p, 500.0, model)), exact,
                                       rtol=1e-10)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(ss, p, 500.0, model)), exact, rtol=1e-10)
        np.testing.assert_allclose(float(ul.theory.mse(rws, p, 500.0)), float(ul.theory.mse(ss, p, 500.0)),
                                   rtol=1e-12)


@pytest.mark.parametrize("d,eps,k", CASES)
def test_ldp_for_every_seed_family(d, eps, k, x64):
    for m in (ul.RWS(d, eps, k=k, family="full"), ul.RWS(d, eps, k=k, num_seeds=9)):
        rep = ul.audit(m)
        assert rep.ok and rep.tight, (m, rep)
        np.testing.assert_allclose(rep.eps, eps, rtol=1e-9)


def test_hash_family_sampler_matches_its_channel(key):
    """The conformance suite samples the "full" family; here a small explicit hash family (flipped Floyd)."""
    m = ul.RWS(7, 1.5, k=4, num_seeds=11)
    Q = ul.channel(m).Q
    for x in (0, 6):
        assert ul.testing.fits(ul.testing.sampler_vs_channel(jax.random.fold_in(key, x), m, x, 40_000))
    wrong = ul.channel(ul.RWS(7, 1.0, k=4, num_seeds=11)).Q  # power: a channel of another eps is rejected
    assert ul.testing.sampler_vs_channel(key, m, 0, 40_000, Q=wrong).pvalue < 1e-6
    assert Q.shape == wrong.shape


def fang_estimate(ys: ul.mechanisms.subset._rws.RWSReport, subsets: np.ndarray, d: int, k: int, eps: float):
    """Port of ``RWS.aggregate_data_list`` with the subsets their seeds name: support ``(subset + y) % d``,
    debiased with ``pure_p = k e / (k e + d - k)`` and ``pure_q = pure_p (k - 1)/(d - 1) + (1 - pure_p) k/(d - 1)``
    (as frequencies: their counts over n)."""
    e = math.exp(eps)
    pure_p = k * e / (k * e + d - k)
    pure_q = pure_p * (k - 1) / (d - 1) + (1 - pure_p) * k / (d - 1)
    total = np.zeros(d)
    for s, y in zip(np.asarray(ys.seed), np.asarray(ys.shift)):
        total[(np.flatnonzero(subsets[s]) + y) % d] += 1
    n = len(ys.seed)
    return (total - n * pure_q) / (pure_p - pure_q) / n


@pytest.mark.parametrize("d,eps", [(10, 1.0), (33, 2.0), (100, 0.5)])
def test_estimate_and_k_are_fang_et_als(d, eps, key):
    m = ul.RWS(d, eps, num_seeds=64)
    e = math.exp(eps)
    def fang_mse(kk):  # their get_ana_MSE_by_k
        pp = kk * e / (kk * e + d - kk)
        qq = pp * (kk - 1) / (d - 1) + (1 - pp) * kk / (d - 1)
        return qq * (1 - qq) / (pp - qq) ** 2 + (1 - pp - qq) / d / (pp - qq)

    cont = d / (e + 1)
    want_k = 1 if cont <= 1 else (math.ceil(cont) if fang_mse(math.ceil(cont)) < fang_mse(int(cont)) else int(cont))
    assert m.k == want_k
    xs = jax.random.randint(key, (3000,), 0, d)
    ys = ul.perturb(jax.random.fold_in(key, 1), m, xs)
    subsets = np.asarray(m.subsets(jnp.arange(64, dtype=jnp.uint32)))
    ours = np.asarray(ul.estimate(m, ys, method="emp"))
    np.testing.assert_allclose(ours, fang_estimate(ys, subsets, d, m.k, eps), rtol=2e-4, atol=2e-5)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), np.asarray(m.support(ys)).sum(axis=0))


def test_aggregate_chunks_and_weights(key):
    m = ul.RWS(23, 1.0, k=5)
    ys = ul.perturb(key, m, jnp.arange(1000) % 23)
    w = (jnp.arange(1000) % 3 == 0).astype(jnp.int32)
    sup = np.asarray(m.support(ys))
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys, w)), (sup * np.asarray(w)[:, None]).sum(axis=0))
    assert (sup.sum(axis=1) == 5).all()


def test_large_domain_estimate_within_se(key):
    d, eps, n = 1000, 1.0, 10_000
    m = ul.RWS(d, eps)
    p = np.full(d, 1.0 / d)
    xs = jnp.arange(n, dtype=jnp.int32) % d
    est = np.asarray(ul.estimate(m, ul.perturb(key, m, xs), method="emp"))
    assert ul.testing.estimate_within_se(m, est, p, n)


def test_comm_bits_and_value_bits():
    m = ul.RWS(22000, 1.0)
    assert m.value_bits() == 15  # ceil(log2 22000)
    assert ul.mechanisms.core.comm_bits(m) == 15 + 32
    f = ul.RWS(10, 1.0, k=3, family="full")
    assert ul.mechanisms.core.comm_bits(f) == pytest.approx(4 + math.log2(math.comb(10, 3)))
    assert ul.mechanisms.core.comm_bits(ul.RWS(10, 1.0, k=3, num_seeds=8)) == 4 + 3
    assert ul.mechanisms.core.comm_bits(m) < ul.mechanisms.core.comm_bits(ul.SS(22000, 1.0))


def test_tune_keeps_the_full_family_consistent(x64):
    m = ul.RWS(8, 1.0, k=6, family="full")
    tuned = ul.tune(m)
    assert tuned.k == ul.SS(8, 1.0).k and tuned.num_seeds == math.comb(8, tuned.k)


@pytest.mark.parametrize("kwargs,match", [
    (dict(family="nope"), "family"), (dict(family="full", k=10), "C\\(d, k\\)"),
    (dict(family="full", k=2, num_seeds=3), "num_seeds"), (dict(num_seeds=0), "num_seeds"),
    (dict(num_seeds=2.5), "num_seeds"), (dict(k=0), "k"), (dict(k=20), "k"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        ul.RWS(20, 1.0, **kwargs)


def test_bad_reports_and_channel_refusal(key):
    m = ul.RWS(6, 1.0, k=2, num_seeds=4)
    ys = ul.perturb(key, m, jnp.arange(6))
    with pytest.raises(ValueError, match="shift"):
        ul.estimate(m, ys._replace(shift=ys.shift + 6), method="emp")
    with pytest.raises(ValueError, match="seed"):
        ul.estimate(m, ys._replace(seed=ys.seed + jnp.uint32(4)), method="emp")
    with pytest.raises(TypeError, match="seed"):
        ul.estimate(m, ys._replace(seed=ys.seed.astype(jnp.int32)), method="emp")
    with pytest.raises(ValueError, match="enumerates the seeds"):
        ul.channel(ul.RWS(6, 1.0, k=2))


def test_glutf_over_rws_is_uldp_with_glutf_over_ss_risk(x64):
    sensitive = [0, 1, 2, 3, 4]
    g = ul.glutf(ul.RWS(5, 1.0, k=2, family="full"), 8, sensitive)
    rep = ul.audit(g)
    assert rep.ok and rep.tight and rep.kind == "uldp"
    p = np.random.default_rng(1).dirichlet(np.ones(8))
    exact = ul.theory.exact_mse(g, p, 100.0)
    np.testing.assert_allclose(float(ul.theory.mse(g, p, 100.0)), exact, rtol=1e-10)
    np.testing.assert_allclose(float(ul.theory.mse(ul.glutf(ul.SS(5, 1.0, k=2), 8, sensitive), p, 100.0)), exact,
                               rtol=1e-10)


@pytest.mark.parametrize("d,eps", [(16, 4.0), (128, 4.0), (1024, 4.0), (128, 1.0)])
def test_fixed_model_risk_is_fang_et_als_analytical_mse(d, eps, x64):
    """Their ``get_ana_MSE`` (the n MSE of their Table 3 and ``drawAnaMSE.py``): the per-item fixed-model risk at
    the uniform histogram, ``q(1 - q)/(p - q)^2 + (1 - p - q)/(d (p - q))`` with their ``pure_p``, ``pure_q``."""
    m = ul.RWS(d, eps)
    e = math.exp(eps)
    p = m.k * e / (m.k * e + d - m.k)
    q = p * (m.k - 1) / (d - 1) + (1 - p) * m.k / (d - 1)
    fang = q * (1 - q) / (p - q) ** 2 + (1 - p - q) / d / (p - q)
    np.testing.assert_allclose(float(ul.theory.mse(m, np.full(d, 1.0 / d), 1.0, model="fixed")) / d, fang, rtol=1e-9)
