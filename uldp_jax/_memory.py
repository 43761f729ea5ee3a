"""Refusal before allocation: the working memory of an ``aggregate`` / ``estimate`` / EM call from static shapes.

A leaf module (the mechanism protocol and ``_sizing``) shared by ``_api`` and ``estimation``. Each entry sizes
what it will hold at once (the ``int32[num_stats]`` statistic, its float vectors, EM's ``float[d]`` vectors and,
for dense bit reports, EM's per-entry temporaries) from the mechanism's sizes and the reports' shapes only, and
raises a ``ValueError`` above ``sizing().call_memory_bytes`` before any array of that size exists. The counts are
upper bounds (``Sizing``'s ``stat_vectors``, ``em_vectors``, ``dense_em_entry_bytes``).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _sizing
from uldp_jax.mechanisms.core import likelihood_of, num_stats


def _float_bytes() -> int:
    """Bytes of the default float (float64 under x64, else float32), without allocating anything."""
    return int(np.dtype(jax.dtypes.canonicalize_dtype(jnp.float64)).itemsize)


def _dense_bit_entries(mech: Any, ys: Any) -> int:
    """Entries of dense ``bool[n, width]`` reports of a product-Bernoulli model (RAPPOR/UE, uRAP: EM checks and
    packs them); 0 for every other report form (item reports, compact or packed reports, support lists) and for
    per-report likelihoods (sized by EM's ``likelihood_cells``). Read from the shape only."""
    if mech.report_kind != "bits" or likelihood_of(mech).product is None:
        return 0
    if not hasattr(ys, "shape") or not hasattr(ys, "dtype"):
        return 0
    return math.prod(int(s) for s in np.shape(ys)) if np.ndim(ys) >= 2 else 0


def call_bytes(mech: Any, ys: Any = None, *, stage: str = "aggregate") -> int:
    """Upper bound of the bytes a call of ``stage`` allocates beyond its inputs: "aggregate" (the int32 statistic),
    "estimate" (plus ``stat_vectors`` float vectors of it) or "em" (``em_vectors`` float[d] vectors, plus
    ``dense_em_entry_bytes`` per entry of dense bit reports ``ys``)."""
    s = _sizing.sizing()
    m = max(int(num_stats(mech)), 1)
    nbytes = 4 * m
    if stage in ("estimate", "em"):
        nbytes += s.stat_vectors * _float_bytes() * m
    if stage == "em":
        nbytes += s.em_vectors * _float_bytes() * int(mech.d)
        nbytes += s.dense_em_entry_bytes * _dense_bit_entries(mech, ys)
    return nbytes


def check_call_memory(what: str, mech: Any, ys: Any = None, *, stage: str = "aggregate") -> None:
    """Refuses ``what`` (e.g. ``"ul.estimate(..., method='emp')"``) when ``call_bytes`` exceeds
    ``sizing().call_memory_bytes``; the message names the argument, the size and what to change."""
    budget = _sizing.sizing().call_memory_bytes
    nbytes = call_bytes(mech, ys, stage=stage)
    if nbytes <= budget:
        return
    entries = _dense_bit_entries(mech, ys) if stage == "em" else 0
    arg = (f"mech={type(mech).__name__}(d={mech.d}) and ys of shape {tuple(np.shape(ys))}" if entries else
           f"mech={type(mech).__name__}(d={mech.d}, num_stats={num_stats(mech)})")
    fix = ("fewer reports per call (a random subset) or compact reports (ul.to_compact)" if entries else
           "a smaller domain d")
    raise ValueError(
        f"{what} with {arg} would allocate about {nbytes / 2**30:.3g} GiB of working memory, more than the "
        f"budget of {budget / 2**30:.3g} GiB (sizing().call_memory_bytes). Use {fix}, "
        "or raise the budget with uldp_jax._sizing.SIZING_OVERRIDE['call_memory_bytes'].")
