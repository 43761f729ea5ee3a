"""``uldp_jax/mechanisms/subset/_ubd.py``, uBD (Yoon, Park, Nam, Lee 2025): it beats uRR, uRAP, uSS and high-low HR
in the worst case over a grid, and it agrees with phy811/uBD's decoder on the same reports
(tests/mechanisms/subset/phy811_ubd.py, a port). Its mixture weights: test_ubd_weights.py; its closed-form
variance: test_ubd_forms.py. The conformance suite covers the audit, the sampler against the channel, debias
exactness and grids."""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401
from uldp_jax.mechanisms.subset._ubd import UBDReport

from tests.mechanisms.subset import phy811_ubd as ref


def _worst(m):
    return ul.theory.exact_worst_mse(m)[0]


@pytest.mark.parametrize("d", [5, pytest.param(7, marks=pytest.mark.slow)])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_optimal_against_urr_urap_uss_highlow_hr(d, eps, x64):
    """At every (d, s, eps): uBD's exact worst-case risk is at most uRR's, uRAP's at its best theta (a grid and
    001's default), uSS's at its best k and high-low HR's (all through the exact channels)."""
    for s in range(2, d):
        sens = tuple(range(d - s, d))
        ubd = _worst(ul.UBD(d, sens, eps))
        thetas = list(np.linspace(0.1, 0.9, 9)) + [None]
        rivals = {
            "uRR": _worst(ul.URR(d, sens, eps)),
            "uRAP": min(_worst(ul.URAP(d, sens, eps, theta=th)) for th in thetas),
            "uSS": min(_worst(ul.USS(d, sens, eps, k=k)) for k in range(1, s)),
            "HighLowHR": _worst(ul.HighLowHR(d, sens, eps)),
        }
        for name, risk in rivals.items():
            assert ubd <= risk * (1 + 1e-9), (d, s, eps, name, ubd, risk)


