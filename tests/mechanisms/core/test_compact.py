"""Compact bit-vector reports (``ul.CompactBits``): exact law of the sampler and every consumer.

Statistical checks go through ``ul.testing`` (``fits`` on Pearson chi-square p-values, ``within_se``), each at the
suite's per-check level ``ul.testing.ALPHA``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax import testing
from uldp_jax.mechanisms.core import _base, _compact, _estimation

MECHS = {
    "RAPPOR": lambda: ul.RAPPOR(6, 1.0),
    "OUE": lambda: ul.OUE(5, 2.0),
    "URAP": lambda: ul.URAP(8, (1, 3, 4), 1.0),
}


@pytest.mark.parametrize("name", sorted(MECHS))
def test_compact_sampler_matches_channel(name):
    """Chi-square of the compact sampler against the exact channel, per input."""
    m = MECHS[name]()
    n = 60_000
    xs = jnp.asarray(np.random.default_rng(0).integers(0, m.d, n), jnp.int32)
    ys = m.compact().perturb(jax.random.key(11), xs)
    bits = np.asarray(ul.to_dense(ys))
    codes = bits.astype(np.int64) @ (1 << np.arange(m.d))
    Q, _ = m.channel_matrix()
    for x in range(m.d):
        sel = np.asarray(xs) == x
        obs = np.bincount(codes[sel], minlength=2**m.d)
        exp = Q[x] * sel.sum()
        assert obs[exp == 0].sum() == 0
        k = exp > 0
        assert ul.testing.fits(ul.testing.chi_square(obs[k], exp[k] / exp[k].sum())), x


def test_number_of_ones_is_binomial():
    m = ul.RAPPOR(3000, 2.0)
    keep, q = (float(v) for v in m.probs())
    xs = jnp.zeros(20_000, jnp.int32)
    ys = m.compact().perturb(jax.random.key(3), xs)
    ones = np.asarray(ys.ones)
    others = np.sum((ones < m.d) & (ones != 0), axis=1)
    own = np.any(ones == 0, axis=1)
    assert ul.testing.within_se(own.mean(), keep, np.sqrt(keep * (1 - keep) / len(own)))
    m1 = m.d - 1
    lo, hi = int(stats.binom.ppf(1e-3, m1, q)), int(stats.binom.ppf(1 - 1e-3, m1, q))
    ks = np.arange(lo, hi + 1)
    obs = np.concatenate([[np.sum(others < lo)], np.bincount(others, minlength=hi + 2)[lo:hi + 1],
                          [np.sum(others > hi)]])
    probs = np.concatenate([[stats.binom.cdf(lo - 1, m1, q)], stats.binom.pmf(ks, m1, q),
                            [stats.binom.sf(hi, m1, q)]])
    assert ul.testing.fits(ul.testing.chi_square(obs, probs / probs.sum()))


@pytest.mark.parametrize("mech", [ul.RAPPOR(2000, 4.0), ul.URAP(3000, tuple(range(0, 3000, 3)), 2.0)])
def test_sample_stats_equal_aggregate_of_compact(mech):
    xs = jnp.asarray(np.random.default_rng(1).integers(0, mech.d, 2000), jnp.int32)
    key = jax.random.key(5)
    ys = mech.compact().perturb(key, xs)
    w = jnp.arange(2000) < 1500
    st, _, widest = jax.jit(lambda m, k, x: _compact.sample_counts(k, x, *m.compact().params, m.d, w))(mech, key, xs)
    assert np.array_equal(np.asarray(st), np.asarray(mech.aggregate(ys[:1500])))
    assert int(widest) == int(np.max(np.sum(np.asarray(ys.ones)[:1500] < mech.d, axis=1)))  # most ones, weighted
    nc = _compact.num_chunks_for(mech.compact().params[0].shape[0], float(mech.compact().params[2]))
    traced = jax.jit(lambda k, x: mech.compact().perturb(k, x, nc))(key, xs)
    assert np.array_equal(np.asarray(mech.aggregate(traced)), np.asarray(mech.aggregate(ys)))


@pytest.mark.parametrize("mech", [ul.RAPPOR(2048, 40.0), ul.RAPPOR(2048, 50.0), ul.URAP(2048, tuple(range(0, 2048, 2)),
                                                                                       45.0)])
def test_extreme_eps_compact_reports_hold_the_own_bit_only(mech):
    """At eps 40-50 every other bit is 1 with probability < 1e-8 and the own bit 0 with < 1e-8: each report is
    exactly its own item. Gaps capped at 2**24 once summed past int32 (a chunk of 128 capped gaps wrapped to a
    negative position: about 6.6 spurious ones a report at eps 40, an endless loop at eps 50); offsets now
    saturate past the last bit."""
    xs = jnp.arange(3000, dtype=jnp.int32) % mech.d
    key = jax.random.key(2)
    ys = ul.perturb(key, mech, xs)
    assert isinstance(ys, ul.CompactBits)
    ones = np.asarray(ys.ones)
    assert ones.shape == (3000, 1) and np.array_equal(ones[:, 0], np.asarray(xs))
    counts, chunks, widest = jax.jit(lambda k, x: _compact.sample_counts(k, x, *mech.compact().params, mech.d))(key,
                                                                                                             xs)
    assert np.array_equal(np.asarray(counts), np.bincount(np.asarray(xs), minlength=mech.d)) and int(chunks) == 1
    assert int(widest) == 1
    traced = jax.jit(lambda k, x: mech.compact().perturb(k, x, 3))(key, xs)
    assert np.array_equal(np.asarray(traced.ones)[:, :1], ones) and np.all(np.asarray(traced.ones)[:, 1:] == mech.d)


@pytest.mark.slow
@pytest.mark.parametrize("alloc_sds", [1.0, -10.0])
@pytest.mark.parametrize("mech", [ul.RAPPOR(1500, 3.0), ul.URAP(3000, tuple(range(0, 3000, 3)), 1.0)])
def test_late_users_equal_drawing_every_user_wide(monkeypatch, mech, alloc_sds):
    """``ul.perturb`` draws chunks for mean + ``FIRST_SDS`` sd, then the users past them alone, with more: the same
    reports as drawing every user at the widest width (here most users are late, in many small batches). The host
    buffer is narrowed in place (``alloc_sds`` 1: wide enough) or widened by a copy (-10: as wide as the first pass)."""
    monkeypatch.setattr(_compact, "FIRST_SDS", -1.5)
    monkeypatch.setattr(_compact, "ALLOC_SDS", alloc_sds)
    monkeypatch.setattr(_compact, "LATE_BLOCK", 64)
    monkeypatch.setattr(_compact, "USER_BLOCK", 512)
    items, own, q = mech.compact().params
    xs = jnp.asarray(np.random.default_rng(3).integers(0, mech.d, 2000), jnp.int32)
    key = jax.random.key(9)
    ys = _compact.sample_ones(key, xs, items, own, q, mech.d)
    wide = _compact.sample_ones(key, xs, items, own, q, mech.d, _compact.num_chunks_for(len(items), float(q)))
    width = ys.ones.shape[1]
    assert width < wide.ones.shape[1]
    assert ys.ones.unsafe_buffer_pointer() % 64 == 0 or jax.default_backend() != "cpu"  # aligned: no copy
    assert np.array_equal(np.asarray(ys.ones), np.asarray(wide.ones)[:, :width])
    assert np.all(np.asarray(wide.ones)[:, width:] == mech.d)


@pytest.mark.slow
def test_to_dense_to_compact_roundtrip_and_consumers():
    m = ul.URAP(1500, tuple(range(200)), 3.0)
    xs = jnp.asarray(np.random.default_rng(2).integers(0, m.d, 4000), jnp.int32)
    ys = ul.perturb(jax.random.key(0), m, xs)
    assert isinstance(ys, ul.CompactBits) and m.compact().preferred
    dense = ul.to_dense(ys)
    assert dense.shape == (4000, 1500) and dense.dtype == jnp.bool_
    back = ul.to_compact(dense)
    assert np.array_equal(np.asarray(ul.to_dense(back)), np.asarray(dense))
    for method in ("emp", "emp+thr"):
        np.testing.assert_allclose(ul.estimate(m, ys, method), ul.estimate(m, dense, method), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(ul.aggregate(m, ys), ul.aggregate(m, dense))
    p_c, info_c = ul.estimation.em(m, ys, return_info=True, tol=1e-9)
    p_d, info_d = ul.estimation.em(m, dense, return_info=True, tol=1e-9)
    assert bool(info_c.converged) and bool(info_d.converged)
    # same likelihood, different pass order (column layout vs dense mat-vecs): same MLE up to the stopping rule
    assert 0.5 * float(np.abs(np.asarray(p_c) - np.asarray(p_d)).sum()) < 0.02
    np.testing.assert_allclose(ul.estimate(m, ys, "em", tol=1e-9), p_c, atol=1e-6)


def test_small_domains_stay_dense():
    m = ul.RAPPOR(10, 2.0)
    ys = ul.perturb(jax.random.key(0), m, jnp.arange(10))
    assert not m.compact().preferred and ys.dtype == jnp.bool_ and ys.shape == (10, 10)


@pytest.mark.slow
def test_simulate_em_reports_match_stats():
    """simulate's report path draws compact reports whose aggregate is the stats of its per-user path."""
    m = ul.RAPPOR(1200, 4.0)
    xs = jnp.asarray(np.random.default_rng(3).integers(0, m.d, 3000), jnp.int32)
    res = ul.simulate(jax.random.key(7), m, xs=xs, reps=2, methods=("em", "emp"), path="per_user")
    assert res.estimates["em"].shape == (2, 1200)
    tv_em = 0.5 * np.abs(np.asarray(res.estimates["em"]) - res.target).sum(-1)
    tv_emp = 0.5 * np.abs(np.asarray(res.estimates["emp"]) - res.target).sum(-1)
    # EM's TV is not above emp's expected TV, and emp's own TV is emp's (one check each, per-check level): the
    # normal approximation of emp's TV (testing.emp_tv; iid users: it bounds this fixed model's from above)
    mean, sd = testing.emp_tv(m, res.target, xs.size)
    assert testing.at_most(tv_em, mean, sd), (tv_em, mean, sd)
    assert testing.at_most(tv_emp, mean, sd), (tv_emp, mean, sd)
    # the reports of repetition 0, regenerated with the documented schedule, aggregate to stats[0]
    from uldp_jax.engine import _layout as sim
    key_r = jax.random.fold_in(jax.random.key(7), 0)
    data = jnp.asarray(np.pad(np.asarray(xs), (0, 3 * 1024 - 3000)))
    total = np.zeros(m.d, np.int64)
    for b in range(3):
        ky, xb, w = sim.block_inputs(key_r, jnp.int32(b), jnp.int32(3000), data, False, 1024)
        total += np.asarray(_compact.sample_counts(ky, xb, *m.compact().params, m.d, w)[0])
    assert np.array_equal(total, np.asarray(res.stats[0]))


