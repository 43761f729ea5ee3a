"""Block HR (004 §6.1): literal eq 19, report layout, BSLDP but not eps-LDP across blocks, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.hadamard import _hadamard


def literal_eq19(mech, counts):
    """Eq 19 with dense per-block H: p_x = 2R (p(S_x) - p(X_j)/2), outputs (j, i) at offset_j + i."""
    e, n = np.exp(float(mech.eps)), counts.sum()
    out = np.empty(mech.d)
    off = 0
    for b in mech.blocks:
        K = _hadamard.hadamard_size(len(b))
        c = counts[off : off + K]
        H = _hadamard.hadamard_matrix(K)[1 : len(b) + 1]
        out[list(b)] = 2 * (e + 1) / (e - 1) * ((H > 0) @ c / n - c.sum() / n / 2)
        off += K
    return out


def random_partition(d, seed):
    rng = np.random.default_rng(seed)
    perm, blocks, i = rng.permutation(d), [], 0
    while i < d:
        k = int(rng.integers(1, 10))
        blocks.append(perm[i : i + k].tolist())
        i += k
    return blocks


@pytest.mark.parametrize("seed", [0, 1])
def test_debias_equals_literal_eq19(seed, x64):
    mech = ul.BlockHR(random_partition(40, seed), 0.9)  # sizes 1..9: Hadamard sizes 2, 4, 8, 16
    assert len(set(mech.hadamard_sizes.tolist())) >= 3
    counts = np.random.default_rng(seed).integers(0, 30, size=mech.num_outputs)
    debias = jax.jit(lambda s, n: ul.mechanisms.core.debias(mech, s, n))
    np.testing.assert_allclose(np.asarray(debias(jnp.asarray(counts), counts.sum())),
                               literal_eq19(mech, counts), rtol=1e-11, atol=1e-12)


def test_report_space_and_column_order():
    mech = ul.BlockHR([[4, 0], [1, 2, 3]], 1.0)
    assert mech.blocks == ((0, 4), (1, 2, 3)) and mech.d == 5 and mech.m == 2
    np.testing.assert_array_equal(mech.block_sizes, [2, 3])
    np.testing.assert_array_equal(mech.hadamard_sizes, [4, 4])
    assert mech.num_outputs == 8 and ul.mechanisms.core.comm_bits(mech) == 3.0
    Q = ul.channel(mech).Q
    assert np.all(Q[[0, 4], 4:] == 0) and np.all(Q[[1, 2, 3], :4] == 0)  # block j owns [offset_j, offset_j + K_j)
    np.testing.assert_allclose(Q[:, :4].sum(axis=1), [1, 0, 0, 0, 1])


def test_single_block_is_hr():
    np.testing.assert_allclose(ul.channel(ul.BlockHR([range(7)], 1.2)).Q, ul.channel(ul.HR(7, 1.2)).Q)
    assert ul.audit(ul.BlockHR([range(7)], 1.2)).eps_ldp == pytest.approx(1.2)


def test_bsldp_tight_not_ldp_across_blocks():
    blocks = [[0, 3], [1, 2, 4, 5, 6], [7]]
    mech = ul.BlockHR(blocks, 1.0)
    rep = ul.audit(mech)
    assert rep.ok and rep.tight and rep.kind == "bsldp" and rep.eps == pytest.approx(1.0)
    assert rep.eps_ldp == np.inf
    assert ul.audit(mech, E=ul.bsldp_matrix(blocks, 1.0)).ok
    assert not ul.audit(mech, E=ul.ldp_matrix(8, 1.0)).ok
    assert not ul.audit(mech, E=ul.bsldp_matrix([[0, 3, 1], [2, 4, 5, 6], [7]], 1.0)).ok  # other partition


@pytest.mark.parametrize("blocks,exc,match", [
    ([[0, 1], [1, 2]], ValueError, "disjoint"),
    ([[0, 1], [3]], ValueError, "missing"),
    ([[0, 1], []], ValueError, "blocks"),
    ([], ValueError, "blocks"),
    ([[0]], ValueError, "blocks"),
    ([[0, -1]], ValueError, "blocks"),
    ([[0, 1.0]], TypeError, "blocks"),
    ("ab", ValueError, "blocks"),
    ([3, 4], TypeError, "blocks"),
])
def test_bad_blocks(blocks, exc, match):
    with pytest.raises(exc, match=match):
        ul.BlockHR(blocks, 1.0)


def test_bad_eps():
    with pytest.raises(ValueError, match="eps"):
        ul.BlockHR([[0, 1]], 0.0)
