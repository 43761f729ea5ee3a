"""``uldp_jax/mechanisms/hadamard/_matrices.py``: the privacy matrices E of context-aware LDP: the ULDP matrix is eps
off the diagonal, and uRR meets ULDP on its protected outputs but not E-LDP on every output."""

import numpy as np

import uldp_jax as ul


def test_uldp_matrix_is_eps_off_the_diagonal_and_urr_meets_it():
    E = ul.privacy.uldp_matrix(4, [1, 2], 0.7)
    want = np.array([[0, 0.7, 0.7, 0.7], [0.7, 0, 0.7, 0.7], [0.7, 0.7, 0, 0.7], [0.7, 0.7, 0.7, 0]])
    np.testing.assert_array_equal(E, want)
    # uRR meets it on its protected outputs (its own ULDP audit) and E-LDP on every output fails (X_N invertible)
    assert ul.audit(ul.URR(4, [1, 2], 0.7)).ok
    assert not ul.audit(ul.URR(4, [1, 2], 0.7), E=E).ok
