"""``PrivacySpec`` (the guarantee a mechanism claims) and its constructors' helpers."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class PrivacySpec(NamedTuple):
    """The guarantee a mechanism claims, in the form the audit checks.

    Build it with ``PrivacySpec.ldp(d, eps)``, ``PrivacySpec.uldp(d, sensitive, eps)`` or
    ``PrivacySpec.eldp(E)``.

    Attributes:
      kind: ``"ldp"``, ``"uldp"``, ``"hlldp"``, ``"bsldp"`` or ``"eldp"``.
      E: float64 ``[d, d]`` privacy matrix (004 Def 2): on every protected output ``y``,
        ``Q(y|x) <= exp(E[x, x']) Q(y|x')``; ``inf`` means unconstrained.
      eps: the nominal epsilon (the largest finite off-diagonal value of ``E``).
      invertible_inputs: bool ``[d]`` for ULDP: inputs allowed to reach invertible (non-protected) outputs
        (``X_N``); ``None`` when every output is protected.
    """

    kind: str
    E: np.ndarray
    eps: float
    invertible_inputs: np.ndarray | None = None

    @classmethod
    def ldp(cls, d: int, eps: Any) -> PrivacySpec:
        """eps-LDP over ``d`` inputs: every output protected, ``E = eps`` off the diagonal."""
        eps = eps_value(eps)
        E = np.full((d, d), eps, dtype=np.float64)
        np.fill_diagonal(E, 0.0)
        return cls("ldp", E, eps, None)

    @classmethod
    def uldp(cls, d: int, sensitive: Any, eps: Any) -> PrivacySpec:
        """(X_S, Y_P, eps)-ULDP (001 Def 2): protected outputs hide every input; only ``X_N`` reaches ``Y_I``."""
        eps = eps_value(eps)
        E = np.full((d, d), eps, dtype=np.float64)
        np.fill_diagonal(E, 0.0)
        nonsens = np.ones(d, dtype=bool)
        nonsens[list(sensitive)] = False
        return cls("uldp", E, eps, nonsens)

    @classmethod
    def eldp(cls, E: Any, kind: str = "eldp", invertible_inputs: Any = None) -> PrivacySpec:
        """E-LDP (004 Def 2) for a privacy matrix ``E float[d, d]`` (``inf``: unconstrained pair)."""
        E = np.asarray(E, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != E.shape[1]:
            raise ValueError(f"Expected E to be a square [d, d] matrix, got shape {E.shape}.")
        off = E[~np.eye(E.shape[0], dtype=bool)]
        finite = off[np.isfinite(off)]
        eps = float(finite.max()) if finite.size else float("inf")
        inv = None if invertible_inputs is None else np.asarray(invertible_inputs, dtype=bool)
        return cls(kind, E, eps, inv)


def eps_value(eps: Any) -> float:
    """The concrete float value of an eps leaf (for channels and audits)."""
    arr = np.asarray(eps, dtype=np.float64)
    if arr.ndim != 0:
        raise ValueError(
            f"Expected a single mechanism, got eps with shape {arr.shape} (a batched grid); "
            "index it first, e.g. jax.tree.map(lambda v: v[i], mech)."
        )
    return float(arr)


def ldp_spec(d: int, eps: float) -> PrivacySpec:
    return PrivacySpec.ldp(d, eps)


def uldp_spec(d: int, sensitive: tuple[int, ...], eps: float) -> PrivacySpec:
    return PrivacySpec.uldp(d, sensitive, eps)


def sensitive_mask(d: int, sensitive: tuple[int, ...]) -> np.ndarray:
    """bool[d]: True on the sensitive items."""
    mask = np.zeros(d, dtype=bool)
    mask[list(sensitive)] = True
    return mask
