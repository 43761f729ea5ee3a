"""The column layout built in JAX (``_support_device``) is the host's (``_support.column_segments`` /
``assemble``) entry for entry, and EM on it gives ul.estimate's answer on the same reports."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from tests.outside_mechanisms import OthersOutside
from uldp_jax.estimation import _support, _support_device


def _random_support(rng, rows, width, d, used):
    """Rows of distinct sorted items below ``used`` (items ``used..d-1`` stay empty), padded with ``d``; every
    7th row is all padding."""
    sup = np.full((rows, width), d, np.uint16)
    for i in range(rows):
        k = 0 if i % 7 == 3 else int(rng.integers(0, width + 1))
        sup[i, :k] = np.sort(rng.choice(used, size=k, replace=False))
    return sup


@pytest.mark.parametrize("rows, width, d, seg", [(37, 5, 11, 4), (300, 9, 50, 16), (1000, 20, 30, 16),
                                                 (64, 3, 7, 256)])
def test_block_columns_equals_host_layout(rows, width, d, seg):
    rng = np.random.default_rng(rows)
    sup = _random_support(rng, rows, width, d, d - 3)
    want_rows, want_item = _support.column_segments(sup, d, seg)
    num_seg = _support_device.num_segments(int((sup < d).sum()), d, rows, width, seg)
    got_rows, got_item = jax.jit(lambda s: _support_device.block_columns(s, d, num_seg, seg))(jnp.asarray(sup))
    k = want_rows.shape[0]
    assert num_seg >= k
    np.testing.assert_array_equal(np.asarray(got_rows[:k]), want_rows)
    np.testing.assert_array_equal(np.asarray(got_item[:k]), want_item)
    assert np.all(np.asarray(got_rows[k:]) == rows) and np.all(np.asarray(got_item[k:]) == d)


@pytest.mark.slow
def test_compact_columns_keeps_weighted_rows_in_order_and_em_matches():
    """Rows of weight 0 (invertible reports, masked users) are dropped; the kept rows keep their order, the
    layout is the host's, and EM on it equals EM on the host's column layout of the same reports."""
    mech = ul.URAP(40, tuple(range(12)), 3.0)
    xs = jnp.asarray(np.arange(20_000) % 40, jnp.int32)  # more rows than the layout keeps: the reorder path
    ys = mech.compact().perturb(jax.random.key(1), xs, 1)  # CompactBits, as simulate draws them
    row = _support.compact_rows(mech, ys, 64)
    n_kept = int(np.sum(np.asarray(row.weight) > 0))
    ones = int(np.sum(np.asarray(row.support) < mech.d))
    dev = jax.jit(lambda s, w: _support_device.compact_columns(s, w, row.inverted, row.stats, mech.d, n_kept + 5,
                                                               ones, 12))(row.support, row.weight)
    keep = np.asarray(row.weight) > 0
    sup_kept = np.asarray(row.support)[keep]
    got = np.asarray(dev.support)
    assert got.shape[0] < row.support.shape[0]
    np.testing.assert_array_equal(got[:n_kept], sup_kept)
    assert np.all(got[n_kept:] == mech.d) and float(np.sum(dev.weight)) == n_kept
    host = _support.assemble(mech, [sup_kept[:, : max(1, int((sup_kept < mech.d).sum(1).max()))]],
                             np.asarray(row.inverted), np.asarray(row.stats), dev.chunk, "columns", np.uint16)
    assert dev.block_rows == host.block_rows and dev.col_rows.shape[0] == host.col_rows.shape[0]
    for b in range(host.col_rows.shape[0]):
        k = host.col_rows.shape[1]
        np.testing.assert_array_equal(np.asarray(dev.col_item[b, :k]), np.asarray(host.col_item[b]))
        np.testing.assert_array_equal(np.asarray(dev.col_rows[b, :k]), np.asarray(host.col_rows[b]))
    p_dev, _ = ul.estimation.em_reports(mech, dev)
    p_host, _ = ul.estimation.em_reports(mech, host)
    p_est = ul.estimate(mech, ys, "em")
    np.testing.assert_allclose(np.asarray(p_dev), np.asarray(p_host), atol=1e-6)
    np.testing.assert_allclose(np.asarray(p_dev), np.asarray(p_est), atol=1e-5)


@pytest.mark.slow
def test_compact_columns_keeps_rows_in_place_where_all_fit():
    """Where the static bound keeps every row (RAPPOR: every report is product-part), rows of weight 0 (here every
    5th: masked users) stay in place, all padding, and EM on the layout equals ul.estimate's on the kept reports."""
    mech = ul.RAPPOR(24, 2.0)
    xs = jnp.asarray(np.arange(1000) % 24, jnp.int32)
    row = _support.compact_rows(mech, mech.compact().perturb(jax.random.key(3), xs, 2), 64)
    w = np.asarray(row.weight) * (np.arange(row.weight.shape[0]) % 5 != 2)
    sup = np.where(w[:, None] > 0, np.asarray(row.support), mech.d).astype(np.asarray(row.support).dtype)
    kept = ul.CompactBits(jnp.asarray(sup[w > 0]), mech.d)
    stats = mech.aggregate(kept)
    n = sup.shape[0]
    dev = jax.jit(lambda s, w: _support_device.compact_columns(s, w, row.inverted, stats, mech.d, n,
                                                               int(np.sum(sup < mech.d)), 24))(
        jnp.asarray(sup), jnp.asarray(w, row.weight.dtype))
    np.testing.assert_array_equal(np.asarray(dev.support)[:n], sup)
    np.testing.assert_array_equal(np.asarray(dev.weight)[:n], w)
    p_dev, info = ul.estimation.em_reports(mech, dev)
    assert bool(info.converged)
    np.testing.assert_allclose(np.asarray(p_dev), np.asarray(ul.estimate(mech, kept, "em")), atol=1e-5)


