"""Exact channels Q(y|x) of small mechanisms, as float64 NumPy (no JAX, no sampling)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


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
    if not hasattr(mech, "channel_matrix"):
        raise TypeError(f"Expected a uldp_jax mechanism, got {type(mech).__name__}.")
    Q, protected = mech.channel_matrix()
    Q = np.asarray(Q, dtype=np.float64)
    protected = np.asarray(protected, dtype=bool)
    if Q.ndim != 2 or protected.shape != (Q.shape[1],):
        raise AssertionError(f"{type(mech).__name__}.channel_matrix returned shapes {Q.shape}, {protected.shape}.")
    return Channel(Q, protected)
