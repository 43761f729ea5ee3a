"""Validation misses of issue 53 item 7, each refused with an error naming the argument."""

import jax
import numpy as np
import pytest

import uldp_jax as ul


@pytest.mark.parametrize("imag", [0.0, 1.0])
def test_a_complex_E_matrix_is_refused_by_the_audit(imag):
    E = np.full((4, 4), 1.0) + 1j * imag
    np.fill_diagonal(E, 0)
    with pytest.raises(TypeError, match=r"E.*real.*complex"):
        ul.audit(ul.GRR(4, 1.0), E=E)
    with pytest.raises(TypeError, match="E"):
        ul.audit(ul.GRR(4, 1.0), E="1.0")
    assert ul.audit(ul.GRR(4, 1.0), E=E.real).ok  # the same values as reals are fine


def test_em_init_must_be_a_distribution():
    mech = ul.GRR(6, 1.0)
    ys = ul.perturb(jax.random.key(0), mech, np.arange(60) % 6)
    for bad in (np.ones(6), np.full(6, 0.1), np.full(6, 1 / 6) * 1.01):
        with pytest.raises(ValueError, match="init.*distribution"):
            ul.estimate(mech, ys, "em", init=bad)
    p = np.asarray(ul.estimate(mech, ys, "em", init=np.full(6, 1 / 6, np.float32)))
    assert abs(p.sum() - 1) < 1e-5


@pytest.mark.parametrize("bad", [np.array([[2**40, 0, 1]]), np.array([[2**32 + 1, 0, 1]], np.uint64),
                                 np.array([[2, 0, 1]]), np.array([[-1, 0, 1]], np.int8)])
def test_to_compact_refuses_integers_that_are_not_bits(bad):
    with pytest.raises(ValueError, match="bits"):
        ul.to_compact(bad)
    with pytest.raises(ValueError, match="bits"):
        ul.to_dense(bad)


def test_to_compact_keeps_integer_bits():
    c = ul.to_compact(np.array([[1, 0, 1], [0, 0, 1]], np.int64))
    np.testing.assert_array_equal(np.asarray(ul.to_dense(c)), [[True, False, True], [False, False, True]])


@pytest.mark.parametrize("bad", ["y", "no", 1, 0, None])
def test_recommend_include_ldp_must_be_a_bool(bad):
    with pytest.raises(TypeError, match="include_ldp"):
        ul.recommend(6, [0, 1], 1.0, 0.5, include_ldp=bad)
