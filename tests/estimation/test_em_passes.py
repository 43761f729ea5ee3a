"""``uldp_jax/estimation/_em_passes.py``: the column layout's support pass on selected items (Newton's free items)
equals the full pass on them to the last bit, listed or masked, whatever the column chunk of the sizing policy."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _sizing


def _reports(mech, n=6000):
    xs = jax.random.randint(jax.random.key(1), (n,), 0, mech.d)
    return ul.perturb(jax.random.key(2), mech, xs)


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
