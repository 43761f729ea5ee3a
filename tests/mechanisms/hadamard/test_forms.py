"""Exact risks and sample-complexity helpers of the HR family (uldp_jax.mechanisms.hadamard._forms; docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms, 004 Thms 3-4)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.mechanisms.hadamard import _forms as T


def R(eps):
    return (np.exp(eps) + 1) / np.expm1(eps)


def test_spec_closed_forms(x64):
    """The per-item sums equal docs/errata.md closed forms exactly."""
    rng = np.random.default_rng(0)
    eps, e = 0.9, np.exp(0.9)
    p = rng.dirichlet(np.ones(12))
    A = (0, 5, 7)
    pA = p[list(A)].sum()
    hl = 3 * R(eps) * (2 + (e - 1) * pA) / (e - 1) + R(eps) * (1 - pA) - (p**2).sum()
    assert float(T.highlow_hr_l2_risk(eps, p, A)) == pytest.approx(hl, rel=1e-12)
    blocks = [[0, 1, 2], [3, 4, 5, 6, 7], [8, 9, 10, 11]]
    blk = R(eps) ** 2 * sum(len(b) * p[b].sum() for b in blocks) - (p**2).sum()
    assert float(T.block_hr_l2_risk(eps, p, blocks)) == pytest.approx(blk, rel=1e-12)
    assert float(T.hr_l2_risk(eps, p)) == pytest.approx(R(eps) ** 2 * 12 - (p**2).sum(), rel=1e-12)
    fixed = float(T.hr_l2_risk(eps, p, "fixed"))
    assert fixed == pytest.approx(R(eps) ** 2 * 12 - 1.0, rel=1e-12)


def test_block_k_is_item_count_not_hadamard_size(x64, moments):
    """In R^2 sum_j k_j p(X_j), k_j = |X_j|; reading k_j as K_j (Hadamard size) disagrees with the channel."""
    blocks = [[0, 1, 2, 3, 4], [5, 6], [7, 8, 9]]  # k = 5, 2, 3; K = 8, 4, 4
    mech = ul.BlockHR(blocks, 1.0)
    p = np.random.default_rng(1).dirichlet(np.ones(10))
    _, cov, _, _ = moments(mech, p)
    pb = np.array([p[b].sum() for b in blocks])
    with_k = R(1.0) ** 2 * np.sum(mech.block_sizes * pb) - (p**2).sum()
    with_K = R(1.0) ** 2 * np.sum(mech.hadamard_sizes * pb) - (p**2).sum()
    assert np.trace(cov) == pytest.approx(with_k, rel=1e-10)
    assert abs(np.trace(cov) - with_K) > 0.2 * np.trace(cov)


def test_prop5_bound_is_loose_by_12x(x64):
    """Prop 5: n E l2^2 <= 12 max_j k_j R^2; the exact risk is at most 1/12 of it (docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms)."""
    rng = np.random.default_rng(2)
    blocks = [list(range(6)), list(range(6, 10)), list(range(10, 20))]
    for eps in (0.2, 1.0, 4.0):
        for _ in range(5):
            p = rng.dirichlet(np.full(20, 0.5))
            exact = float(T.block_hr_l2_risk(eps, p, blocks))
            bound = 12 * max(len(b) for b in blocks) * R(eps) ** 2
            assert exact <= bound / 12  # the bound holds with a factor >= 12 to spare


def test_users_for_tv_is_sufficient(key):
    """At n = users_for_tv(alpha, p) the Monte Carlo mean TV is <= alpha (and not absurdly loose)."""
    alpha, eps = 0.1, 1.0
    p = np.random.default_rng(3).dirichlet(np.ones(8))
    for mech, n in ((ul.HighLowHR(8, (2, 5), eps), T.highlow_hr_users_for_tv(alpha, eps, 8, (2, 5), p)),):
        n = int(np.ceil(float(n)))
        res = ul.simulate(key, mech, p=p, n=n, reps=40)
        tv = np.asarray(ul.metrics.tv(res.estimates["emp"], jnp.asarray(p, jnp.float32)), np.float64)
        se, dof = tv.std(ddof=1) / np.sqrt(tv.size), tv.size - 1  # from the 40 repetitions (t test)
        # mean TV <= alpha and > alpha / 2 (one-sided each, per-check level)
        assert testing.at_most(tv.mean(), alpha, se, dof=dof), (type(mech).__name__, n, tv.mean(), se)
        assert testing.at_most(alpha / 2, tv.mean(), se, dof=dof), (type(mech).__name__, n, tv.mean(), se)


def test_minimax_bounds_dominate_and_match_theorem_orders(x64):
    rng = np.random.default_rng(4)
    blocks = [list(range(10)), list(range(10, 40)), list(range(40, 50))]
    for _ in range(5):
        p = rng.dirichlet(np.full(50, 0.3))
        assert T.hr_users_for_tv(0.1, 1.0, 50) >= T.hr_users_for_tv(0.1, 1.0, 50, p)
        assert T.block_hr_users_for_tv(0.1, 1.0, blocks) >= T.block_hr_users_for_tv(0.1, 1.0, blocks, p)
        assert (T.highlow_hr_users_for_tv(0.1, 1.0, 50, range(5))
                >= T.highlow_hr_users_for_tv(0.1, 1.0, 50, range(5), p))
    # Small eps: R ~ 2/eps, so the explicit bounds approach the Theorem 3/4 orders.
    eps = 1e-3
    ratio4 = T.block_hr_users_for_tv(0.1, eps, blocks) / T.theorem4_rate(0.1, eps, [10, 30, 10])
    assert float(ratio4) == pytest.approx(1.0, rel=1e-3)
    ratio3 = T.highlow_hr_users_for_tv(0.1, eps, 50, range(5)) / T.theorem3_rate(0.1, eps, 50, 5)
    assert 0.9 < float(ratio3) < 1.1


def test_differentiable_in_eps():
    p = jnp.ones(6) / 6
    for f in (lambda e: T.hr_l2_risk(e, p), lambda e: T.highlow_hr_l2_risk(e, p, (0, 1)),
              lambda e: T.block_hr_l2_risk(e, p, [[0, 1, 2], [3, 4, 5]])):
        g = jax.grad(f)(1.0)
        assert np.isfinite(float(g)) and float(g) < 0  # more budget, less error


def test_bad_input():
    p = np.ones(4) / 4
    with pytest.raises(ValueError, match="model"):
        T.hr_l2_risk(1.0, p, model="other")
    with pytest.raises(ValueError, match="alpha"):
        T.hr_users_for_tv(0.0, 1.0, 4)
    with pytest.raises(ValueError, match="alpha"):
        T.block_hr_users_for_tv(-1.0, 1.0, [[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="p"):
        T.block_hr_l2_risk(1.0, np.ones(5) / 5, [[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="sensitive"):
        T.highlow_hr_l2_risk(1.0, p, (4,))
    with pytest.raises(ValueError, match="blocks"):
        T.block_hr_l2_risk(1.0, p, [[0, 1], [1, 2, 3]])


@pytest.mark.parametrize("model", ["iid", "fixed"])
@pytest.mark.slow
def test_agrees_with_generic_exact_mse(model, x64):
    """Closed forms vs ``ul.theory.exact_mse`` (channel + debias matrix, written independently)."""
    from uldp_jax import theory

    p = np.random.default_rng(5).dirichlet(np.ones(9))
    blocks = [[0, 4], [1, 2, 3], [5, 6, 7, 8]]
    for mech, closed in ((ul.HR(9, 0.7), T.hr_l2_risk(0.7, p, model)),
                         (ul.HighLowHR(9, (2, 6, 7), 0.7), T.highlow_hr_l2_risk(0.7, p, (2, 6, 7), model)),
                         (ul.BlockHR(blocks, 0.7), T.block_hr_l2_risk(0.7, p, blocks, model))):
        assert float(closed) / 1000 == pytest.approx(theory.exact_mse(mech, p, 1000, model), rel=1e-9)
