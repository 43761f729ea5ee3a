"""EM reconstruction: fixed point = MLE (vs scipy on the simplex), monotone, SQUAREM, vmap, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.mechanisms.core import _host
from uldp_jax.estimation import _em, _em_core, _em_reports, _support

P5 = np.array([0.3, 0.25, 0.2, 0.15, 0.1])
TIGHT = {"tol": 1e-15, "max_iters": 100_000}


def _mechs():
    return {"GRR": ul.GRR(5, 1.0), "URR": ul.URR(5, (0, 2), 1.0), "URAP": ul.URAP(5, (0, 2), 1.0),
            "RAPPOR": ul.RAPPOR(5, 1.0)}


def _reports(mech, n=3000, seed=1):
    xs = jax.random.choice(jax.random.key(seed), 5, (n,), p=jnp.asarray(P5)).astype(jnp.int32)
    return ul.perturb(jax.random.key(0), mech, xs)


def _output_counts(mech, ys):
    """Histogram over the exact channel's outputs (items, or bit patterns y = sum_j bit_j 2^j)."""
    m = ul.channel(mech).Q.shape[1]
    y = np.asarray(ys)
    code = y if mech.report_kind == "item" else y.astype(np.int64) @ (1 << np.arange(y.shape[1]))
    return np.bincount(code, minlength=m).astype(np.float64)


def _scipy_mle(Q, c):
    """Independent maximiser: SLSQP on the simplex with the exact channel (dense, all outputs)."""
    d = Q.shape[0]
    f = lambda p: -np.sum(c * np.log(np.maximum(p @ Q, 1e-300))) / c.sum()
    g = lambda p: -(Q @ (c / np.maximum(p @ Q, 1e-300))) / c.sum()
    res = minimize(f, np.full(d, 1 / d), jac=g, method="SLSQP", bounds=[(0, 1)] * d,
                   constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1, "jac": lambda p: np.ones(d)}],
                   options={"ftol": 1e-16, "maxiter": 2000})
    return res.x


@pytest.mark.parametrize("name", ["GRR", "URR", "URAP", "RAPPOR"])
def test_em_fixed_point_is_mle(name):
    """Interior MLE (n = 3000, p >= 0.1): EM and SLSQP on the exact likelihood agree to 1e-6."""
    with jax.enable_x64(True):
        mech = _mechs()[name]
        ys = _reports(mech)
        p_hat, info = jax.jit(lambda m, y: _em.em(m, y, return_info=True, **TIGHT))(mech, ys)
        assert bool(info.converged)
        want = _scipy_mle(ul.channel(mech).Q, _output_counts(mech, ys))
        np.testing.assert_allclose(np.asarray(p_hat), want, atol=1e-6)
        assert abs(float(jnp.sum(p_hat)) - 1) < 1e-12 and float(jnp.min(p_hat)) >= 0


def test_em_boundary_kkt():
    """MLE on the boundary (items with no users): KKT conditions of the exact likelihood hold."""
    with jax.enable_x64(True):
        mech = ul.URR(6, (0, 1, 2), 0.5)
        xs = jnp.array([0] * 200 + [3] * 300 + [4] * 100, jnp.int32)
        ys = ul.perturb(jax.random.key(2), mech, xs)
        p_hat = np.asarray(_em.em(mech, ys, return_info=True, tol=1e-13, max_iters=50_000)[0])
        Q = ul.channel(mech).Q
        c = np.bincount(np.asarray(ys), minlength=6)
        grad = Q @ (c / (p_hat @ Q)) / c.sum()  # = 1 where p > 0, <= 1 where p = 0
        pos = p_hat > 1e-6
        np.testing.assert_allclose(grad[pos], 1.0, atol=1e-5)
        assert np.all(grad[~pos] <= 1 + 1e-5)


