"""Host buffers that JAX takes without a copy (the compact reports of ``_compact`` and EM's packed reports)."""

from __future__ import annotations

from typing import Any

import numpy as np


def host_array(shape: tuple, dtype: Any, fill: Any = None) -> np.ndarray:
    """An uninitialised (or ``fill``-ed) NumPy array whose data start on a 64-byte boundary. ``jax.device_put`` of
    such an array on the CPU backend aliases it instead of copying (NumPy's own 16-byte alignment makes it copy),
    so the packed reports never exist twice: at bench_em's RAPPOR a 347 MB and a 309 MB transient copy (JAX keeps
    the array alive and read-only; the packing code writes it only before the ``device_put``)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start:start + size].view(dtype).reshape(shape)
    if fill is not None:
        out.fill(fill)
    return out
