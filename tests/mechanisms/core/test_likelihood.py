"""Exact-likelihood EM ("em-pure") for pure bases and GLUTF mechanisms vs a NumPy EM on the exact channel."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing


def _channel_mle(mech, ys, iters=8_000):
    """Reference: EM on the histogram of exact channel columns (float64 NumPy, E-step with the transpose)."""
    Q = ul.channel(mech).Q
    counts = np.bincount(testing.report_index(mech, ys), minlength=Q.shape[1]).astype(float)
    p = np.full(mech.d, 1.0 / mech.d)
    for _ in range(iters):
        D = p @ Q
        p = p * (Q @ np.where(D > 0, counts / np.where(D > 0, D, 1.0), 0.0)) / counts.sum()
    return p


@pytest.mark.parametrize("mech", [
    ul.USS(6, [0, 1, 2, 3], 1.0, k=2),
    ul.ULH(6, [1, 2, 3], 1.0, g=3, family="full"),
    ul.UWheel(6, [0, 1, 2], 1.0, l=0.3, num_hashes=8),
    ul.glutf(ul.UE(3, 1.0), 6, [0, 1, 2], rule="non_pure"),
], ids=lambda m: type(m).__name__)
@pytest.mark.slow
def test_em_pure_is_the_channel_mle(mech):
    xs = jnp.asarray(np.repeat(np.arange(6), [100, 300, 50, 200, 150, 200]), jnp.int32)
    ys = ul.perturb(jax.random.key(0), mech, xs)
    est = np.asarray(ul.estimate(mech, ys, "em-pure"))
    assert est.shape == (6,) and np.all(est >= 0) and abs(est.sum() - 1) < 1e-5
    np.testing.assert_allclose(est, _channel_mle(mech, ys), atol=5e-5)
    if not mech.estimator().exact:
        return  # an 8-function Wheel family is pure only approximately: "emp" is biased there, the MLE is not
    # "emp" works for every rule (non-pure GLUTF: 003 eq 30 through mech.debias)
    emp = np.asarray(ul.estimate(mech, ys, "emp"))
    if getattr(mech, "rule", "pure") == "non_pure":  # eq 30's sampling law: transform/test_nonpure_uldp.py
        np.testing.assert_allclose(emp, mech.estimate_eq30(ul.aggregate(mech, ys), xs.shape[0]), rtol=1e-6)
    else:
        assert ul.testing.estimate_within_se(mech, emp, np.bincount(np.asarray(xs), minlength=6) / 1000, 1000)