def test_check_reports_rejects_wrong_compact():
    m = ul.RAPPOR(1200, 4.0)
    with pytest.raises(ValueError):
        ul.estimate(m, _compact.CompactBits(jnp.zeros((3, 2), jnp.uint16), 99), "emp")
    with pytest.raises(ValueError):
        ul.estimate(m, _compact.CompactBits(jnp.full((3, 2), 5000, jnp.int32), 1200), "emp")


# ---- uUE (GLUTF over UE) and PUM over uRAP: compact straight from the sampler ---------------------------------

def _pum_urap():
    return ul.PUM(5, (0, 2), 1, 1.0, base="urap")


def test_uue_compact_sampler_matches_channel():
    """Chi-square (``ul.testing``) of uUE's compact sampler against its exact channel, per input."""
    m = ul.UUE(5, (0, 2, 3), 1.0, p=0.4)
    Q = ul.channel(m).Q
    draws = 4000
    xs = jnp.repeat(jnp.arange(m.d, dtype=jnp.int32), draws)
    ys = m.compact().perturb(jax.random.key(21), xs)
    assert isinstance(ys.base, ul.CompactBits)
    idx = ul.testing.report_index(m, ys).reshape(m.d, draws)
    for x in range(m.d):
        assert ul.testing.fits(ul.testing.chi_square(np.bincount(idx[x], minlength=Q.shape[1]), Q[x])), x