@pytest.mark.parametrize("d,s,eps", [(7, 4, 1.0), pytest.param(9, 4, 0.5, marks=pytest.mark.slow)])
def test_same_estimate_as_phy811_decoder(d, s, eps, x64):
    """Our debias and phy811's decode_opt_ULDP (ported, before its clip-and-renormalise) give the same estimate
    from the same reports: the mixture decoder (X_S first, as the MATLAB assumes) and the single-size one."""
    m = ul.UBD(d, tuple(range(s)), eps)
    xs = jnp.asarray(np.repeat(np.arange(d), 300), jnp.int32)
    ys = ul.perturb(jax.random.key(4), m, xs)
    Y = np.zeros((xs.shape[0], d), bool)
    Y[:, :s] = np.asarray(ys.subset)
    item = np.asarray(ys.item)
    Y[np.flatnonzero(item >= 0), item[item >= 0]] = True
    ours = np.asarray(ul.estimate(m, ys, "emp"), np.float64)
    t = np.zeros(s)
    t[np.asarray(m.sizes) - 1] = m.weights
    if len(m.sizes) > 1:
        theirs = ref.decode_mixture(Y, m.alpha, t, eps, s)
    else:
        theirs = ref.decode_single(Y, m.sizes[0], eps, list(range(s)), list(range(s, d)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def _phy811_channel(m):
    """The exact channel of phy811's encode_opt_ULDP.m in mixture mode: a sensitive user's one uniform picks the
    size (u in [T_{k-1}, T_k)) and also decides whether the own item is kept (u < e/(e + s/k - 1))."""
    Q = np.array(ul.channel(m).Q)
    e, s = np.exp(float(m.eps)), m.s
    cdf = np.r_[0.0, np.cumsum(m.weights)]
    col = 0
    for j, k in enumerate(m.sizes):
        keep = max(0.0, min(cdf[j + 1], e / (e + s / k - 1)) - cdf[j])  # P(size k and own item kept)
        for subset in itertools.combinations(range(s), k):
            for x in range(s):  # X_S = {0..s-1}
                inside = x in subset
                Q[x, col] = (keep / _comb(s - 1, k - 1) if inside
                             else (m.weights[j] - keep) / _comb(s - 1, k) if k < s else 0.0)
            col += 1
    return Q


def _comb(a, b):
    return float(math.comb(a, b))


def test_phy811_encoder_in_mixture_mode_is_not_uldp(x64):
    """phy811's encoder reuses the size uniform for the keep decision (``encodeSensUsers(..., randFlagSens(rel))``),
    so sizes and keeping are correlated: at (d, s, eps) = (7, 4, 1) a size-2 report never holds its sender's own
    item, which a sensitive input cannot afford (the ratio to another input's is infinite). The port's samples fit
    that channel, not the paper's (which the library samples, conformance suite)."""
    m = ul.UBD(7, (0, 1, 2, 3), 1.0)
    assert m.sizes == (1, 2)
    Qp = _phy811_channel(m)
    np.testing.assert_allclose(Qp.sum(axis=1), 1.0, atol=1e-12)
    rng = np.random.default_rng(5)
    xs = np.repeat(np.arange(4), 3000)
    Y = ref.encode(rng, xs, 1.0, 7, list(range(4)), np.asarray(m.weights))
    ys = UBDReport(jnp.asarray(Y[:, :4]), jnp.full(xs.shape, -1, jnp.int32))  # sensitive inputs send subsets
    idx = ul.testing.report_index(m, ys).reshape(4, 3000)
    Q = ul.channel(m).Q
    for x in range(4):
        counts = np.bincount(idx[x], minlength=Q.shape[1])
        assert ul.testing.fits(ul.testing.chi_square(counts, Qp[x]))
        assert ul.testing.chi_square(counts, Q[x]).pvalue < 1e-12
    protected = Qp[:4, :-3]  # the subset columns, sensitive inputs
    assert np.any((protected == 0).any(axis=0) & (protected > 0).any(axis=0))  # a ratio e^inf between two inputs


@pytest.mark.slow
def test_em_is_the_mle_on_the_report_histogram(x64):
    """EM through the SupportRatio likelihood reaches the maximum of the exact multinomial likelihood on the
    channel's columns (SciPy's optimiser on the same histogram, from a softmax parametrisation)."""
    optimize = pytest.importorskip("scipy.optimize")
    m = ul.UBD(6, (0, 2, 3), 1.0, sizes=(1, 2), weights=(0.7, 0.3), alpha=0.4)
    xs = jnp.asarray(np.repeat(np.arange(6), [400, 100, 250, 50, 200, 0]), jnp.int32)
    ys = m.perturb_batch(jax.random.key(2), xs)
    p_em = np.asarray(ul.estimate(m, ys, "em"), np.float64)
    h = np.bincount(ul.testing.report_index(m, ys), minlength=m.num_outputs)
    Q = ul.channel(m).Q
    nll = lambda z: -h @ np.log(np.exp(z - z.max()) / np.exp(z - z.max()).sum() @ Q + 1e-300)  # noqa: E731
    z = optimize.minimize(nll, np.log(p_em + 1e-6), method="Nelder-Mead",
                          options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x
    p_ml = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert nll(np.log(p_em + 1e-300)) <= nll(np.log(p_ml)) + 1e-4
    np.testing.assert_allclose(p_em, p_ml, atol=2e-3)


@pytest.mark.parametrize("kwargs,match", [
    (dict(d=5, sensitive=(0,), eps=1.0), "len\\(sensitive\\)"),
    (dict(d=3, sensitive=(0, 1, 2), eps=1.0), "len\\(sensitive\\)"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, sizes=(2, 1), weights=(0.5, 0.5), alpha=0.5), "increasing"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, sizes=(1, 4), weights=(0.5, 0.5), alpha=0.5), "sizes"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, sizes=(3,), weights=(1.0,), alpha=0.5), "below s"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, sizes=(1, 2), weights=(0.5, 0.6), alpha=0.5), "weights"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, sizes=(1, 2), weights=(0.5, 0.5), alpha=1.5), "alpha"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, sizes=(1, 2)), "weights and alpha"),
    (dict(d=6, sensitive=(0, 1, 2), eps=1.0, weights=(1.0,)), "sizes"),
    (dict(d=6, sensitive=(0, 1, 2), eps=-1.0), "eps"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ul.UBD(**kwargs)


def test_default_weights_need_a_concrete_eps():
    with pytest.raises(ValueError, match="sizes=None needs a concrete"):
        jax.vmap(lambda e: ul.UBD(6, (0, 1, 2), e))(jnp.asarray([1.0, 2.0]))


def test_reports_and_bits():
    m = ul.UBD(6, (0, 2, 3), 1.0, sizes=(1, 2), weights=(0.7, 0.3), alpha=0.4)
    ys = ul.perturb(jax.random.key(0), m, jnp.arange(6, dtype=jnp.int32))
    assert ys.subset.shape == (6, 3) and ys.subset.dtype == jnp.bool_ and ys.item.dtype == jnp.int32
    assert ul.mechanisms.core.num_stats(m) == 2 * 3 + 3
    np.testing.assert_allclose(ul.mechanisms.core.comm_bits(m), np.log2(3 + 3 + 3))
    with pytest.raises(TypeError, match="UBDReport"):
        ul.mechanisms.core.check_reports(m, jnp.zeros((6, 3), bool))