@pytest.mark.parametrize("name", ["URR", "URAP"])
def test_monotone_loglik_and_simplex(name):
    with jax.enable_x64(True):
        mech = _mechs()[name]
        ys = _reports(mech, n=800)
        if mech.report_kind == "item":
            counts = mech.aggregate(ys).astype(jnp.float64)
            update = _em.histogram_update(mech, counts)
        else:
            bits, w, inv = _em_reports._split_invertible(mech, ys, check=True)
            update = _em_reports.dense_update(jnp.exp(-1.0), bits & w[:, None], w, inv, 256)
        for step in (_em_core.step, _em_core.squarem_step):
            state = _em_core.init(update, jnp.full(5, 0.2))
            stepj = jax.jit(lambda s, step=step: step(update, s))
            lls = [float(state.loglik)]
            for _ in range(15):
                state = stepj(state)
                lls.append(float(state.loglik))
                assert float(jnp.min(state.p_next)) >= 0 and abs(float(jnp.sum(state.p_next)) - 1) < 1e-12
            assert np.all(np.diff(lls) >= -1e-13), np.diff(lls)


@pytest.mark.parametrize("name", ["URR", "RAPPOR"])
@pytest.mark.slow
def test_squarem_same_optimum_fewer_evals(name):
    with jax.enable_x64(True):
        mech = ul.URR(12, tuple(range(6)), 1.0) if name == "URR" else ul.RAPPOR(12, 1.0)
        p = 1.0 / np.arange(1, 13) ** 0.5  # interior MLE (every item well represented)
        xs = jax.random.choice(jax.random.key(3), 12, (4000,), p=jnp.asarray(p / p.sum())).astype(jnp.int32)
        ys = ul.perturb(jax.random.key(4), mech, xs)
        run = jax.jit(lambda m, y, acc: _em.em(m, y, return_info=True, tol=1e-14, max_iters=100_000, accelerate=acc),
                      static_argnums=2)
        p_plain, i_plain = run(mech, ys, False)
        p_sq, i_sq = run(mech, ys, True)
        assert bool(i_plain.converged) and bool(i_sq.converged)
        assert abs(float(i_sq.loglik) - float(i_plain.loglik)) < 1e-11
        np.testing.assert_allclose(np.asarray(p_sq), np.asarray(p_plain), atol=1e-5)
        assert int(i_sq.num_evals) < int(i_plain.num_evals) / 2, (i_sq.num_evals, i_plain.num_evals)


@pytest.mark.slow
def test_vmap_over_reps_and_support_form():
    mech = ul.URAP(8, (0, 1, 2), 1.5)
    xs = jnp.arange(600, dtype=jnp.int32) % 8
    keys = jax.random.split(jax.random.key(5), 3)
    ys = jax.vmap(lambda k: mech.perturb_batch(k, xs))(keys)  # [3, n, d]
    batched = jax.jit(jax.vmap(lambda y: _em.em(mech, y, return_info=True, tol=1e-6)[0]))(ys)
    assert batched.shape == (3, 8) and np.allclose(np.asarray(batched).sum(1), 1, atol=1e-5)
    sup = _em_reports.to_support(mech, [np.asarray(ys[1][:250]), np.asarray(ys[1][250:])], chunk=64)
    np.testing.assert_array_equal(np.asarray(sup.stats), np.asarray(mech.aggregate(ys[1])))
    np.testing.assert_allclose(np.asarray(_em_reports.em_reports(mech, sup, tol=1e-6)[0]),
                               np.asarray(batched[1]), atol=1e-4)


