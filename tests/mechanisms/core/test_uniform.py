"""One-word samplers: threshold Bernoullis, exact Lemire integers with redraws, and the iid alias sampler (the alias
table itself: tests/engine/test_layout.py)."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from uldp_jax import testing
from uldp_jax.mechanisms.core import _uniform

from uldp_jax.engine import _engine as sim


def _chi2_pvalue(counts, probs):
    from math import erf, sqrt

    n = counts.sum()
    stat = float(np.sum((counts - n * probs) ** 2 / (n * probs)))
    k = probs.size - 1  # Wilson-Hilferty normal approximation of the chi-square tail
    z = ((stat / k) ** (1 / 3) - (1 - 2 / (9 * k))) / sqrt(2 / (9 * k))
    return 0.5 * (1 - erf(z / sqrt(2)))


def test_threshold_is_floor_of_p_times_2_32_and_clipped():
    thr = np.asarray(_uniform.threshold_u32(jnp.asarray([0.0, 0.25, 0.5, 1.0, 1.5, -0.1], jnp.float32)))
    assert thr.tolist() == [0, 2**30, 2**31, 2**32 - 256, 2**32 - 256, 0]
    words = jnp.asarray([0, 2**30 - 1, 2**30, 2**32 - 1], jnp.uint32)
    assert np.asarray(_uniform.bernoulli_words(words, 0.25)).tolist() == [True, True, False, False]
    assert not np.any(np.asarray(_uniform.bernoulli_words(words, 0.0)))


def test_bernoulli_words_frequency():
    """200000 draws at p = 0.3: within 5 standard errors."""
    w = jax.random.bits(jax.random.key(0), (200_000,), jnp.uint32)
    freq = float(jnp.mean(_uniform.bernoulli_words(w, jnp.float32(0.3))))
    assert testing.within_se(freq, 0.3, np.sqrt(0.3 * 0.7 / 200_000))


@pytest.mark.parametrize("m", [1, 2, 7, 624])
def test_uniform_ints_small_ranges_are_uniform(m):
    """Chi-square on 60000 draws, accept at p > 1e-3."""
    v = np.asarray(jax.jit(lambda k: _uniform.uniform_ints(k, m, (60_000,)))(jax.random.key(m)))
    assert v.dtype == np.int32 and v.min() >= 0 and v.max() < m
    if m > 1:
        assert testing.fits(_chi2_pvalue(np.bincount(v, minlength=m), np.full(m, 1 / m)))


def test_uniform_ints_redraw_loop_is_exercised_and_exact():
    """m = 3 * 2^29: a word is rejected w.p. 1/4, so the redraw loop runs; values stay uniform (8 bins)."""
    m = 3 * 2**29
    words = jax.random.bits(jax.random.key(3), (40_000,), jnp.uint32)
    from uldp_jax.mechanisms.core._uniform import uniform_below

    _, ok = uniform_below(words, jnp.uint32(m))
    assert testing.within_se(1 - float(jnp.mean(ok)), 0.25, np.sqrt(0.25 * 0.75 / 40_000))  # exactly 1/4
    v = np.asarray(_uniform.uniform_ints(jax.random.key(4), m, (40_000,))).astype(np.int64)
    assert v.min() >= 0 and v.max() < m
    assert testing.fits(_chi2_pvalue(np.bincount(v * 8 // m, minlength=8), np.full(8, 1 / 8)))


def test_uniform_ints_per_entry_ranges():
    """A range per entry (uRR: s - 1 for sensitive inputs, s otherwise)."""
    m = jnp.asarray([3, 5] * 20_000, jnp.uint32)
    v = np.asarray(_uniform.uniform_ints(jax.random.key(5), m, m.shape))
    assert np.all(v < np.asarray(m))
    assert testing.fits(_chi2_pvalue(np.bincount(v[0::2], minlength=3), np.full(3, 1 / 3)))
    assert testing.fits(_chi2_pvalue(np.bincount(v[1::2], minlength=5), np.full(5, 1 / 5)))


def test_alias_sampler_matches_p():
    """Chi-square on 200000 draws (d = 10, one zero item), accept at p > 1e-3; no draw outside the support."""
    p = np.arange(10, dtype=np.float64)
    p /= p.sum()
    x = np.asarray(sim.sample_alias(jax.random.key(6), sim.alias_table(p), (200_000,)))
    counts = np.bincount(x, minlength=16)
    assert counts[0] == 0 and counts[10:].sum() == 0
    assert testing.fits(_chi2_pvalue(counts[1:10], p[1:]))