def test_pum_urap_compact_sampler_matches_channel():
    """PUM over uRAP: compact reports of f_pre(x) against Q_cmn's row of the pre-processed item."""
    m = _pum_urap()
    Q = ul.channel(m).Q  # rows: Z = X plus the bot
    draws = 4000
    xs = jnp.repeat(jnp.arange(m.d, dtype=jnp.int32), draws)
    personal = jnp.broadcast_to(jnp.asarray([[4]], jnp.int32), (xs.shape[0], 1))  # item 4 personal (tag 0)
    ys = m.compact().perturb(jax.random.key(22), xs, personal)
    assert isinstance(ys, ul.CompactBits)
    idx = ul.testing.report_index(m, ys).reshape(m.d, draws)
    zs = np.asarray(m.preprocess(jnp.arange(m.d, dtype=jnp.int32), jnp.asarray([[4]] * m.d, jnp.int32)))
    assert zs[4] == m.d  # the personal item becomes the bot
    for x in range(m.d):
        assert ul.testing.fits(ul.testing.chi_square(np.bincount(idx[x], minlength=Q.shape[1]), Q[zs[x]])), x


def _aggregate_draws(fn, reps):
    return np.stack([np.asarray(fn(jax.random.key(1000 + r))) for r in range(reps)])


@pytest.mark.slow
@pytest.mark.parametrize("which", ["UUE", "PUM"])
def test_dense_and_compact_give_the_same_aggregate_distribution(which):
    """Per statistic, the mean aggregate of dense and of compact reports agree (two-sample, in standard errors),
    and each agrees with the exact expectation ``n (p Q) @ support``."""
    reps, n = 200, 300
    if which == "UUE":
        m = ul.UUE(6, (0, 2, 3), 1.0, p=0.4)
        xs = jnp.asarray(np.random.default_rng(2).integers(0, m.d, n), jnp.int32)
        dense = jax.jit(jax.vmap(lambda k: m.aggregate(m.perturb_batch(k, xs))))
        compact = lambda k: m.aggregate(m.compact().perturb(k, xs))  # noqa: E731  (concrete: exact widths)
    else:
        m = _pum_urap()
        xs = jnp.asarray(np.random.default_rng(2).integers(0, m.d, n), jnp.int32)
        personal = jnp.asarray(np.where(np.random.default_rng(3).random((n, 1)) < 0.5, 4, -1), jnp.int32)
        dense = jax.jit(jax.vmap(lambda k: m.aggregate(m.perturb_batch(k, xs, personal))))
        compact = lambda k: m.aggregate(m.compact().perturb(k, xs, personal))  # noqa: E731
    keys = jax.random.split(jax.random.key(31), reps)
    s_dense = np.asarray(dense(keys), np.float64)
    s_comp = np.stack([np.asarray(compact(k)) for k in jax.random.split(jax.random.key(32), reps)]).astype(np.float64)
    se = np.sqrt(s_dense.var(axis=0, ddof=1) / reps + s_comp.var(axis=0, ddof=1) / reps)
    se = np.maximum(se, 1e-9)
    assert ul.testing.within_se(s_comp.mean(axis=0), s_dense.mean(axis=0), se, dof=reps - 1)
    # and both match the exact per-statistic expectation from the channel
    if which == "UUE":
        expected = np.asarray(m.estimator().affine[0]) * np.bincount(np.asarray(xs), minlength=m.d) \
            + np.asarray(m.estimator().affine[1]) * n
    else:
        zs = np.asarray(m.preprocess(xs, personal))
        expected = np.bincount(zs, minlength=m.cmn.d) @ np.asarray(_estimation.stats_matrix(m.cmn), np.float64)
    assert ul.testing.within_se(s_comp.mean(axis=0), expected, np.maximum(s_comp.std(axis=0, ddof=1), 1e-9)
                                / np.sqrt(reps), dof=reps - 1)


