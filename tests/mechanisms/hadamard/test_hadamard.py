"""Sylvester-Hadamard helpers: sizes, implicit entries, FWHT against the dense matrix, the signed sampler."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from uldp_jax import testing
from uldp_jax.mechanisms.hadamard import _hadamard


@pytest.mark.parametrize("d,K", [(1, 2), (2, 4), (3, 4), (4, 8), (7, 8), (8, 16), (43750, 65536)])
def test_hadamard_size(d, K):
    assert _hadamard.hadamard_size(d) == K


def test_hadamard_size_bad():
    with pytest.raises(ValueError, match="d"):
        _hadamard.hadamard_size(0)
    with pytest.raises(TypeError, match="d"):
        _hadamard.hadamard_size(2.5)
    with pytest.raises(ValueError, match="K"):
        _hadamard.hadamard_matrix(6)


def test_dense_is_sylvester():
    H = np.array([[1.0]])
    for _ in range(5):
        H = np.block([[H, H], [H, -H]])
    np.testing.assert_array_equal(_hadamard.hadamard_matrix(32), H)
    # Rows other than 0 are balanced, distinct rows are orthogonal (|S_i ∩ S_j| = K/4).
    assert np.all(H[1:].sum(axis=1) == 0)
    np.testing.assert_array_equal(H @ H.T, 32 * np.eye(32))


def test_implicit_sign_matches_dense():
    K = 64
    H = _hadamard.hadamard_matrix(K)
    i, j = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    np.testing.assert_array_equal(np.asarray(_hadamard.hadamard_sign(i, j)), H)


@pytest.mark.parametrize("K", [1, 2, 8, 256])
def test_fwht_equals_dense(K, x64):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, K))
    H = _hadamard.hadamard_matrix(K)
    np.testing.assert_allclose(np.asarray(_hadamard.fwht(x)), x @ H, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(np.asarray(_hadamard.fwht(x.T, axis=0)), (x @ H).T, rtol=1e-12, atol=1e-10)


def test_fwht_integer_exact_and_jit():
    counts = jnp.asarray(np.random.default_rng(1).integers(0, 10**6, size=1024), jnp.int32)
    H = _hadamard.hadamard_matrix(1024).astype(np.int64)
    out = jax.jit(_hadamard.fwht)(counts)
    assert out.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(out), np.asarray(counts, np.int64) @ H)


def test_fwht_bad_length():
    with pytest.raises(ValueError, match="power-of-two"):
        _hadamard.fwht(jnp.ones(6))


@pytest.mark.parametrize("row", [1, 5, 12, 15])
def test_signed_sampler_uniform_on_sets(key, row):
    """Draws land on the +1 set w.p. plus_prob and are uniform inside each set (chi-square, p > 1e-3)."""
    from uldp_jax.testing import chi_square

    K, n, plus = 16, 40000, 0.7
    y = np.asarray(_hadamard.sample_signed_index(key, row, K, plus, (n,)))
    H = _hadamard.hadamard_matrix(K)[row]
    probs = np.where(H > 0, plus, 1 - plus) / (K / 2)
    assert testing.fits(chi_square(np.bincount(y, minlength=K), probs))
    wrong = np.where(H > 0, 0.65, 0.35) / (K / 2)
    assert chi_square(np.bincount(y, minlength=K), wrong).pvalue < 1e-6
