"""``uldp_jax/theory/_murakami.py``: 001 worst-case distributions (Props 5, 6, 8 with
docs/errata.md#001-prop-8-uraps-worst-case-in-l1 threshold, 16, 17, 19)."""

import jax
import numpy as np
import pytest

from uldp_jax import theory as th


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _mask(d, s):
    return np.arange(d) < s


def _family(mask, alphas):
    s, nn = mask.sum(), (~mask).sum()
    return np.stack([np.where(mask, a / s, (1 - a) / nn) for a in alphas])


@pytest.mark.parametrize("d,s", [(8, 3), (12, 2), (6, 1), (8, 6)])  # (8, 6): s > N (docs/errata.md#001-prop-5-urrs-worst-case)
@pytest.mark.parametrize("eps", [0.2, 1.0, 2.5, 4.0, 7.0])
def test_urr_worst_cases(d, s, eps):
    mask = _mask(d, s)
    n = 100.0
    v1, p1 = th.urr_worst_l1(mask, eps, n)
    v2, p2 = th.urr_worst_l2(mask, eps, n)
    np.testing.assert_allclose(v1, float(th.urr_l1(p1, mask, eps, n)), rtol=1e-9)
    np.testing.assert_allclose(v2, float(th.urr_l2(p2, mask, eps, n)), rtol=1e-9)
    rng = np.random.default_rng(0)
    cands = np.concatenate([rng.dirichlet(np.ones(d) * 0.5, 300), _family(mask, np.linspace(0, 1, 401))])
    assert np.max(np.asarray(th.urr_l1(cands, mask, eps, n))) <= v1 * (1 + 1e-12)
    assert np.max(np.asarray(th.urr_l2(cands, mask, eps, n))) <= v2 * (1 + 1e-12)


@pytest.mark.parametrize("d,s", [(8, 3), (12, 2), (5, 2), (9, 6)])
def test_urap_prop8_corrected_threshold(d, s):
    mask = _mask(d, s)
    nn = d - s
    thr = th.urap_l1_threshold(nn)
    alphas = np.linspace(0, 1, 20001)
    for eps, expect_un in [(thr - 1e-3, True), (thr + 0.05, False), (0.5 * thr, True)]:
        vals = np.asarray(th.urap_l1(_family(mask, alphas), mask, eps, 1.0))
        assert (np.argmax(vals) == 0) == expect_un
        v, p = th.urap_worst_l1(mask, eps, 1.0)
        np.testing.assert_allclose(v, max(vals.max(), float(th.urap_l1(p, mask, eps, 1.0))), rtol=1e-7)
    # 001's stated condition eps < 2 ln(N/2 + 1) is sufficient but not tight.
    assert 2 * np.log(nn / 2 + 1) < thr


def test_urap_worst_l2():
    mask = _mask(10, 3)
    eps = 1.5
    v, p = th.urap_worst_l2(mask, eps, 50.0)
    np.testing.assert_allclose(v, float(th.urap_l2(p, mask, eps, 50.0)), rtol=1e-9)
    rng = np.random.default_rng(1)
    assert np.max(np.asarray(th.urap_l2(rng.dirichlet(np.ones(10), 500), mask, eps, 50.0))) <= v
    with pytest.raises(ValueError, match="eps"):
        th.urap_worst_l2(mask, 10.0, 50.0)
