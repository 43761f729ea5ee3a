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


def narrow_rows(buf: np.ndarray, width: int, max_rows: int = 4096) -> np.ndarray:
    """The first ``width`` columns of a C-contiguous 2-D ``buf``, moved in place to a contiguous ``[rows, width]``
    view at ``buf``'s start (so an aligned ``buf`` stays aligned and ``jax.device_put`` still takes it without a
    copy); ``buf``'s contents are overwritten. Rows move forward in blocks whose source and destination ranges never
    overlap (a block from row ``r`` spans at most ``r (W - width) / width`` rows, up to ``max_rows``), so NumPy
    copies each block once with no temporary: no second buffer, where trimming into a new one doubled the peak."""
    rows, full = buf.shape
    if width >= full:
        return buf
    flat = buf.reshape(-1)
    r = 1  # row 0 is already in place
    while r < rows:
        b = min(rows - r, max_rows, max(1, r * (full - width) // width))
        flat[r * width:(r + b) * width].reshape(b, width)[:] = flat[r * full:(r + b) * full].reshape(b, full)[:, :width]
        r += b
    return flat[:rows * width].reshape(rows, width)
