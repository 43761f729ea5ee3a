"""Exact channels Q(y|x) of small mechanisms, as float64 NumPy (evaluated with x64 enabled locally; no sampling).

``channel`` checks what a mechanism hands it before anything reads it: a channel that is not a probability
matrix (wrong shape, a NaN, a negative entry, a row that does not sum to 1 within ``ROW_SUM_ATOL``) or whose
protected mask is not a bool vector over the outputs is refused with a ``ValueError`` naming the defect, so
no audit can pass on it. Sizes are checked before the mechanism allocates anything.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _grid_check, _records, _report_space, _reports
from uldp_jax.mechanisms.core._base import Mechanism

# Largest |sum_y Q(y|x) - 1| accepted. Exact float64 channels are accurate to ~1e-15 per entry; summing
# up to 2**24 entries pairwise (NumPy) stays far below this.
ROW_SUM_ATOL = 1e-9
# Largest total number of entries of the channels of a grid (512 MiB of float64).
MAX_GRID_ENTRIES = 2**26


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


def expected_columns(mech: Any) -> int | None:
    """The channel's number of columns when the report kind fixes it (items, bit vectors), else None."""
    kind = mech.report_kind
    try:
        if kind == "item":
            return int(mech.num_outputs)
        if kind == "bits":
            return 1 << int(_report_space.num_stats(mech))  # exact int; a shift (2 ** d by pow: 10 s at d = 1e9)
    except (AttributeError, TypeError, ValueError):
        return None
    return None


def num_inputs(mech: Any) -> int:
    """The channel's rows: ``likelihood().inputs`` (``d`` unless a mechanism says otherwise, e.g. a PUM)."""
    return int(_records.likelihood_of(mech).inputs)


def check_size(mech: Any) -> None:
    """Refuses (``ValueError``) a channel larger than ``MAX_CHANNEL_ENTRIES``, before anything is allocated.

    Item and bit-vector mechanisms are sized here from ``d`` and their report space; other report kinds
    size themselves in ``channel_matrix`` before allocating.
    """
    cols = expected_columns(mech)
    _reports.check_channel_size(type(mech).__name__, num_inputs(mech), 2 if cols is None else cols)


def validate(Q: Any, protected: Any, rows: int | None, name: str = "mechanism") -> Channel:
    """Checks that ``(Q, protected)`` is an exact channel; returns it as float64/bool arrays.

    Raises:
      ValueError: naming the defect: shape, a non-finite or negative entry, a row sum off 1 by more than
        ``ROW_SUM_ATOL``, or a protected mask that is not a bool vector with one entry per output.
    """
    Q = np.asarray(Q)
    if Q.dtype.kind not in "fiu":
        raise ValueError(f"{name}.channel_matrix returned Q of dtype {Q.dtype}, expected real numbers.")
    Q = Q.astype(np.float64, copy=False)
    if Q.ndim != 2 or Q.shape[1] < 1:
        raise ValueError(f"{name}.channel_matrix returned Q with shape {Q.shape}, expected [d, m].")
    if rows is not None and Q.shape[0] != rows:
        raise ValueError(f"{name}.channel_matrix returned {Q.shape[0]} rows, expected one per input ({rows}).")
    if not np.all(np.isfinite(Q)):
        bad = np.argwhere(~np.isfinite(Q))[0]
        raise ValueError(f"{name}.channel_matrix returned a non-finite entry Q[{bad[0]}, {bad[1]}] = "
                         f"{Q[tuple(bad)]}; not a probability matrix.")
    if np.any(Q < 0):
        bad = np.argwhere(Q < 0)[0]
        raise ValueError(f"{name}.channel_matrix returned a negative entry Q[{bad[0]}, {bad[1]}] = "
                         f"{Q[tuple(bad)]:.3g}; not a probability matrix.")
    err = np.abs(Q.sum(axis=1) - 1.0)
    if np.any(err > ROW_SUM_ATOL):
        x = int(np.argmax(err))
        raise ValueError(f"{name}.channel_matrix returned row {x} summing to {Q[x].sum():.17g}, not 1 within "
                         f"{ROW_SUM_ATOL:g}; not a probability matrix (eps outside the exact range?).")
    p = np.asarray(protected)
    if p.dtype != np.bool_:
        raise ValueError(f"{name}.channel_matrix returned a protected mask of dtype {p.dtype}, expected bool.")
    if p.shape != (Q.shape[1],):
        raise ValueError(f"{name}.channel_matrix returned a protected mask of shape {p.shape}, expected "
                         f"({Q.shape[1]},): one entry per output.")
    return Channel(Q, p.copy())


def channel(mech: Mechanism) -> Channel:
    """Returns the exact channel of ``mech`` (float64) with its protected-output mask, after checking it.

    Raises:
      TypeError: if ``mech`` is not a mechanism of this library.
      ValueError: if the channel is too large to enumerate (checked before allocating), or what the mechanism
        returns is not a probability matrix with a protected mask over its outputs (see ``validate``).

    A ``jax.vmap``-built grid (``grid_shape(mech)`` non-empty) gives ``Q [*shape, d, m]`` and
    ``protected [*shape, m]``, each grid point checked on its own.
    """
    if not isinstance(mech, Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    _grid_check.validate_grid(mech)
    shape = _grid_check.grid_shape(mech)
    if shape:
        cols = expected_columns(mech)
        total = int(np.prod(shape)) * num_inputs(mech) * (2 if cols is None else cols)
        if total > MAX_GRID_ENTRIES:
            raise ValueError(f"channel of a grid of {int(np.prod(shape))} {type(mech).__name__}(d={mech.d}): "
                             f"{_reports.size_text(total)} float64 entries in all, more than {MAX_GRID_ENTRIES} (2^26); "
                             "take the channel of fewer grid points at a time (jax.tree.map(lambda v: v[i], mech)).")
        chans = [channel(m) for m in _reports.unbatch(mech)]
        return Channel(np.stack([c.Q for c in chans]).reshape(shape + chans[0].Q.shape),
                       np.stack([c.protected for c in chans]).reshape(shape + chans[0].protected.shape))
    check_size(mech)
    rows = num_inputs(mech)  # one row per input (a PUM: X plus its num_tags bot items)
    with jax.enable_x64(True):
        Q, protected = as_float64(mech).channel_matrix()
        Q, protected = np.asarray(Q), np.asarray(protected)
    return validate(Q, protected, rows, type(mech).__name__)


def log_channel_matrix(mech: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(log Q, protected)`` from the mechanism's ``likelihood().log_channel`` (float64), or ``None`` without
    one."""
    with jax.enable_x64(True):
        log_channel = _records.likelihood_of(as_float64(mech)).log_channel
        if log_channel is None:
            return None
        logq, protected = log_channel()
        return np.asarray(logq, np.float64), np.asarray(protected)


def as_float64(mech: Any) -> Any:
    """``mech`` with every floating leaf cast to float64 (call under ``jax.enable_x64(True)``)."""

    def cast(v):
        if isinstance(v, jax.core.Tracer):
            return v
        arr = np.asarray(v)
        return jnp.asarray(arr, jnp.float64) if np.issubdtype(arr.dtype, np.floating) else v

    return jax.tree.map(cast, mech)
