"""High-low HR (004 §5.1): literal eqs 15-16, report layout, HLLDP and ULDP audits, bad input."""

import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.hadamard import _hadamard, _forms as T


def literal_eqs_15_16(mech, counts):
    """004 eqs 15-16 with the dense H_S (rows x + 1, docs/errata.md#004-eq-13-the-hadamard-row): p(S_i), p([S]) and p(A) as in the paper."""
    e, S, s, n = np.exp(float(mech.eps)), mech.S, mech.s, counts.sum()
    H = _hadamard.hadamard_matrix(S)[1 : s + 1]
    p_Si = (H > 0).astype(np.float64) @ counts[:S] / n
    p_A = (e + 1) / (e - 1) * (counts[:S].sum() / n - 2 / (e + 1))
    est_a = 2 * (e + 1) / (e - 1) * (p_Si - 1 / (e + 1)) - p_A
    est_b = (e + 1) / (e - 1) * counts[S:] / n
    out = np.empty(mech.d)
    sens = np.zeros(mech.d, bool)
    sens[list(mech.sensitive)] = True
    out[sens], out[~sens] = est_a, est_b
    return out


@pytest.mark.parametrize("d,sens,eps", [(9, (1, 4, 6), 1.0), (12, (0, 11, 3, 5, 7), 0.4), (6, range(6), 2.0),
                                        (20, (19,), 1.0)])
def test_debias_equals_literal_eqs(d, sens, eps, x64):
    mech = ul.HighLowHR(d, sens, eps)
    counts = np.random.default_rng(d).integers(0, 40, size=mech.num_outputs)
    np.testing.assert_allclose(np.asarray(ul.mechanisms.core.debias(mech, jnp.asarray(counts), counts.sum())),
                               literal_eqs_15_16(mech, counts), rtol=1e-11, atol=1e-12)


def test_layout_S_t_and_comm():
    mech = ul.HighLowHR(12, (5, 2, 9), 1.0)
    assert mech.sensitive == (2, 5, 9) and mech.s == 3 and mech.S == 4 and mech.t == 9
    assert mech.num_outputs == 13 and ul.mechanisms.core.comm_bits(mech) == pytest.approx(np.log2(13))
    assert ul.HighLowHR(12, (0, 1, 2, 3), 1.0).S == 8  # smallest power of two > s
    Q, protected = mech.channel_matrix()
    nonsens = [x for x in range(12) if x not in mech.sensitive]
    for j, x in enumerate(nonsens):  # the j-th non-sensitive item owns output S + j
        assert Q[x, mech.S + j] == pytest.approx(np.tanh(0.5))
        assert Q[x, : mech.S] == pytest.approx(np.full(4, 2 / (4 * (np.e + 1))))
    assert np.all(Q[list(mech.sensitive), mech.S :] == 0)
    np.testing.assert_array_equal(protected, np.arange(13) < 4)


def test_hlldp_and_uldp_tight():
    mech = ul.HighLowHR(10, (1, 3, 8), 1.5)
    hl = ul.audit(mech)
    assert hl.ok and hl.tight and hl.kind == "hlldp" and hl.eps == pytest.approx(1.5)
    assert hl.eps_ldp == np.inf  # not eps-LDP: outputs S + j reveal non-sensitive inputs
    assert ul.audit(mech, E=ul.hlldp_matrix(10, (1, 3, 8), 1.5)).ok
    assert not ul.audit(mech, E=ul.ldp_matrix(10, 1.5)).ok
    assert not ul.audit(mech, E=ul.hlldp_matrix(10, (1, 3, 8), 1.4)).ok
    u = ul.audit(mech.uldp_view())
    assert u.ok and u.tight and u.kind == "uldp" and u.invertible_ok
    assert u.num_protected == mech.S and u.num_invertible == mech.t
    # A wrong sensitive set (an item of B declared sensitive) fails the HLLDP audit.
    assert not ul.audit(mech, E=ul.hlldp_matrix(10, (1, 3, 8, 0), 1.5)).ok


def test_literal_eq13_row_x_is_not_a_channel():
    """docs/errata.md: read literally, eq 13 gives item 1 the all-ones row and its probabilities sum to 2e/(e+1) != 1."""
    S, e = 4, np.e
    row0 = _hadamard.hadamard_matrix(S)[0]
    total = np.where(row0 > 0, 2 * e / (S * (e + 1)), 2 / (S * (e + 1))).sum()
    assert total == pytest.approx(2 * e / (e + 1)) and abs(total - 1) > 0.1


def test_prop4_bound_holds(x64):
    """Prop 4 (C.2, eq 26): n E l2^2 <= 3 s R^2 + R; holds and is loose (docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms)."""
    rng = np.random.default_rng(0)
    for eps in (0.1, 1.0, 5.0):
        R = (np.exp(eps) + 1) / np.expm1(eps)
        for _ in range(5):
            p = rng.dirichlet(np.ones(15) * 0.3)
            assert float(T.highlow_hr_l2_risk(eps, p, (0, 4, 9, 12))) <= 3 * 4 * R**2 + R


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(d=1, sensitive=(0,), eps=1.0), ValueError, "d"),
    (dict(d=5, sensitive=(), eps=1.0), ValueError, "sensitive"),
    (dict(d=5, sensitive=(5,), eps=1.0), ValueError, "sensitive"),
    (dict(d=5, sensitive=(1, 1), eps=1.0), ValueError, "sensitive"),
    (dict(d=5, sensitive=(0.5,), eps=1.0), TypeError, "sensitive"),
    (dict(d=5, sensitive="ab", eps=1.0), TypeError, "sensitive"),
    (dict(d=5, sensitive=(1,), eps=-0.1), ValueError, "eps"),
])
def test_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ul.HighLowHR(**kwargs)