@pytest.mark.slow
def test_compact_reports_through_every_consumer():
    """uUE and PUM-over-uRAP compact reports: aggregate = dense aggregate (same key where the key schedule
    agrees), emp, emp+thr and EM accept them; ul.perturb returns them at scale; simulate's stats path uses them."""
    m = ul.UUE(6, (0, 2, 3), 1.0, p=0.4)
    xs = jnp.asarray(np.random.default_rng(4).integers(0, m.d, 500), jnp.int32)
    ys = m.compact().perturb(jax.random.key(7), xs)
    ul.mechanisms.core.check_reports(m, ys)
    assert ul.aggregate(m, ys).shape == (m.d,)
    # dense reports packed explicitly give the same aggregate
    yd = m.perturb_batch(jax.random.key(7), xs)
    packed = yd._replace(base=ul.to_compact(yd.base))
    np.testing.assert_array_equal(np.asarray(ul.aggregate(m, packed)), np.asarray(ul.aggregate(m, yd)))
    for method in ("emp", "emp+thr", "em"):
        est = np.asarray(ul.estimate(m, ys, method))
        assert est.shape == (m.d,) and np.all(np.isfinite(est)), method
    # EM on packed dense reports equals EM on the dense reports (same likelihood)
    np.testing.assert_allclose(np.asarray(ul.estimate(m, packed, "em")), np.asarray(ul.estimate(m, yd, "em")),
                               rtol=1e-5, atol=1e-6)
    # at scale ul.perturb returns the compact form; simulate runs on it
    big = ul.UUE(2500, tuple(range(2000)), 2.0, p=0.5)
    assert big.compact().preferred
    xb = jnp.asarray(np.random.default_rng(5).integers(0, big.d, 3000), jnp.int32)
    yb = ul.perturb(jax.random.key(8), big, xb)
    assert isinstance(yb.base, ul.CompactBits)
    res = ul.simulate(jax.random.key(9), big, xs=xb, reps=2, methods=("emp",))
    assert res.estimates["emp"].shape == (2, big.d)
    # PUM over uRAP
    pm = ul.PUM(2000, tuple(range(0, 2000, 2)), 1, 5.0, base="urap")  # sparse: q ~ e^{-eps/2}
    assert pm.compact().preferred
    xp = jnp.asarray(np.random.default_rng(6).integers(0, pm.d, 3000), jnp.int32)
    personal = jnp.full((3000, 1), -1, jnp.int32)
    yp = ul.perturb(jax.random.key(10), pm, xp, personal)
    assert isinstance(yp, ul.CompactBits)
    ul.mechanisms.core.check_reports(pm, yp)
    for method in ("emp", "emp+thr", "em"):
        est = ul.pum_estimate(pm, yp, method=method)
        assert np.all(np.isfinite(np.asarray(est.p))), method