def test_column_segments_match_a_sort(monkeypatch):
    """The sliced counting placement = a stable sort of the whole block by item (rows in order per item)."""
    rng = np.random.default_rng(3)
    d, seg, rows, width = 11, 4, 57, 6
    sup = np.sort(rng.integers(0, d + 1, size=(rows, width)), axis=1).astype(np.uint16)  # d = padding
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "host_rows", 5)
    got, items = _support.column_segments(sup, d, seg)
    for x in range(d):
        want = np.nonzero(sup == x)[0]  # rows holding x, in order (one entry per occurrence)
        have = got[items == x].ravel()
        np.testing.assert_array_equal(have[have < rows], want)
        assert (have[len(want):] == rows).all() and len(have) == -(-len(want) // seg) * seg


def test_estimate_dispatch_binary_dense_fallback():
    with jax.enable_x64(True):
        mech = ul.Mangat(1.0)
        ys = ul.perturb(jax.random.key(6), mech, jnp.array([0] * 300 + [1] * 100, jnp.int32))
        est = np.asarray(ul.estimate(mech, ys, "em", tol=1e-14))
        want = _scipy_mle(ul.channel(mech).Q, _output_counts(mech, ys))
        np.testing.assert_allclose(est, want, atol=1e-6)


def test_bad_inputs():
    grr, rap = ul.GRR(5, 1.0), ul.RAPPOR(5, 1.0)
    ys_item = _reports(grr, n=50)
    ys_bits = _reports(rap, n=50)
    # a string other than "stat" is a bad value (ValueError); a bool or a list a bad type
    for bad, exc in ((0.0, ValueError), (-1e-3, ValueError), (float("inf"), ValueError), ("x", ValueError),
                     (True, TypeError), ([1e-3], TypeError)):
        with pytest.raises(exc, match="tol"):
            ul.estimate(grr, ys_item, "em", tol=bad)
        with pytest.raises(exc, match="tol"):
            ul.estimate(rap, ys_bits, "em", tol=bad)
    with pytest.raises(ValueError, match="max_iters"):
        ul.estimate(grr, ys_item, "em", max_iters=0)
    with pytest.raises(TypeError, match="max_iters"):
        ul.estimate(rap, ys_bits, "em", max_iters=2.5)
    with pytest.raises(ValueError, match="alpha"):
        ul.estimate(rap, ys_bits, "em", alpha=1.0)
    with pytest.raises(TypeError, match="ys"):  # item reports given to a bit-vector mechanism
        ul.estimate(rap, ys_item, "em")
    with pytest.raises(TypeError, match="ys"):  # bit reports given to an item mechanism
        ul.estimate(grr, ys_bits, "em")
    with pytest.raises(ValueError, match="ys"):  # wrong width
        ul.estimate(ul.RAPPOR(6, 1.0), ys_bits, "em")
    urap = ul.URAP(5, (0,), 1.0)
    two_nonsens = jnp.zeros((3, 5), bool).at[0, 1].set(True).at[0, 2].set(True)
    with pytest.raises(ValueError, match="non-sensitive"):
        ul.estimate(urap, two_nonsens, "em")
    with pytest.raises(ValueError, match="method"):
        ul.estimate(grr, ys_item, "EM-typo")
    with pytest.raises(ValueError, match="needs the reports"):
        ul.estimate_from_stats(rap, rap.aggregate(ys_bits), 50, "em")
    with pytest.raises(ValueError, match="init"):
        ul.estimate(grr, ys_item, "em", init=jnp.ones(4))
    with pytest.raises(RuntimeError, match="converge"):
        _em.em(grr, ys_item, return_info=True, max_iters=1, tol=1e-15, throw=True)


@pytest.mark.parametrize("dtype,fill", [(np.uint16, 7), (np.int32, None), (np.uint8, 0)])
def test_host_array_is_aligned_and_device_put_aliases_it_on_cpu(dtype, fill):
    """``_host.host_array``: 64-byte aligned, so that on the CPU backend ``jax.device_put`` takes the packed
    reports without a copy (the peak memory of packing); its contents survive the NumPy name going away."""
    import gc

    a = _host.host_array((1000, 37), dtype, fill)
    assert a.shape == (1000, 37) and a.dtype == dtype and a.ctypes.data % 64 == 0
    if fill is not None:
        assert np.all(a == fill)
    a[:] = np.arange(37, dtype=dtype)[None, :]
    dev = jax.device_put(a)
    if jax.default_backend() == "cpu":
        assert dev.unsafe_buffer_pointer() == a.ctypes.data
    del a
    gc.collect()
    np.testing.assert_array_equal(np.asarray(dev), np.broadcast_to(np.arange(37, dtype=dtype), (1000, 37)))


@pytest.mark.parametrize("rows,full,width", [(1, 5, 3), (2, 5, 5), (7, 5, 1), (1000, 37, 36), (5000, 721, 705),
                                             (3, 4, 2), (9000, 40, 39)])
def test_narrow_rows_in_place_equals_the_first_columns(rows, full, width):
    """``_host.narrow_rows``: the first ``width`` columns, contiguous at the buffer's (aligned) start, no copy."""
    buf = _host.host_array((rows, full), np.uint16)
    buf[:] = np.random.default_rng(rows).integers(0, 60000, (rows, full))
    ref = buf[:, :width].copy()
    out = _host.narrow_rows(buf, width, max_rows=4096)
    np.testing.assert_array_equal(out, ref)
    assert out.flags.c_contiguous and out.ctypes.data == buf.ctypes.data
