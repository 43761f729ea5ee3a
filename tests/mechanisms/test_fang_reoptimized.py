"""Fang et al. (USENIX Security 2025; SEUNICK/LDP_Frequency_Protocols ``fp/RUE.py``, ``fp/RLH.py``): their
re-optimized unary encoding RUE and re-optimized local hashing RLH are not new mechanisms here. RUE is ``ul.UE`` at
the keep probability ``ul.tune`` picks (the exact minimiser of UE's MSE; UE's default ``p = 1/2`` is OUE), and RLH
is ``ul.OLH`` with its default ``g`` (the better neighbouring integer of the exact continuous optimum). Their
formulas are ported below and checked on a grid, with their analytical MSE against ``ul.theory``."""

import math

import numpy as np
import pytest

import uldp_jax as ul


def _h(d, eps):
    e = math.exp(eps)
    return math.sqrt((d - 1 + 1 / e) / (d - 1 + e))


def rue_pq(d, eps):
    """``RUE.__init__``: ``p = 1/(h + 1)``, ``q = 1/(h e^eps + 1)``."""
    h = _h(d, eps)
    return 1 / (h + 1), 1 / (h * math.exp(eps) + 1)


def fang_mse(p, q, d):
    """Their ``get_ana_MSE`` (n = 1): the per-item mean of n Var under a uniform true distribution."""
    return q * (1 - q) / (p - q) ** 2 + (1 - p - q) / d / (p - q)


def rlh_g(d, eps):
    """``RLH.__init__``: the better of floor/ceil of ``h e^eps + 1`` by their analytical MSE."""
    e = math.exp(eps)
    g = _h(d, eps) * e + 1
    mse = lambda g: fang_mse(e / (e + g - 1), 1 / g, d)  # noqa: E731
    return int(math.ceil(g)) if mse(int(math.ceil(g))) < mse(int(g)) else int(g)


GRID = [(d, eps) for d in (4, 16, 100, 1024) for eps in (0.5, 1.0, 2.0, 4.0, 8.0)]


@pytest.mark.parametrize("d,eps", GRID)
def test_rue_is_ue_at_its_tuned_keep_probability(d, eps):
    p, q = rue_pq(d, eps)
    tuned = ul.tune(ul.UE(d, eps))
    np.testing.assert_allclose(float(tuned.p), p, rtol=1e-9)
    keep, other = (float(v) for v in ul.UE(d, eps, p=p).probs())
    np.testing.assert_allclose([keep, other], [p, q], rtol=1e-6)
    uniform = np.full(d, 1.0 / d)
    np.testing.assert_allclose(float(ul.theory.mse(ul.UE(d, eps, p=p), uniform, 1, model="fixed")) / d,
                               fang_mse(p, q, d), rtol=1e-5)


@pytest.mark.parametrize("d,eps", GRID)
def test_rlh_is_olh_with_its_default_g(d, eps):
    g = rlh_g(d, eps)
    m = ul.OLH(d, eps)
    assert m.g == g
    e = math.exp(eps)
    uniform = np.full(d, 1.0 / d)
    np.testing.assert_allclose(float(ul.theory.mse(m, uniform, 1, model="fixed")) / d,
                               fang_mse(e / (e + g - 1), 1 / g, d), rtol=1e-5)