def test_others_in_product():
    assert _support.others_in_product(ul.URAP(40, (3, 9, 20), 2.0))
    assert _support.others_in_product(ul.RAPPOR(40, 2.0))
    assert not _support.others_in_product(OthersOutside())

    class NoParams(OthersOutside):  # a compact record without the independent-bits parameters
        def compact(self):
            from uldp_jax.mechanisms.core import _records
            return _records.Compact(perturb=lambda *a, **k: None, preferred=False)

    assert not _support.others_in_product(NoParams())


@pytest.mark.parametrize("sensitive", [(0, 1, 2), tuple(range(0, 30, 3)), tuple(range(30))], ids=["3", "10", "30"])
def test_own_bit_rows_equals_compact_rows(sensitive):
    """Per user (one comparison per entry, one scatter per user) the same weights and inverted counts as
    ``compact_rows``' per-entry test (times the mask, as simulate's report route weights them), masked users
    included (their rows all padding, as simulate draws them)."""
    mech = ul.URAP(30, sensitive, 1.5)
    xs = jnp.asarray(np.random.default_rng(2).integers(0, 30, 3000), jnp.int32)
    mask = jnp.asarray(np.arange(3000) % 9 != 4)
    ones = mech.compact().perturb(jax.random.key(5), xs, 2).ones
    ones = jnp.where(mask[:, None], ones, jnp.asarray(mech.d, ones.dtype))
    row = _support.compact_rows(mech, ul.CompactBits(ones, mech.d), 64)
    weight, inverted = jax.jit(lambda o, x, w: _support.own_bit_rows(mech, o, x, w))(ones, xs, mask)
    np.testing.assert_array_equal(np.asarray(weight), np.asarray(row.weight)[:3000] * np.asarray(mask))
    np.testing.assert_array_equal(np.asarray(inverted), np.asarray(row.inverted))
    num_inverted = int(np.sum(np.asarray(inverted)))
    assert num_inverted == int(np.sum(np.asarray(mask))) - int(np.sum(np.asarray(weight)))
    assert (num_inverted > 0) == (len(sensitive) < 30)  # every item sensitive: no invertible report


def test_compact_columns_cleans_rows_of_weight_zero():
    """``clean=True``: rows of weight 0 that still hold entries (invertible reports left by ``own_bit_rows``) give
    the layout of the same rows padded, whether the bound moves the kept rows or leaves them in place."""
    mech = ul.URAP(40, tuple(range(12)), 3.0)
    xs = jnp.asarray(np.arange(4000) % 40, jnp.int32)
    ys = mech.compact().perturb(jax.random.key(1), xs, 1)
    mask = jnp.ones(4000, bool)
    weight, inverted = _support.own_bit_rows(mech, ys.ones, xs, mask)
    padded = jnp.where(weight[:, None] > 0, ys.ones, jnp.asarray(mech.d, ys.ones.dtype))
    stats = mech.aggregate(ys)
    n_kept = int(np.sum(np.asarray(weight) > 0))
    ones = int(np.sum(np.asarray(padded) < mech.d))
    for kept in (n_kept + 5, 4000):  # the move, and rows in place
        args = (inverted, stats, mech.d, kept, ones, 12)
        got = _support_device.compact_columns(ys.ones, weight, *args, clean=True)
        want = _support_device.compact_columns(padded, weight, *args)
        for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
