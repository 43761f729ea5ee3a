"""Subset-selection sampler (Floyd's algorithm, exact uniform integers) against the exact channel.

Thresholds: chi-square goodness of fit of the reports of one input against its channel row, p > 1e-3 for the
true channel (fixed keys, so every run is the same) and p < 1e-6 for a wrong-eps channel.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as sps

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.mechanisms.subset import _ksubset

N = 12000


@pytest.mark.parametrize("d,k", [(6, 1), (6, 2), (6, 4), (6, 5)])
def test_ss_reports_match_channel(d, k):
    mech = ul.SS(d, 1.0, k=k)
    for x in (0, d // 2, d - 1):
        res = testing.sampler_vs_channel(jax.random.key(100 * d + 10 * k + x), mech, x, N)
        assert testing.fits(res), (d, k, x, res)


def test_ss_unbatched_reports_match_channel():
    mech = ul.SS(6, 0.7, k=2)
    res = testing.sampler_vs_channel(jax.random.key(8), mech, 1, N, batched=False)
    assert testing.fits(res), res


def test_ss_wrong_channel_rejected():
    mech = ul.SS(6, 1.0, k=2)
    wrong = ul.channel(ul.SS(6, 1.3, k=2)).Q
    res = testing.sampler_vs_channel(jax.random.key(5), mech, 2, N, Q=wrong)
    assert res.pvalue < 1e-6, res


def test_ss_sample_stats_use_the_reports_and_paths_agree(monkeypatch):
    mech = ul.SS(6, 1.0, k=4)
    xs = jnp.arange(6, dtype=jnp.int32).repeat(40)
    w = jnp.arange(xs.shape[0]) % 3 != 0
    ys = mech.perturb_batch(jax.random.key(9), xs)
    assert np.all(np.asarray(ys).sum(-1) == 4)
    np.testing.assert_array_equal(ul.mechanisms.core.sample_stats(mech, jax.random.key(9), xs, w), mech.aggregate(ys, w))
    monkeypatch.setattr(_ksubset, "ONEHOT_MAX_WORDS", 0)  # the gather/scatter bitmap draws the same subsets
    np.testing.assert_array_equal(mech.perturb_batch(jax.random.key(9), xs), ys)


def test_uss_reports_match_channel():
    mech = ul.USS(6, [0, 2, 3, 5], 1.0, k=3)
    for x in (2, 4):  # sensitive, non-sensitive
        res = testing.sampler_vs_channel(jax.random.key(40 + x), mech, x, N)
        assert testing.fits(res), (x, res)


def test_exact_uniforms_with_frequent_rejection():
    # m = 3 * 2**30 rejects a quarter of the words: spares and the redraw loop both run; values stay uniform.
    m = jnp.array([3 * 2**30, 3, 2**31 + 1], jnp.uint32)
    vals = np.asarray(_ksubset.exact_uniforms(jax.random.key(11), m, 20000)).astype(np.uint64)
    assert np.all(vals < np.asarray(m, np.uint64)[:, None])
    for row, bins in ((vals[0] >> np.uint64(30), 3), (vals[1], 3), (vals[2] >> np.uint64(29), 5)):
        counts = np.bincount(row.astype(np.int64), minlength=bins)
        expected = np.full(bins, row.size / bins) if bins == 3 else np.array([4, 4, 4, 4, 2**-29]) * row.size / 16
        keep = expected > 1
        assert testing.fits(sps.chisquare(counts[keep], expected[keep] * counts[keep].sum() / expected[keep].sum()))