def test_numpy_sees_compact_reports_as_dense_bits():
    """``np.asarray(CompactBits)`` is the dense ``bool[n, d]`` array (NumPy must never iterate it row by row), and
    the protocol's default ``report_index`` takes compact reports."""
    m = ul.RAPPOR(7, 1.0)
    xs = jnp.asarray(np.random.default_rng(5).integers(0, m.d, 300), jnp.int32)
    ys = m.compact().perturb(jax.random.key(9), xs)
    dense = np.asarray(ul.to_dense(ys))
    got = np.asarray(ys)
    assert got.shape == (300, 7) and got.dtype == np.bool_
    np.testing.assert_array_equal(got, dense)
    np.testing.assert_array_equal(np.asarray(ys, np.int8), dense.astype(np.int8))
    np.testing.assert_array_equal(ul.testing.report_index(m, ys), dense.astype(np.int64) @ (1 << np.arange(7)))


@pytest.mark.parametrize("agg_entries", [1, 7 * 5, 2**20])
def test_chunked_aggregate_equals_dense_bit_sums(monkeypatch, agg_entries):
    """The row-chunked ``aggregate`` (last chunk shifted back and masked) = dense per-bit sums, with weights."""
    monkeypatch.setattr(_compact, "AGG_ENTRIES", agg_entries)
    m = ul.URAP(40, tuple(range(0, 40, 3)), 1.0)
    xs = jnp.asarray(np.random.default_rng(6).integers(0, m.d, 53), jnp.int32)  # 53 rows: no chunk divides it
    ys = m.compact().perturb(jax.random.key(4), xs)
    dense = np.asarray(ul.to_dense(ys), np.int64)
    w = jnp.asarray(np.random.default_rng(7).integers(0, 2, 53), jnp.int32)
    np.testing.assert_array_equal(np.asarray(_compact.aggregate(ys)), dense.sum(0))
    np.testing.assert_array_equal(np.asarray(_compact.aggregate(ys, w)), (dense * np.asarray(w)[:, None]).sum(0))
    np.testing.assert_array_equal(np.asarray(jax.jit(_compact.aggregate)(ys, w)),
                                  (dense * np.asarray(w)[:, None]).sum(0))


