"""Bit-packed bit-vector reports (``PackedReports``, issue 21): one bit per report bit, the same EM answer as the
dense and compact forms, a float64 (scipy) MLE in float32 mode, no compilation on a second call of one bucket,
and simulate's report path on packed reports where support lists would be larger."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.estimation import _em, _em_packed, _packed
from uldp_jax.estimation._em_reports import em_reports, to_packed, to_support
from uldp_jax.engine import _reports
from uldp_jax.engine._plan import make_plan

_COMPILES = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, *_, **__: _COMPILES.append(event) if event == "/jax/core/compile/backend_compile_duration" else None)

_MECHS = [ul.RAPPOR(20, 2.0), ul.URAP(20, tuple(range(0, 20, 3)), 2.0)]


def _items(d, n, seed):
    p = np.arange(1, d + 1, dtype=np.float64)
    return jax.random.choice(jax.random.key(seed), d, (n,), p=jnp.asarray(p / p.sum())).astype(jnp.int32)


def test_pack_bytes_round_trip():
    bits = jax.random.bernoulli(jax.random.key(0), 0.4, (50, 21))
    by = _packed.pack_bytes(bits)
    assert by.dtype == jnp.uint8 and by.shape == (50, 3)  # one bit per report bit
    np.testing.assert_array_equal(np.asarray(_packed.unpack_bytes(by, 21)), np.asarray(bits))


@pytest.mark.parametrize("mech", [pytest.param(m, marks=pytest.mark.slow) if isinstance(m, ul.RAPPOR) else m
                                  for m in _MECHS], ids=lambda m: type(m).__name__)  # RAPPOR: over 10 s
@pytest.mark.slow
def test_dense_compact_packed_same_answer(mech):
    ys = ul.perturb(jax.random.key(1), mech, _items(mech.d, 3000, 2))
    compact = ul.to_compact(ys)
    from_dense, from_compact = to_packed(mech, ys), to_packed(mech, compact)
    np.testing.assert_array_equal(np.asarray(from_dense.bytes), np.asarray(from_compact.bytes))
    np.testing.assert_array_equal(np.asarray(from_dense.inverted), np.asarray(from_compact.inverted))
    np.testing.assert_array_equal(np.asarray(from_dense.stats), np.asarray(from_compact.stats))
    answers = {"dense": em_reports(mech, ys)[0], "packed": em_reports(mech, from_dense)[0],
               "compact-packed": em_reports(mech, compact, layout="packed")[0],
               "compact-rows": em_reports(mech, compact, layout="rows")[0],
               "support-columns": em_reports(mech, to_support(mech, ys, layout="columns"))[0],
               "dense-matvec": em_reports(mech, ys, chunk=256)[0]}
    np.testing.assert_array_equal(np.asarray(answers["dense"]), np.asarray(answers["packed"]))
    np.testing.assert_array_equal(np.asarray(answers["dense"]), np.asarray(answers["compact-packed"]))
    for name, p in answers.items():
        np.testing.assert_allclose(np.asarray(p), np.asarray(answers["dense"]), atol=1e-5, rtol=0, err_msg=name)


def _scipy_mle(mech, ys):
    """Float64 maximiser of the exact report likelihood (scipy SLSQP on the simplex, over the report patterns)."""
    Q = np.asarray(ul.channel(mech).Q, np.float64)
    code = np.asarray(ys).astype(np.int64) @ (1 << np.arange(mech.d))
    c = np.bincount(code, minlength=Q.shape[1]).astype(np.float64)
    Q, c = Q[:, c > 0], c[c > 0]

    def nll(p):
        return -float(c @ np.log(np.maximum(p @ Q, 1e-300))) / c.sum()

    def grad(p):
        return -(Q @ (c / np.maximum(p @ Q, 1e-300))) / c.sum()

    d = mech.d
    res = scipy.optimize.minimize(nll, np.full(d, 1.0 / d), jac=grad, method="SLSQP", bounds=[(0.0, 1.0)] * d,
                                  constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0,
                                                "jac": lambda p: np.ones_like(p)}],
                                  options={"ftol": 1e-16, "maxiter": 2000})
    return res.x, nll


def _read_by(monkeypatch, read):
    """Forces the packed passes' way of reading the bytes (``sizing().dot_min_bytes``); JAX's caches are cleared
    so that no program traced the other way is reused."""
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "dot_min_bytes", 1 if read == "products" else 10**9)
    jax.clear_caches()


@pytest.mark.parametrize("read", ["default", pytest.param("products", marks=pytest.mark.slow)])  # 11-13 s
@pytest.mark.parametrize("mech", [ul.RAPPOR(6, 1.0), ul.URAP(6, (0, 2, 3), 1.0)], ids=lambda m: type(m).__name__)
def test_packed_em_matches_scipy_mle(mech, read, monkeypatch):
    """One byte a report: byte tables by default; ``products`` forces the wide rows' way (also compared with the
    tables pass by pass in ``test_products_and_byte_tables_same_passes``)."""
    if read == "products":
        _read_by(monkeypatch, read)
    ys = ul.perturb(jax.random.key(8), mech, _items(6, 4000, 7))
    p_hat = em_reports(mech, to_packed(mech, ys))[0]
    assert p_hat.dtype == jnp.float32
    want, nll = _scipy_mle(mech, ys)
    p = np.asarray(p_hat, np.float64)
    np.testing.assert_allclose(p, want, atol=1e-5, rtol=0)
    assert nll(p / p.sum()) <= nll(want) + 1e-6


_WIDE = [ul.RAPPOR(70, 0.5), ul.URAP(150, tuple(range(3, 150, 2)), 1.0)]  # 9 and 10 bytes a report


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("mech", _WIDE, ids=lambda m: type(m).__name__)
def test_products_and_byte_tables_same_passes(mech, dt):
    """Wide rows are read by products with the unpacked bits, narrow ones through byte tables: on the same reports
    the gradient pass, a two-table pass (as in Hessian products) and the gain agree to float rounding."""
    ys = ul.perturb(jax.random.key(3), mech, _items(mech.d, 6000, 4))
    rep = to_packed(mech, ys)
    assert _em_packed.reads_by_products(rep) and not _em_packed.reads_by_products(to_packed(_MECHS[0], ys[:, :20]))
    rng = np.random.default_rng(0)
    with jax.enable_x64(dt == np.float64):
        p = jnp.asarray(rng.dirichlet(np.ones(mech.d)).astype(dt))
        v = jnp.asarray(rng.standard_normal(mech.d).astype(dt))
        t = jnp.exp(-jnp.asarray(mech.eps, p.dtype))
        got = {}
        for products in (False, True):
            run = _em_packed.packed_pass(rep, products=products)
            two = run((p, v), lambda ss, w: (w * (ss[0] + 0.1 * ss[1]), w * ss[1], jnp.sum(w * ss[0])))
            grad = _em_packed.packed_grad(t, rep, products=products)(p)
            gain = _em_packed.packed_gain(t, rep, products=products)(p, 0.9 * p + 0.1 / mech.d)
            assert all(a.dtype == np.dtype(dt) for a in (grad[0], two[0], gain))
            got[products] = [np.asarray(a, np.float64) for a in (*grad, *two, gain)]
    for a, b in zip(got[True], got[False]):
        np.testing.assert_allclose(a, b, rtol=2e-6 if dt == np.float32 else 1e-12, atol=1e-30)


@pytest.mark.slow  # two EM compilations a mechanism (~8 s each)
@pytest.mark.parametrize("mech", _WIDE, ids=lambda m: type(m).__name__)
def test_products_em_equals_dense_form(mech):
    """EM on wide packed rows (read by products) equals EM on the dense reports (chunked mat-vecs)."""
    ys = ul.perturb(jax.random.key(3), mech, _items(mech.d, 6000, 4))
    np.testing.assert_allclose(np.asarray(em_reports(mech, to_packed(mech, ys))[0]),
                               np.asarray(em_reports(mech, ys, chunk=512)[0]), atol=1e-5, rtol=0)  # the MLE bar


def _compiles(fn):
    before = len(_COMPILES)
    jax.block_until_ready(fn())
    return len(_COMPILES) - before


@pytest.mark.parametrize("make", [lambda e: ul.RAPPOR(30, e), lambda e: ul.URAP(30, tuple(range(8)), e)],
                         ids=["RAPPOR", "uRAP"])
@pytest.mark.parametrize("form", ["dense", "packed", pytest.param("compact-rows", marks=pytest.mark.slow)])
def test_second_call_same_bucket_compiles_nothing(make, form):
    """Other data, another n in the same bucket and another eps: nothing compiles."""
    def reports(key, eps, n):
        ys = ul.perturb(key, make(eps), jnp.arange(n, dtype=jnp.int32) % 7)
        if form == "packed":
            return to_packed(make(eps), ys)
        return ul.to_compact(ys, width=12) if form == "compact-rows" else ys

    opts = {"layout": "rows"} if form == "compact-rows" else {}
    _em.em(make(1.0), reports(jax.random.key(0), 1.0, 3000), **opts)  # warm up
    ys2 = reports(jax.random.key(1), 1.3, 2900)
    assert _compiles(lambda: _em.em(make(1.3), ys2, **opts)) == 0


@pytest.mark.slow  # ~19 s: two EM programs compiled
def test_simulate_packs_sparse_reports_of_small_domains(monkeypatch):
    """Below COMPACT_MIN_D simulate packs a mechanism's reports at any eps, also where support lists would be
    smaller (RAPPOR(64, 8): ~2 ones a report), and EM answers as on support lists of the same reports."""
    calls = []
    packed = _reports._reports_device.packed_estimates
    monkeypatch.setattr(_reports._reports_device, "packed_estimates", lambda *a, **k: calls.append(1) or packed(*a, **k))
    mech, xs = ul.RAPPOR(64, 8.0), _items(64, 3000, 5)
    assert not mech.compact().stats and not _reports._prefers_packed(mech)  # support lists would be smaller
    key = jax.random.key(4)
    est = ul.simulate(key, mech, xs=xs, reps=1, methods=("em",)).estimates["em"][0]
    assert len(calls) == 1
    plan = make_plan(key, mech, xs=xs, reps=1, methods=("em",))  # the same reports (simulate's layout):
    ys = _reports.rep_reports(jax.random.fold_in(key, 0), mech, plan.data, plan.n, plan.iid, plan.block_size,
                              plan.num_blocks)
    want = em_reports(mech, to_support(mech, np.asarray(ys), layout="rows"))[0]  # EM on support lists
    np.testing.assert_allclose(np.asarray(est), np.asarray(want), atol=1e-5, rtol=0)


def test_simulate_packs_dense_reports():
    """simulate's report path packs RAPPOR's reports where support lists would be larger (small eps): memory
    d / 8 bytes per report, the stats unchanged."""
    mech = ul.RAPPOR(64, 0.5)
    assert _reports._prefers_packed(mech) and not _reports._prefers_packed(ul.RAPPOR(64, 8.0))
    xs = _items(64, 2000, 3)
    res = ul.simulate(jax.random.key(2), mech, xs=xs, reps=2, methods=("em", "emp"))
    est = np.asarray(res.estimates["em"])
    assert est.shape == (2, 64) and np.all(np.isfinite(est))
    np.testing.assert_allclose(est.sum(axis=1), 1.0, atol=1e-5)


def test_few_reports_fit_one_chunk_of_their_own_size():
    """``_packed.chunk_rows(nb, n)``: a full chunk for many reports, the power of two at or above ``n`` for few
    (600 reports of RAPPOR(10) were padded to 131,072 rows that every EM pass read)."""
    from uldp_jax.estimation import _packed

    full = _packed.chunk_rows(2)
    assert _packed.chunk_rows(2, None) == full and _packed.chunk_rows(2, 10 * full) == full
    assert _packed.chunk_rows(2, 600) == 1024 and _packed.chunk_rows(2, 1024) == 1024
    assert _packed.chunk_rows(2, 1) == 8
    assert _packed.padded_rows(600, _packed.chunk_rows(2, 600)) == 1024
