"""``uldp_jax/mechanisms/hadamard/_general_forms.py``: the general Hadamard response's layout (the authors' block rule,
as pure-LDP ships it) and its default number of blocks, which minimises the exact uniform risk over powers of two."""

import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.hadamard import _general_forms as forms


def test_authors_rule_and_default_blocks():
    """authors_blocks: B = 2^floor(log2 min(2d, e^eps)), b = 2^ceil(log2(d/B + 1)) (the authors' code, shipped by
    pure-LDP); the default minimises the exact uniform risk over powers of two, so it is never worse there."""
    for d, eps, B, b in [(16, 4.0, 32, 2), (16, 2.0, 4, 8), (16, 1.0, 2, 16), (16, 0.5, 1, 32), (100, 6.0, 128, 2),
                         (1000, 6.0, 256, 8), (1000, 4.0, 32, 64)]:
        mech = ul.HadamardResponse(d, eps, num_blocks=forms.authors_blocks(d, eps))
        assert (mech.num_blocks, mech.b) == (B, b), (d, eps)
        assert mech.b == 2 ** int(np.ceil(np.log2(d / B + 1)))
        assert mech.num_outputs == B * b and ul.mechanisms.core.comm_bits(mech) == np.log2(B * b)
        best = ul.HadamardResponse(d, eps)
        p = jnp.full(d, 1.0 / d, jnp.float32)
        r_best = float(forms.l2_risk(eps, p, best.num_blocks))
        assert r_best == pytest.approx(forms.uniform_risk(d, eps, best.num_blocks), rel=1e-5)
        for other in (1, B):
            assert r_best <= float(forms.l2_risk(eps, p, other)) * (1 + 1e-6)
    assert ul.HadamardResponse(16, 1.0).num_blocks == 1  # one block (= HR) beats the authors' B = 2 at eps = 1
    assert ul.HadamardResponse(16, 4.0).num_blocks == 16  # one item per block, no empty blocks (authors: 32)
