"""``uldp_jax/mechanisms/subset/_rws_subsets.py``: the "hash" seed family's public subsets are uniform k-subsets
(item counts within SE; for small domains the whole subset's law by chi-square)."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401
from uldp_jax.mechanisms.subset import _rws_subsets


@pytest.mark.parametrize("d,k", [(6, 2), (7, 4), (40, 3), (1100, 7)])  # one-hot and gather Floyd, plain and flipped
def test_hash_family_subsets_are_uniform(d, k):
    """Every subset has size k; the item counts of 2**15 seeds' subsets are uniform (chi-square), and for small
    domains so is the law of the whole subset (chi-square over the C(d, k) subsets)."""
    seeds = jnp.arange(2**15, dtype=jnp.uint32) * jnp.uint32(2654435761)  # spread over the 2**32 seeds
    bits = np.asarray(_rws_subsets.hashed_subsets(seeds, d, k))
    assert (bits.sum(axis=1) == k).all()
    # each item is in a uniform k-subset w.p. k / d; counts of the d items (a multinomial-like check per item)
    counts = bits.sum(axis=0)
    se = np.sqrt(seeds.size * (k / d) * (1 - k / d))
    assert ul.testing.within_se(counts, seeds.size * k / d, se)
    if math.comb(d, k) <= 64:
        codes = (bits.astype(np.int64) << np.arange(d)).sum(axis=1)
        table = _rws_subsets.combination_table(d, k)
        rank = {int(c): i for i, c in enumerate((table.astype(np.int64) << np.arange(d)).sum(axis=1))}
        obs = np.bincount([rank[int(c)] for c in codes], minlength=table.shape[0])
        assert ul.testing.fits(ul.testing.chi_square(obs, np.full(table.shape[0], 1.0 / table.shape[0])))
