"""Exact count samplers of the built-in mechanisms (see the table in ``uldp_jax.fastpath``).

Each sampler maps ``(key, mech, counts float[d])`` to ``float[num_stats]`` with exactly the law of
``mech.aggregate(mech.perturb_batch(key, xs))`` for any ``xs`` with ``bincount(xs) == counts``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax._fastpath._blocks import (
    binomial,
    channel_counts,
    independent_bits,
    keep_or_common,
    keep_or_common_iid,
    multinomial,
)
from uldp_jax._fastpath._registry import register_count_sampler
from uldp_jax._fastpath._ss import ss_counts_iid
from uldp_jax.mechanisms import _base
from uldp_jax.mechanisms._binary import BinaryCA, _binary_q
from uldp_jax.mechanisms._block_hr import BlockHR
from uldp_jax.mechanisms._grr import GRR
from uldp_jax.mechanisms._highlow_hr import HighLowHR
from uldp_jax.mechanisms._hr import HR
from uldp_jax.mechanisms._ss import SS
from uldp_jax.mechanisms._ue import RAPPOR, UE
from uldp_jax.mechanisms._urap import URAP
from uldp_jax.mechanisms._urr import URR


def grr_counts(key: jax.Array, mech: GRR, counts: jax.Array) -> jax.Array:
    """GRR row = ``alpha e_x + (1 - alpha) Uniform([d])`` with ``alpha = keep - other`` (``>= 0``)."""
    keep, other = mech.probs()
    alpha = jnp.full((mech.d,), keep - other, counts.dtype)
    return keep_or_common(key, counts, alpha, jnp.ones((mech.d,), counts.dtype))


def grr_iid(key: jax.Array, mech: GRR, n: jax.Array, p: jax.Array) -> jax.Array:
    """iid GRR: one ``Multinomial(n, p Q)``."""
    keep, other = mech.probs()
    alpha = jnp.full((mech.d,), keep - other, p.dtype)
    return keep_or_common_iid(key, n, p, alpha, jnp.ones((mech.d,), p.dtype))


def urr_counts(key: jax.Array, mech: URR, counts: jax.Array) -> jax.Array:
    """uRR row = ``alpha e_x + (1 - alpha) Uniform(X_S)``, ``alpha = c1 - c2 = c3`` for every input."""
    a, _ = mech.support_affine()
    sens = jnp.asarray(_base.sensitive_mask(mech.d, mech.sensitive), counts.dtype)
    return keep_or_common(key, counts, jnp.asarray(a, counts.dtype), sens)


def urr_iid(key: jax.Array, mech: URR, n: jax.Array, p: jax.Array) -> jax.Array:
    """iid uRR: one ``Multinomial(n, p Q)``."""
    a, _ = mech.support_affine()
    sens = jnp.asarray(_base.sensitive_mask(mech.d, mech.sensitive), p.dtype)
    return keep_or_common_iid(key, n, p, jnp.asarray(a, p.dtype), sens)


def ue_counts(key: jax.Array, mech: Any, counts: jax.Array) -> jax.Array:
    """UE/RAPPOR: ``stats_j = Bin(n_j, keep) + Bin(n - n_j, q)``, independent over j."""
    keep, q = mech.probs()
    d = mech.d
    return independent_bits(key, counts, jnp.full((d,), keep, counts.dtype), jnp.full((d,), q, counts.dtype))


def urap_counts(key: jax.Array, mech: URAP, counts: jax.Array) -> jax.Array:
    """uRAP: sensitive bits as UE (theta, d1); a non-sensitive bit j is ``Bin(n_j, 1 - d2)``."""
    a, b = mech.support_affine()
    return independent_bits(key, counts, jnp.asarray(a + b, counts.dtype), jnp.asarray(b, counts.dtype))


def binary_counts(key: jax.Array, mech: BinaryCA, counts: jax.Array) -> jax.Array:
    """BinaryCA: ``stats_0 = Bin(n_0, Q00) + Bin(n_1, Q10)``, ``stats_1 = n - stats_0``."""
    q00, _, q10, _, _ = _binary_q(jnp.asarray(mech.eps12), jnp.asarray(mech.eps21), jnp)
    zeros = binomial(key, counts, jnp.stack([q00, q10]).astype(counts.dtype))
    s0 = jnp.sum(zeros)
    return jnp.stack([s0, jnp.sum(counts) - s0])


def binary_iid(key: jax.Array, mech: BinaryCA, n: jax.Array, p: jax.Array) -> jax.Array:
    """iid BinaryCA: ``stats_0 ~ Bin(n, p_0 Q00 + p_1 Q10)``."""
    q00, _, q10, _, _ = _binary_q(jnp.asarray(mech.eps12), jnp.asarray(mech.eps21), jnp)
    s0 = binomial(key, jnp.asarray(n, p.dtype), (p[0] * q00 + p[1] * q10).astype(p.dtype))
    return jnp.stack([s0, n - s0])


def histogram_counts(key: jax.Array, mech: Any, counts: jax.Array) -> jax.Array:
    """Item reports, stats = output histogram: ``sum_x Multinomial(n_x, Q[x])`` (O(d m) draws, any n).

    ``Q`` is built row by row with the mechanism's ``channel_matvec`` (traceable, unlike ``channel_matrix``).
    """
    Q = jax.vmap(mech.channel_matvec)(jnp.eye(mech.d, dtype=counts.dtype))
    return channel_counts(key, counts, Q.astype(counts.dtype))


def histogram_iid(key: jax.Array, mech: Any, n: jax.Array, p: jax.Array) -> jax.Array:
    """iid item reports are iid from ``p Q``: the histogram is one ``Multinomial(n, p Q)`` (HR: O(K log K))."""
    return multinomial(key, n, jnp.asarray(mech.channel_matvec(p), p.dtype))


register_count_sampler(GRR, grr_counts, grr_iid)
register_count_sampler(URR, urr_counts, urr_iid)
register_count_sampler(UE, ue_counts)
register_count_sampler(RAPPOR, ue_counts)
register_count_sampler(URAP, urap_counts)
register_count_sampler(BinaryCA, binary_counts, binary_iid)
register_count_sampler(SS, None, ss_counts_iid)  # iid model only (see _fastpath._ss)
for _cls in (HR, HighLowHR, BlockHR):  # report histograms over K Hadamard cells
    register_count_sampler(_cls, histogram_counts, histogram_iid)
