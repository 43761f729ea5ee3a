"""estimate / estimate_from_stats check what they are given: impossible n or counts, foreign reports."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

GRR = ul.GRR(4, 1.0)


@pytest.mark.parametrize("n,exc", [(0, ValueError), (-1, ValueError), (2.5, ValueError), (np.nan, ValueError),
                                   ("10", TypeError), (True, TypeError), (None, TypeError),
                                   (np.array([10, 10]), TypeError)])
def test_estimate_from_stats_bad_n(n, exc):
    with pytest.raises(exc, match="n="):
        ul.estimate_from_stats(GRR, jnp.array([1, 2, 3, 4]), n)


@pytest.mark.parametrize("stats,match", [([1, -2, 3, 8], "non-negative"), ([1.5, 2, 3, 3.5], "whole"),
                                         ([1, 2, 3, 5], "sum to n"), ([11, 0, 0, 0], "<= n"),
                                         ([1, 2, 3], "last axis"), ([np.inf, 0, 0, 0], "finite")])
def test_estimate_from_stats_bad_stats(stats, match):
    with pytest.raises(ValueError, match=match):
        ul.estimate_from_stats(GRR, np.asarray(stats), 10)


def test_estimate_from_stats_n_smaller_than_reports():
    # 10 reports in the histogram, n = 5: refused instead of a confident wrong number
    with pytest.raises(ValueError, match="n=5"):
        ul.estimate_from_stats(GRR, jnp.array([1, 2, 3, 4]), 5)


def test_estimate_from_stats_bits_kind_bounds():
    rap = ul.RAPPOR(4, 1.0)
    # bit counts need not sum to n but none may exceed it
    est = ul.estimate_from_stats(rap, jnp.array([3, 0, 10, 5]), 10)
    assert np.all(np.isfinite(np.asarray(est)))
    with pytest.raises(ValueError, match="<= n"):
        ul.estimate_from_stats(rap, jnp.array([3, 0, 11, 5]), 10)


def test_estimate_from_stats_valid_matches_hand_formula():
    # GRR: p_hat = (c/n - q) / (p - q), p = e/(e+3), q = 1/(e+3)
    e = np.e
    p, q = e / (e + 3), 1 / (e + 3)
    c = np.array([1, 2, 3, 4])
    est = np.asarray(ul.estimate_from_stats(GRR, jnp.asarray(c), 10), np.float64)
    np.testing.assert_allclose(est, (c / 10 - q) / (p - q), rtol=1e-5)


def test_estimate_from_stats_traced_is_not_checked_but_works():
    f = jax.jit(lambda st: ul.estimate_from_stats(GRR, st, 10))
    assert f(jnp.array([1, 2, 3, 4])).shape == (4,)


@pytest.mark.parametrize("src,dst", [
    (lambda: ul.GRR(4, 1.0), lambda: ul.OLH(4, 1.0)),
    (lambda: ul.GRR(4, 1.0), lambda: ul.Wheel(4, 1.0)),
    (lambda: ul.GRR(4, 1.0), lambda: ul.RAPPOR(4, 1.0)),
    (lambda: ul.RAPPOR(4, 1.0), lambda: ul.GRR(4, 1.0)),
    (lambda: ul.OLH(4, 1.0), lambda: ul.GRR(4, 1.0)),
    (lambda: ul.OLH(4, 1.0), lambda: ul.Wheel(4, 1.0)),
    (lambda: ul.Wheel(4, 1.0), lambda: ul.OLH(4, 1.0)),
    (lambda: ul.GRR(4, 1.0), lambda: ul.GLUTF(ul.GRR(2, 1.0), 4, [0, 1])),
])
def test_foreign_reports_give_typeerror_naming_ys(src, dst):
    ys = ul.perturb(jax.random.key(0), src(), jnp.arange(4))
    dst = dst()
    with pytest.raises(TypeError, match=r"ys.*" + type(dst).__name__):
        ul.estimate(dst, ys)
