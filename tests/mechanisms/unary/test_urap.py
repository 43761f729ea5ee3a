"""``uldp_jax/mechanisms/unary/_urap.py``: uRAP's eps and theta are differentiable pytree leaves (d, X_S static)."""

import dataclasses

import jax
import numpy as np

import uldp_jax as ul


def test_parameters_are_differentiable_leaves():
    def gap(eps):
        a, _ = ul.URAP(6, [1, 2], eps).estimator().affine
        return a[0]

    g = jax.grad(gap)(1.0)
    assert np.isfinite(float(g)) and float(g) > 0
    leaves = jax.tree_util.tree_leaves(ul.URAP(6, [1, 2], 1.0))
    assert len(leaves) == 2  # eps and theta; d and sensitive are static
    assert dataclasses.is_dataclass(ul.GRR(3, 1.0))
