"""Wang et al. NDSS 2020 post-processing (Norm, Norm-Cut, Base-Pos/Non-Neg, MLE-Apx, Power, Power-NS) against
ports of their code (vvv214/LDP_Protocols ``post-process/``, counts domain; the library works in frequencies), and
their GRR MLE-Apx rule against the exact GRR MLE."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import base_pos, grr_mle, mle_apx, non_neg, norm, norm_cut, norm_sub, power, power_ns


# ---- ports of the reference code (counts; n users) -----------------------------------------------------------
def ref_norm(est, n):
    return est + (n - est.sum()) / est.size


def ref_norm_cut(est, n):
    est = est.copy()
    order = np.argsort(est)
    total = 0
    for i in range(len(order)):
        total += est[order[-1 - i]]
        if total > n:
            break
    for j in range(i + 1, len(order)):
        est[order[-1 - j]] = 0
    return est * n / total


def ref_mle_apx(est, n, p, q):
    est = est.copy() / n
    obs = q + (p - q) * est  # fo.reverse_normalize / n: the observed support rates

    def solve(pos):
        k, s = pos.sum(), obs[pos].sum()
        x = (s - p - (k - 1) * q) / (p * (1 - p) + (k - 1) * q * (1 - q))
        out = (obs - q - q * (1 - q) * x) / (p - q + (p * (1 - p) - q * (1 - q)) * x)
        out[~pos] = 0
        return out

    est = solve(est > 0)
    while est.min() < 0:
        est = solve(est > 0)
    return est * n


def ref_mle_apx_grr(est, n, p, q):
    est = est.copy() / n
    obs = q + (p - q) * est
    while est.min() < 0:
        pos = est > 0
        est = (obs / obs[pos].sum() * (pos.sum() * q + (p - q)) - q) / (p - q)
        est[~pos] = 0
    return est * n


def ref_power(est, n, var):
    """``power.py`` without its rounding of the estimates to a grid of 10 (the library computes every item)."""
    N = np.arange(1, n + 1, dtype=float)
    mean = np.mean(est)
    alpha = ul.estimation._postprocess_ndss.power_law_alpha(mean, n)
    out = np.empty_like(est)
    for i, c in enumerate(est):
        sub = N[max(0, int(round(c)) - 25000): min(n, int(round(c)) + 25000 + 1)]
        w = np.exp(-((c - sub) ** 2) / 2 / var - alpha * np.log(sub) + alpha * np.log(sub).min())
        out[i] = np.dot(w, sub) / w.sum()
    return out


EST = [np.array([0.5, 0.4, 0.3, -0.1, -0.2]), np.array([0.3, 0.2, -0.1]), np.array([0.25, 0.25, 0.25, 0.25]),
       np.random.default_rng(0).normal(0.05, 0.08, 20)]


@pytest.mark.parametrize("i", range(len(EST)))
def test_norm_norm_cut_base_pos_match_the_reference(i):
    est, n = EST[i], 1000
    with jax.enable_x64(True):
        x = jnp.asarray(est)
        np.testing.assert_allclose(np.asarray(norm(x)) * n, ref_norm(est * n, n), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(np.asarray(norm_cut(x)) * n, ref_norm_cut(est * n, n), rtol=1e-12, atol=1e-9)
        np.testing.assert_array_equal(np.asarray(base_pos(x)), np.maximum(est, 0))
        assert non_neg is base_pos


@pytest.mark.parametrize("i", [0, 1, 3])
def test_mle_apx_matches_the_reference(i):
    est, n = EST[i], 1000
    m = ul.OUE(est.size, 1.0)
    with jax.enable_x64(True):
        p, q = (float(v) for v in ul.OUE(est.size, 1.0).probs())
        got = np.asarray(mle_apx(jnp.asarray(est), p, q))
    np.testing.assert_allclose(got * n, ref_mle_apx(est * n, n, p, q), rtol=1e-9, atol=1e-7)
    assert np.all(got >= 0)
    assert m.pure() is not None


def test_reference_grr_mle_apx_is_the_exact_grr_mle():
    """The reference code's GRR rule is the water-filling MLE (``grr_mle``), on the estimates' own counts."""
    with jax.enable_x64(True):
        m = ul.GRR(6, 1.0)
        counts = np.array([500, 40, 30, 30, 0, 0], float)
        emp = np.asarray(ul.estimate_from_stats(m, jnp.asarray(counts, jnp.int32), 600, "emp"))
        keep, other = (float(v) for v in m.probs())
        np.testing.assert_allclose(ref_mle_apx_grr(emp * 600, 600, keep, other) / 600,
                                   np.asarray(grr_mle(m, jnp.asarray(counts))), atol=1e-12)


def test_power_and_power_ns_match_the_reference():
    est, n, var = np.array([0.5, 0.3, 0.1, 0.05, 0.03, 0.02, -0.01]), 5000, 2e-4
    with jax.enable_x64(True):
        got = np.asarray(power(est, n, var))
        ns = np.asarray(power_ns(est, n, var))
        np.testing.assert_allclose(ns, np.asarray(norm_sub(jnp.asarray(got))), rtol=1e-12)
    np.testing.assert_allclose(got * n, ref_power(est * n, n, var * n**2), rtol=1e-9)
    assert abs(ns.sum() - 1) < 1e-9 and np.all(ns >= 0)


@pytest.mark.slow
def test_registered_methods_run_through_estimate():
    m = ul.OUE(6, 1.0)
    xs = jnp.asarray(np.repeat(np.arange(6), [300, 200, 100, 50, 0, 0]), jnp.int32)
    ys = ul.perturb(jax.random.key(0), m, xs)
    emp = np.asarray(ul.estimate(m, ys, "emp"))
    for name, fn in [("norm", norm), ("norm-cut", norm_cut), ("base-pos", base_pos)]:
        np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, name)), np.asarray(fn(jnp.asarray(emp))),
                                   rtol=1e-5, atol=1e-6)
    p, q = m.probs()
    np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, "mle-apx")), np.asarray(mle_apx(jnp.asarray(emp), p, q)),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="pure"):
        ul.estimate(ul.HR(5, 1.0), ul.perturb(jax.random.key(1), ul.HR(5, 1.0), xs[:10] % 5), "mle-apx")
