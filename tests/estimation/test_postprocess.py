"""Post-processing onto the simplex: clip, Norm-Sub, projection, Base-Cut (hand-checked examples)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.estimation import base_cut, clip, norm_sub, project


def test_clip_hand():
    np.testing.assert_allclose(np.asarray(clip(jnp.array([0.6, -0.2, 0.2, 0.0]))), [0.75, 0, 0.25, 0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(clip(jnp.array([-1.0, -2.0]))), [0.5, 0.5])


def test_norm_sub_hand():
    # Round 1: K = {0, 1, 2}, delta = (1 - 1.3)/3 = -0.1 -> [0.7, 0.4, -0.05]: item 2 leaves K.
    # Round 2: K = {0, 1}, delta = (1 - 1.3)/2 = -0.15 -> [0.65, 0.35].
    out = np.asarray(norm_sub(jnp.array([0.8, 0.5, 0.05, -0.3])))
    np.testing.assert_allclose(out, [0.65, 0.35, 0.0, 0.0], atol=1e-6)
    # Positive part below 1: the kept entries move up by the same delta, the negatives stay 0.
    out = np.asarray(norm_sub(jnp.array([0.3, 0.2, -0.1])))
    np.testing.assert_allclose(out, [0.55, 0.45, 0.0], atol=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_norm_sub_defining_property(seed):
    x = np.random.default_rng(seed).normal(0.02, 0.1, 30)
    out = np.asarray(norm_sub(jnp.asarray(x)))
    kept = out > 0
    assert np.all(out >= 0) and abs(out.sum() - 1) < 1e-5
    shift = out[kept] - x[kept]
    assert np.ptp(shift) < 1e-5  # the same delta for every kept entry
    assert np.all(x[~kept] <= -shift[0] + 1e-6)  # every dropped entry would be non-positive after the shift
    if np.maximum(x, 0).sum() >= 1:  # then Norm-Sub is the Euclidean projection
        np.testing.assert_allclose(out, np.asarray(project(jnp.asarray(x))), atol=1e-5)


def test_project_hand_and_optimality():
    np.testing.assert_allclose(np.asarray(project(jnp.array([0.5, 0.5, 0.5]))), [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(project(jnp.array([2.0, 0.0, -1.0]))), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(np.asarray(project(jnp.array([0.6, 0.5, -0.3]))), [0.55, 0.45, 0.0], atol=1e-6)
    # KKT: x - out = tau on the support, x - out >= tau (i.e. x <= tau) off it.
    x = np.random.default_rng(0).normal(0, 0.3, 25)
    out = np.asarray(project(jnp.asarray(x)))
    tau = (x - out)[out > 0]
    assert np.ptp(tau) < 1e-5 and np.all(x[out == 0] <= tau[0] + 1e-6) and abs(out.sum() - 1) < 1e-5


def test_base_cut_hand():
    out = np.asarray(base_cut(jnp.array([0.5, 0.05, -0.1, 0.3]), jnp.array([0.1, 0.1, 0.1, 0.4])))
    np.testing.assert_allclose(out, [0.5, 0, 0, 0])


def test_vmap_and_methods():
    x = jax.random.normal(jax.random.key(1), (4, 12)) * 0.2
    for f in (clip, norm_sub, project):
        batched = np.asarray(jax.vmap(f)(x))
        np.testing.assert_allclose(batched[2], np.asarray(f(x[2])), atol=1e-6)
        np.testing.assert_allclose(batched.sum(1), 1.0, atol=1e-5)
        assert np.all(batched >= 0)
    mech = ul.URR(12, (0, 3), 1.0)
    stats = jnp.array([[30, 5, 7, 40, 2, 1, 0, 3, 9, 1, 1, 1]] * 2)
    # the empirical estimate by hand (001 Def 3): p_hat = (c / n - c2 [x in X_S]) / c3
    t = np.exp(-1.0)
    c2, c3 = t / (1 + t), (1 - t) / (1 + t)
    sens = np.isin(np.arange(12), (0, 3))
    emp = (np.asarray(stats[0], np.float64) / 100 - c2 * sens) / c3
    for m, f in (("clip", clip), ("norm-sub", norm_sub), ("project", project)):
        est = np.asarray(ul.estimate_from_stats(mech, stats, 100, m))
        assert est.shape == (2, 12)
        np.testing.assert_allclose(est[0], np.asarray(f(jnp.asarray(emp, jnp.float32))), atol=1e-5, err_msg=m)
        np.testing.assert_allclose(est[1], est[0])
    # Base-Cut keeps an entry as it is or zeroes it; the clearly large ones survive
    est = np.asarray(ul.estimate_from_stats(mech, stats, 100, "base-cut"))[0]
    kept = est != 0
    np.testing.assert_allclose(est[kept], emp[kept], rtol=1e-5)
    assert kept[3]  # emp = 0.28, far above any cut
