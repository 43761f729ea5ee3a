"""``uldp_jax/estimation/_em_reports.py``: EM on bit-vector reports gives one EM map and log-likelihood whatever the
reports' form: the column layout (row blocks, segment sums), the row layout (scatter-add) and the dense reports, in
float64 and with float32 passes; a column layout whose blocks do not match is refused."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing
from uldp_jax.estimation import _em_reports


def test_column_layout_same_em_map(monkeypatch):
    """Column layout (several uint16 row blocks, segment sums) = row layout (scatter-add) = dense reports: same
    EM map and log-likelihood (hence the same fixed point), in float64 and with float32 passes."""
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "block_rows", 150)  # force 3 blocks of rows
    monkeypatch.setitem(_sizing.SIZING_OVERRIDE, "host_rows", 7)  # and many slices per block in the host packing loops
    with jax.enable_x64(True):
        mech = ul.URAP(9, (0, 2, 3, 7), 1.0)
        xs = jnp.arange(400, dtype=jnp.int32) % 9
        ys = ul.perturb(jax.random.key(8), mech, xs)
        blocks = [np.asarray(ys[:170]), np.asarray(ys[170:])]
        rows = _em_reports.to_support(mech, blocks, layout="rows")
        cols = _em_reports.to_support(mech, blocks, chunk=16, layout="columns")
        assert cols.col_rows.shape[0] == 3 and cols.support.dtype == jnp.uint16
        bits, w, inv = _em_reports._split_invertible(mech, ys, check=True)
        t = jnp.exp(-1.0)
        p = jnp.asarray(np.random.default_rng(0).dirichlet(np.ones(9)))
        want = _em_reports.dense_update(t, bits & w[:, None], w, inv, 64)(p)
        for rep, pdt, atol in ((rows, None, 1e-12), (cols, None, 1e-12), (cols, jnp.float32, 1e-6)):
            got = jax.jit(lambda r, q, pdt=pdt: _em_reports.support_update(t, r, pdt)(q))(rep, p)
            np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), atol=atol)
            np.testing.assert_allclose(float(got[1]), float(want[1]), atol=atol)
        _em_reports._check_support(mech, cols)  # what em_reports checks before using the column layout
        with pytest.raises(ValueError, match="block_rows"):
            _em_reports._check_support(mech, dataclasses.replace(cols, block_rows=cols.block_rows * 2))
