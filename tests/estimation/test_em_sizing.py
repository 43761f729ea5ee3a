"""EM and support passes on the sizing policy (issue 17): bit-identical results whatever the column chunk.

``_sizing.sizing()`` gives the column-pass chunk of EM; ``SIZING_OVERRIDE`` replaces it (as a GPU policy would).
The column chunk only splits a map, so EM estimates are bit-identical across its values. The row chunk
(``_sizing.sizing().row_chunk_entries``) stays fixed on every backend: it sets the order of the float accumulations across
chunks, and a test documents that changing it moves estimates (why it is not on the policy). The column pass on
selected items: tests/estimation/test_em_passes.py; the dividing row chunk: tests/estimation/test_support.py.
"""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing


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