@pytest.mark.parametrize("name", ["RAPPOR", "uRAP"])
def test_pack_compact_equals_packing_the_dense_bits(monkeypatch, name):
    """``_support.pack_compact`` (host packing of ``CompactBits``, slice by slice) gives every product-part row the
    same support set as ``pack_block`` on the dense bits, with padding anywhere in a row (an own bit after the
    padding, as the sampler writes it) and uRAP's invertible rows dropped; slices of 3 rows exercise the loop."""
    from uldp_jax.estimation import _support

    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "host_rows", 3)
    d = 12
    mech = ul.RAPPOR(d, 1.0) if name == "RAPPOR" else ul.URAP(d, tuple(range(8)), 1.0)
    pad = d
    ones = np.array([[1, 4, pad, pad, 7],      # own bit 7 after the padding
                     [pad, pad, pad, pad, 2],
                     [0, 3, 5, pad, pad],
                     [pad, pad, pad, pad, pad],  # no one
                     [2, 6, pad, pad, 10],     # uRAP: non-sensitive bit 10 -> invertible
                     [1, 2, 3, 4, 5],
                     [pad, pad, pad, pad, 11]], np.uint16)
    ys = _compact.CompactBits(jnp.asarray(ones), d)
    sup, inv, stats = _support.pack_compact(mech, ys, np.uint16)
    want_sup, want_inv, want_stats = _support.pack_block(mech, _compact.to_dense(ys), np.uint16)
    np.testing.assert_array_equal(inv, want_inv)
    np.testing.assert_array_equal(stats, want_stats)
    assert sup.shape[0] == want_sup.shape[0] and sup.shape[1] == want_sup.shape[1]  # padding cut to the widest row
    for got, want in zip(sup, want_sup):
        assert sorted(got[got < d].tolist()) == sorted(want[want < d].tolist())


@pytest.mark.parametrize("call,err", [
    (lambda: ul.to_compact(np.array([1, 0, 1])), ValueError),  # one report: to_compact takes a batch
    (lambda: ul.to_compact(np.array([[2, 0]])), ValueError),  # not bits
    (lambda: ul.to_compact(np.ones((2, 2), np.float32)), TypeError),
    (lambda: ul.to_compact(np.eye(3, dtype=bool), width=0), ValueError),
    (lambda: ul.to_dense("x"), TypeError),
    (lambda: ul.to_dense(np.ones((2, 2, 2), bool)), ValueError),
], ids=["1-D", "values", "float", "width", "str", "3-D"])
def test_compact_converters_check_their_input(call, err):
    with pytest.raises(err, match="ys|width"):
        call()


def test_compact_converters_round_trip():
    bits = np.eye(5, dtype=bool)[[0, 3, 4]]
    np.testing.assert_array_equal(ul.to_dense(ul.to_compact(bits)), bits)
    np.testing.assert_array_equal(ul.to_dense(ul.to_compact(bits.astype(np.int32))), bits)
