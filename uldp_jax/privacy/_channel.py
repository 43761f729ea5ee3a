"""Exact channels Q(y|x) of small mechanisms, as float64 NumPy (evaluated with x64 enabled locally; no sampling)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms._base import Mechanism


class Channel(NamedTuple):
    """An exact channel.

    Attributes:
      Q: float64 ``[d, m]``; row ``x`` is the output distribution of input ``x``. Where reports are items
        (GRR, uRR, ...), column ``y`` is item ``y``; for bit-vector reports column ``y`` is the integer whose
        bit ``j`` is report bit ``j``; other report spaces document their column order.
      protected: bool ``[m]``; True on protected outputs ``Y_P`` (all outputs for LDP mechanisms).
    """

    Q: np.ndarray
    protected: np.ndarray


def channel(mech: Any) -> Channel:
    """Returns the exact channel of ``mech`` (float64) with its protected-output mask.

    Raises:
      TypeError: if ``mech`` is not a mechanism of this library.
      ValueError: if the channel is too large to enumerate, or ``mech`` is a batched grid.
    """
    if not isinstance(mech, Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    with jax.enable_x64(True):
        Q, protected = as_float64(mech).channel_matrix()
        Q = np.asarray(Q, dtype=np.float64)
        protected = np.asarray(protected, dtype=bool)
    if Q.ndim != 2 or protected.shape != (Q.shape[1],):
        raise AssertionError(f"{type(mech).__name__}.channel_matrix returned shapes {Q.shape}, {protected.shape}.")
    return Channel(Q, protected)


def as_float64(mech: Any) -> Any:
    """``mech`` with every floating leaf cast to float64 (call under ``jax.enable_x64(True)``)."""

    def cast(v):
        if isinstance(v, jax.core.Tracer):
            return v
        arr = np.asarray(v)
        return jnp.asarray(arr, jnp.float64) if np.issubdtype(arr.dtype, np.floating) else v

    return jax.tree.map(cast, mech)
