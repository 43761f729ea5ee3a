"""Mechanism reprs are short: index sets and arrays longer than 8 entries are summarised."""

import jax
import numpy as np

import uldp_jax as ul


def test_large_sensitive_set_is_summarised():
    r = repr(ul.URAP(1200, range(424), 5.0))
    assert r.startswith("URAP(d=1200, sensitive=<424 items: 0, 1, 2, ..., 423>, eps=5.0, theta=")
    assert len(r) < 120


def test_small_fields_print_in_full_and_grids_and_nesting():
    assert repr(ul.GRR(5, 1.0)) == "GRR(d=5, eps=1.0)"
    assert repr(ul.URR(8, [0, 3], 1.0)) == "URR(d=8, sensitive=(0, 3), eps=1.0)"
    grid = jax.vmap(lambda e: ul.GRR(5, e))(np.array([0.5, 2.0]))
    assert repr(grid) == "GRR(d=5, eps=[0.5, 2.0])"
    big = jax.vmap(lambda e: ul.GRR(5, e))(np.linspace(0.1, 1.0, 20))
    assert repr(big) in ("GRR(d=5, eps=<float32[20]>)", "GRR(d=5, eps=<float64[20]>)")
    assert "sensitive=(0, 1)" in repr(ul.PUM(8, [0, 1], 2, 1.0))


def test_repr_inside_jit_does_not_fail():
    seen = []
    jax.jit(lambda m: (seen.append(repr(m)), m.eps)[1])(ul.GRR(5, 1.0))
    assert seen and seen[0].startswith("GRR(d=5, eps=")
