"""Privacy matrices E of context-aware LDP (004 §3)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms._forms.partition import check_partition


def ldp_matrix(d: int, eps: float) -> np.ndarray:
    """E of classical eps-LDP: eps off the diagonal."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    eps = float(_validate.check_eps(eps))
    E = np.full((d, d), eps)
    np.fill_diagonal(E, 0.0)
    return E


def hlldp_matrix(d: int, sensitive: Sequence[int], eps: float) -> np.ndarray:
    """E of (A, eps)-HLLDP (004 Def 3): row x is eps for x in A, inf for x in B = X \\ A."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
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
    label = np.empty(d, dtype=np.int64)
    for i, b in enumerate(blocks):
        label[list(b)] = i
    E = np.where(label[:, None] == label[None, :], eps, np.inf)
    np.fill_diagonal(E, 0.0)
    return E


def uldp_matrix(d: int, sensitive: Sequence[int], eps: float) -> Any:
    """E of (X_S, Y_P, eps)-ULDP on protected outputs: eps for every pair (001 Def 2 (2))."""
    return ldp_matrix(d, eps)
