"""EM and support passes on the sizing policy (issue 17): bit-identical results whatever the column chunk.

``_sizing.sizing()`` gives the column-pass chunk of EM; ``SIZING_OVERRIDE`` replaces it (as a GPU policy would).
The column chunk only splits a map, so EM estimates are bit-identical across its values. The row chunk
(``_sizing.sizing().row_chunk_entries``) stays fixed on every backend: it sets the order of the float accumulations across
chunks, and the last test documents that changing it moves estimates (why it is not on the policy).
"""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.estimation import _support


@pytest.fixture
def override():
    _sizing.SIZING_OVERRIDE.clear()
    yield _sizing.SIZING_OVERRIDE
    _sizing.SIZING_OVERRIDE.clear()


def _reports(mech, n=6000):
    xs = jax.random.randint(jax.random.key(1), (n,), 0, mech.d)
    return ul.perturb(jax.random.key(2), mech, xs)


def test_cpu_policy_values_unchanged():
    s = _sizing.sizing(jax.devices("cpu")[0])
    assert (s.chunk_bytes, s.rep_batch, s.em_col_entries) == (2**20, 1, 2**16) and s.row_chunk_entries == 2**20


@pytest.mark.parametrize("mech", [ul.RAPPOR(40, 2.0), ul.URAP(40, list(range(12)), 2.0)], ids=["RAPPOR", "uRAP"])
def test_em_bit_identical_across_column_chunks(override, mech):
    ys = _reports(mech)
    opts = dict(layout="columns", tol=1e-9)
    base = np.asarray(ul.estimate(mech, ys, "em", **opts))
    for col in (1, 2**6, 2**12, 2**24):
        override["em_col_entries"] = col
        assert np.array_equal(np.asarray(ul.estimate(mech, ys, "em", **opts)), base), col


def test_row_chunk_changes_float_order_so_it_is_not_on_the_policy():
    mech = ul.RAPPOR(40, 2.0)
    ys = _reports(mech)
    base = np.asarray(ul.estimate(mech, ys, "em", tol=1e-9, chunk=2**13))
    other = np.asarray(ul.estimate(mech, ys, "em", tol=1e-9, chunk=2**6))
    np.testing.assert_allclose(other, base, atol=2e-4)
    assert not np.array_equal(other, base)


def test_chunked_map_is_a_plain_scan_at_batch_one():
    """``_sizing.chunked_map`` at batch 1 (or None) is ``lax.map`` without ``batch_size`` (a scan of the unbatched
    body: ``lax.map(batch_size=1)`` vmaps it, which made simulate's report EM 9x slower on CPU); above 1 it is
    ``lax.map(batch_size=b)``; all give the same values."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from uldp_jax import _sizing

    table = jnp.arange(40.0).reshape(10, 4)

    def body(i):
        return jnp.take(table, (i + jnp.arange(3)) % 10, axis=0).sum(0)  # a gather, as the EM passes

    xs = jnp.arange(10)
    plain = jax.make_jaxpr(lambda x: jax.lax.map(body, x))(xs)
    for batch in (None, 0, 1):
        assert str(jax.make_jaxpr(lambda x, b=batch: _sizing.chunked_map(body, x, b))(xs)) == str(plain)
    assert str(jax.make_jaxpr(lambda x: _sizing.chunked_map(body, x, 5))(xs)) == str(
        jax.make_jaxpr(lambda x: jax.lax.map(body, x, batch_size=5))(xs))
    for batch in (1, 3, 5):
        np.testing.assert_array_equal(_sizing.chunked_map(body, xs, batch), jax.lax.map(body, xs))


@pytest.mark.parametrize("select_all", [1.0, 0.6, 0.0])
def test_column_pass_on_selected_items(override, monkeypatch, select_all):
    """The column layout's pass on selected items (``cols``: Newton's free items) lists their segments and gathers
    only those, chunk by chunk, over several row blocks, or (more than ``SELECT_ALL`` of the segments selected)
    sums every segment and masks: the selected items' sums equal the full pass's to the last bit, the other items
    get 0, whatever the column chunk (1 segment, a few, all) and whichever way was taken."""
    import jax.numpy as jnp

    from uldp_jax.estimation import _em_passes, _em_reports
    from uldp_jax.estimation._em_passes import support_pass

    monkeypatch.setattr(_em_passes, "SELECT_ALL", select_all)  # 1.0: always listed; 0.0: always all

    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "block_rows", 1500)  # 4 blocks of rows
    mech = ul.RAPPOR(40, 2.0)
    rep = _em_reports.to_support(mech, _reports(mech), chunk=300, layout="columns")
    assert rep.col_rows.shape[0] == 4
    f = jnp.asarray(np.random.default_rng(0).random(rep.support.shape[0]), jnp.float32)
    terms = lambda ss, w, r: (r * w, w, jnp.zeros(()))  # noqa: E731  (col_x = sum of f over the rows with x)
    for col in (256, 2**12, 2**24):  # 1 segment per chunk, 16, every segment
        override["em_col_entries"] = col
        run = support_pass(rep)
        full, a_full, _ = jax.jit(lambda r: run((), terms, rows=r))(f)
        some = jax.jit(lambda r, c: run((), terms, rows=r, cols=c))
        for frac in (0.0, 0.3, 0.75, 1.0):  # listed segments, then all of them (masked: SELECT_ALL)
            cols = jnp.asarray(np.random.default_rng(1).random(40) < frac)
            got, a_got, _ = some(f, cols)
            sel = np.asarray(cols)
            np.testing.assert_array_equal(np.asarray(got)[sel], np.asarray(full)[sel])
            np.testing.assert_array_equal(np.asarray(got)[~sel], 0.0)
            assert float(a_got) == float(a_full)


@pytest.mark.parametrize("n,width,chunk", [(240000, 721, 400), (240000, 166, 1200), (100000, 50, 5000),
                                           (1229143, 40, None), (179527, 700, None), (1000000, 600, None)])
def test_dividing_chunk_splits_the_blocks_without_padding(n, width, chunk):
    c = _support._dividing_chunk(n, width)
    assert c == chunk
    if c is not None:
        blocks = -(-n // _sizing.sizing().block_rows)
        target = _support.row_chunk(n, width)
        assert c % 8 == 0 and (n // blocks) % c == 0 and n % blocks == 0 and target <= 2 * c <= 3 * target


def test_column_layout_takes_the_reports_buffer_without_a_copy(monkeypatch):
    """Where a chunk splits the rows into equal blocks with no padding row, ``assemble`` takes the compact reports'
    own (aligned) buffer as the support lists: on CPU the device array aliases it; the rows and counts equal those
    of the padded copy."""
    mech = ul.RAPPOR(1200, 4.0)
    ys = _reports(mech, n=4800)
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "block_rows", 2400)  # two blocks of 2400 rows
    rep = _support.to_support(mech, ys, layout="columns")
    assert rep.support.shape[0] == 4800 and rep.block_rows == 2400 and rep.col_rows.shape[0] == 2
    if jax.default_backend() == "cpu":
        assert rep.support.unsafe_buffer_pointer() == ys.ones.unsafe_buffer_pointer()
    padded = _support.to_support(mech, ys, chunk=104, layout="columns")  # 104 does not divide 2400: copied
    assert padded.support.shape[0] > 4800
    np.testing.assert_array_equal(np.asarray(rep.support), np.asarray(padded.support)[:4800])
    np.testing.assert_array_equal(np.asarray(rep.stats), np.asarray(padded.stats))
