"""``uldp_jax/estimation/_em_hessian.py``: ``hessian_of``'s products and model are exact on every report layout."""

import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

from tests.estimation.test_em_newton import _reports


@pytest.mark.parametrize("layout", ["packed", "rows", "columns", "dense"])
def test_hessian_products_are_exact(layout):
    """``_em_hessian.hessian_of``: ``G v`` and the model's diagonal equal the float32 evaluation of the explicit
    :math:`\\sum_i L_i L_i^\\top / D_i^2` on every layout (an item at ``p = 0`` included)."""
    from uldp_jax.estimation import _em_hessian, _em_reports
    from uldp_jax.estimation._em_packed import packed_pass
    from uldp_jax.estimation._em_passes import dense_pass, support_pass

    d, eps = 20, 3.0
    mech = ul.RAPPOR(d, eps)
    ys = _reports(mech, 3000, 2)
    t = np.exp(-eps)
    p = np.random.default_rng(0).dirichlet(np.ones(d))
    p[3] = 0.0
    p /= p.sum()
    v = np.random.default_rng(1).normal(size=d)
    lik = t + (1 - t) * np.asarray(ys, np.float64)
    gram = (lik / (lik @ p)[:, None] ** 2).T @ lik
    run = {"packed": lambda: packed_pass(_em_reports._pack_dense(mech, ys)),
           "rows": lambda: support_pass(_em_reports.to_support(mech, ys, layout="rows")),
           "columns": lambda: support_pass(_em_reports.to_support(mech, ys, layout="columns")),
           "dense": lambda: dense_pass(jnp.asarray(ys), jnp.ones(3000, jnp.float32), 512)}[layout]()
    hvp, model = _em_hessian.hessian_of(jnp.asarray(t, jnp.float32), run)
    pj, vj = jnp.asarray(p, jnp.float32), jnp.asarray(v, jnp.float32)
    np.testing.assert_allclose(np.asarray(hvp(pj, vj)), gram @ v, rtol=1e-4, atol=1e-4 * np.abs(gram @ v).max())
    m = model(pj)
    np.testing.assert_allclose(np.asarray(m.diagonal()), np.diag(gram), rtol=1e-4)
    # the model keeps every report's s_i = p . y_i (in the layout's row order, padding rows included) and a
    # product given the model gathers only v: the same product as gathering p again, to the last bit
    assert m.rows is not None and m.rows.ndim == 1 and m.rows.shape[0] >= 3000
    kept = np.sort(np.asarray(m.rows))[-3000:]  # padding rows have s = 0: the 3000 reports' sums remain
    np.testing.assert_allclose(np.sort(np.asarray(ys, np.float64) @ p), kept, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(hvp(pj, vj, m)), np.asarray(hvp(pj, vj)))
    # on selected items (``cols``: Newton's free items) products and the model are the same to the last bit there
    cols = jnp.asarray(np.random.default_rng(2).random(d) < 0.4)
    sel = np.asarray(cols)
    np.testing.assert_array_equal(np.asarray(hvp(pj, vj, m, cols))[sel], np.asarray(hvp(pj, vj, m))[sel])
    m_sel = model(pj, None, cols)
    np.testing.assert_array_equal(np.asarray(m_sel.a)[sel], np.asarray(m.a)[sel])
    assert float(m_sel.c0) == float(m.c0)
