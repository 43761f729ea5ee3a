"""``uldp_jax/mechanisms/subset/_ubd_forms.py``: uBD's closed-form per-item variance (``ul.theory.item_variance`` and
``mse``, iid and fixed models) equals its exact channel's moments."""

from __future__ import annotations

import numpy as np
import pytest

import uldp_jax as ul


@pytest.mark.parametrize("d,s,eps", [(7, 4, 1.0), (8, 5, 0.7), (6, 2, 3.0)])
def test_closed_form_variance_is_the_exact_channels(d, s, eps, x64):
    m = ul.UBD(d, tuple(range(0, 2 * s, 2))[:s] if 2 * s <= d else tuple(range(s)), eps)
    rng = np.random.default_rng(1)
    for p in [np.full(d, 1.0 / d), rng.dirichlet(np.ones(d)), np.eye(d)[0]]:
        for model in ("iid", "fixed"):
            exact = ul.theory.exact_item_mse(m, p, 1000.0, model=model)
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 1000.0, model)), exact, rtol=1e-10,
                                       atol=1e-15)
            np.testing.assert_allclose(float(ul.theory.mse(m, p, 1000.0, model)), exact.sum(), rtol=1e-10)
