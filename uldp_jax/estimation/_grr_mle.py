r"""The closed-form maximum-likelihood estimate of GRR (a water-filling rule), an exact oracle for EM.

GRR's report histogram ``c`` (``n`` reports) has log-likelihood :math:`\sum_y c_y \log(q + a\pi_y)` with
``a = keep - other``, ``q = other``: concave on the simplex, so the KKT conditions characterise its maximiser.
With :math:`r = q/a` they give :math:`\pi_y = \max(0, c_y/\lambda - r)`, the water level :math:`\lambda` set by
:math:`\sum_y \pi_y = 1`: on the ``k`` largest counts (sorted, prefix sum :math:`S_k`)
:math:`\lambda_k = S_k/(1 + k r)`, and the active set is the largest ``k`` with :math:`c_{(k)} > r\lambda_k`.
When every item is active, :math:`\lambda = n a` and the MLE is the unbiased estimate :math:`(c/n - q)/a`.

References:
  Pinzón, Palamidessi, Piantanida, Valencia et al. (2026), the closed-form GRR MLE; multi-freq-ldpy
  ``estimators/Histogram_estimator.py::MLE`` (later releases than 0.2.5); the water-filling form here is derived
  from the KKT conditions above.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms import Mechanism


def water_filling(counts: jax.Array, ratio: Any) -> jax.Array:
    r"""The maximiser of :math:`\sum_y c_y \log(r + \pi_y)` on the simplex: :math:`\max(0, c/\lambda - r)`.

    Args:
      counts: ``float[..., m]`` non-negative counts (not all zero).
      ratio: ``r > 0`` (GRR: ``other / (keep - other)``), broadcast against the leading axes.

    Returns:
      ``float[..., m]`` on the simplex. Traceable, vmappable; O(m log m) (one sort).
    """
    c = jnp.asarray(counts)
    r = jnp.asarray(ratio, c.dtype)[..., None]
    srt = -jnp.sort(-c, axis=-1)  # descending
    k = jnp.arange(1, c.shape[-1] + 1, dtype=c.dtype)
    level = jnp.cumsum(srt, axis=-1) / (1.0 + k * r)
    active = srt > r * level  # a prefix: true up to the active set's size
    size = jnp.maximum(jnp.sum(active, axis=-1, keepdims=True), 1)
    lam = jnp.take_along_axis(level, size - 1, axis=-1)
    return jnp.maximum(c / lam - r, 0.0)


def grr_mle(mech: Mechanism, stats: Any, n: Any = None) -> jax.Array:
    """The exact MLE of ``p`` on the simplex from a GRR report histogram (``ul.aggregate(mech, ys)``).

    Args:
      mech: GRR, or any item-report mechanism with GRR's channel ``Q = a I + b 1 1^T`` (its ``estimator().affine``
        constant over items with ``a + d b = 1``: keep-or-uniform), e.g. README's ``KeepRR``.
      stats: ``int[..., d]`` report histogram.
      n: optional number of reports (checked against ``stats`` when concrete; the MLE needs only ``stats``).

    Returns:
      ``float[..., d]``: the MLE (the point EM converges to; ``ul.estimate(mech, ys, "em")``).

    Raises:
      TypeError: ``mech`` does not have GRR's channel.
      ValueError: ``stats`` of the wrong length, negative, all zero, or not summing to ``n``.
    """
    affine = _keep_or_uniform(mech)
    stats = jnp.asarray(stats)
    if stats.shape[-1:] != (mech.d,):
        raise ValueError(f"Expected stats to have length d={mech.d}, got shape {stats.shape}.")
    if _validate.is_concrete(stats):
        total = jnp.sum(stats, axis=-1)
        if bool(jnp.any(stats < 0)) or bool(jnp.any(total <= 0)):
            raise ValueError("Expected stats to be non-negative counts of at least one report.")
        if n is not None and _validate.is_concrete(n) and bool(jnp.any(total != n)):
            raise ValueError(f"Expected stats to sum to n={n!r}, got {total}.")
    gap, other = affine  # keep - other, other
    return water_filling(stats.astype(jnp.result_type(gap.dtype, float)), other[..., 0] / gap[..., 0])


def _keep_or_uniform(mech: Any) -> tuple[jax.Array, jax.Array]:
    """``estimator().affine`` of an item-report mechanism whose channel is keep-or-uniform (GRR's), else TypeError."""
    if not isinstance(mech, Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    est = mech.estimator()
    affine = None if est is None else est.affine
    ok = mech.report_kind == "item" and affine is not None and int(mech.num_outputs) == mech.d
    if ok and _validate.is_concrete(affine[0]) and _validate.is_concrete(affine[1]):
        a, b = (np.asarray(v, np.float64) for v in affine)
        ok = bool(np.all(a == a[..., :1]) and np.all(b == b[..., :1])
                  and np.allclose(a[..., 0] + mech.d * b[..., 0], 1.0, rtol=0, atol=1e-6))
    if not ok:
        raise TypeError(f"Expected mech to have GRR's channel (keep-or-uniform item reports: the water-filling MLE "
                        f"is GRR's), got {type(mech).__name__}.")
    return affine
