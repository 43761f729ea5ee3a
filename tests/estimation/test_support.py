"""``uldp_jax/estimation/_support.py``: the column layout's row chunk divides the row blocks without padding where it
can, and ``assemble`` then takes the compact reports' own buffer as the support lists (no copy)."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.estimation import _support


def _reports(mech, n=6000):
    xs = jax.random.randint(jax.random.key(1), (n,), 0, mech.d)
    return ul.perturb(jax.random.key(2), mech, xs)


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
