"""Privacy matrices E of context-aware LDP (004 §3)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.hadamard._partition import check_partition

# Largest E built (d * d float64 entries, 128 MiB): the exact audit needs d^2 <= 2^24 as well.
MAX_MATRIX_ENTRIES = 2**24


def _check_matrix_size(d: int) -> None:
    """Refuses, before allocating, an E matrix of more than ``MAX_MATRIX_ENTRIES`` entries."""
    if d * d > MAX_MATRIX_ENTRIES:
        raise ValueError(f"Expected d={d} with d^2 <= 2^24: E would have {d * d} float64 entries "
                         f"({d * d * 8 / 2**30:.3g} GiB). Exact privacy matrices and audits are for small domains; "
                         "the guarantee of a large-domain mechanism is its privacy_spec() kind and eps.")


def ldp_matrix(d: int, eps: float) -> np.ndarray:
    """E of classical eps-LDP: eps off the diagonal."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    eps = float(_validate.check_eps(eps))
    _check_matrix_size(d)
    E = np.full((d, d), eps)
    np.fill_diagonal(E, 0.0)
    return E


def hlldp_matrix(d: int, sensitive: Sequence[int], eps: float) -> np.ndarray:
    """E of (A, eps)-HLLDP (004 Def 3): row x is eps for x in A, inf for x in B = X \\ A."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    _check_matrix_size(d)
    A = _validate.check_index_set("sensitive", sensitive, d)
    eps = float(_validate.check_eps(eps))
    E = np.full((d, d), np.inf)
    E[list(A), :] = eps
    np.fill_diagonal(E, 0.0)
    return E


def bsldp_matrix(blocks: Sequence[Sequence[int]], eps: float) -> np.ndarray:
    """E of (Pi, eps)-BSLDP (004 Def 4): eps inside a block, inf across blocks."""
    blocks, d = check_partition(blocks)
    eps = float(_validate.check_eps(eps))
    _check_matrix_size(d)
    label = np.empty(d, dtype=np.int64)
    for i, b in enumerate(blocks):
        label[list(b)] = i
    E = np.where(label[:, None] == label[None, :], eps, np.inf)
    np.fill_diagonal(E, 0.0)
    return E


def uldp_matrix(d: int, sensitive: Sequence[int], eps: float) -> Any:
    """E of (X_S, Y_P, eps)-ULDP on protected outputs: eps for every pair (001 Def 2 (2))."""
    return ldp_matrix(d, eps)
