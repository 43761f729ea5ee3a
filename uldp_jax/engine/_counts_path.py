"""Exact count-level fast path: sample a repetition's aggregate statistics in O(d), independent of n.

Every linear estimator reads only the aggregate statistic (an output histogram or per-item support counts).
For many mechanisms that vector has a law that can be sampled *exactly* from the true counts
``n_x`` (the number of users holding item ``x``) with O(d) binomial draws, instead of n per-user draws:

=================  ==============  ===========================================================================
mechanism          counts path?    why it is exact
=================  ==============  ===========================================================================
GRR                exact           each row of Q is ``alpha e_x + (1 - alpha) Uniform([d])`` with
                                   ``alpha = keep - other``: kept ``K_x ~ Bin(n_x, alpha)`` independently, the
                                   ``n - sum K`` others land ``Multinomial(., uniform over [d])``.
URR                exact           same, with the common part uniform over ``X_S`` (``1 - c1 + c2 = s c2``,
                                   ``1 - c3 = s c2``).
UE/OUE/RAPPOR/SUE  exact           bits are independent given the input and bit ``j`` depends only on
                                   ``x == j``: ``stats_j = Bin(n_j, keep) + Bin(n - n_j, q)``, independent in j.
URAP               exact           as UE on the sensitive bits; a non-sensitive bit ``j`` is ``Bin(n_j, 1-d2)``.
BinaryCA/Warner/   exact           ``stats_0 = Bin(n_0, Q00) + Bin(n_1, Q10)``, ``stats_1 = n - stats_0``.
Mangat
HR, HighLowHR,     exact           iid model: reports are iid from ``p Q``, so the histogram is one
BlockHR                            ``Multinomial(n, p Q)`` (``p Q`` by fast Walsh-Hadamard transform, O(K log K));
                                   fixed model: ``sum_x Multinomial(n_x, Q[x])`` (O(d K) draws, any n).
uUE; GLUTF over    exact           per non-sensitive item ``Multinomial(n_x, (1 - f, f z, f (1 - z)))`` (alone /
a base with a                      pair / protected-only); the go users' ``x'`` are iid uniform, so the base runs
counts path                        on ``n_S + Multinomial(G, uniform(X_S))`` with its own exact sampler
(GRR, UE, RAPPOR)                  (``rule="non_pure"``: eq 30's statistic, the same cells). See ``mechanisms.transform._glutf_counts``.
SS                 iid model:      a mixture: w.p. ``beta = (1 - p*) d / (d - k)`` a uniform k-subset of all
                   exact;          items (no ``x``), else ``{x}`` + a uniform (k - 1)-subset of the others; one scan
                   fixed model:    over the items with users binned by how many items they still need, the
                   none            forced users by whether ``x`` is passed; iid ``x`` make every step a set of
                                   binomials (``mechanisms.subset._ss_counts``, ``d`` steps of O(window) draws, any n).
                                   Given fixed counts the "x is passed" moves are multivariate hypergeometric
                                   (not implemented): ``xs=...`` runs per user (Floyd's algorithm,
                                   ``min(k, d - k) + 2`` exact uniform integers per user, ``mechanisms.subset._ksubset``).
uSS; GLUTF over    iid model:      sensitive users are iid from ``p | X_S`` and go users iid uniform on ``X_S``:
SS                 exact; fixed    two iid populations of the SS scan above (``mechanisms.transform._glutf_counts.glutf_iid``).
                   model: none     Given fixed counts it would need SS's fixed-model sampler. Per-user path.
OLH/LH, uLH,       none            the statistic (support counts of hashed reports) is a sum of dependent
uWheel, PUM,                       per-user indicators (each user's hash function couples all items) with no O(d)
GLUTF over OLH/                    product form; they run on the per-user path.
Wheel
EM on per-report   none            needs every report (not only counts); it runs on the per-user path.
likelihoods
=================  ==============  ===========================================================================

A mechanism opts in through the protocol (``ul.Mechanism``): ``counts()`` returns a ``Counts`` record
(``mechanisms.core._records``) whose ``fixed(key, counts)`` is the exact law of ``aggregate(perturb_batch(key,
xs))`` given ``counts = bincount(xs)`` (as floats) and whose ``iid(key, n, p)`` is the law for the iid model (SS
has only the latter), with the cost the engine weighs (``draws``, ``memory``); the default ``None`` means the
per-user path. ``counts_of(mech)`` reads the record with its defaults filled in. The samplers live with their
mechanisms; the building blocks ``multinomial``,
``keep_or_common(_iid)``, ``independent_bits``, ``multinomial_rows`` and ``channel_counts``
(``uldp_jax.mechanisms.core._counts``) are exact and cost O(d) (``O(d m)`` for ``channel_counts``).

In the iid model the reports of an item mechanism are iid from ``p Q``, so its histogram is one
``Multinomial(n, p Q)`` (GRR, uRR, BinaryCA); bit mechanisms first draw the true counts ``Multinomial(n, p)``.
Multinomials are sequential conditional binomials in two sqrt(d)-wide phases (one ``lax.scan``, O(d) draws).
Counts are carried as float64 (exact integers below 2**53), so ``simulate`` runs this path under a local
``jax.enable_x64`` context; the stats come back as ``int32`` for ``n <= 2**31 - 1`` (or ``int64`` when x64 is enabled globally); larger ``n`` is refused without x64.
"""

from __future__ import annotations

from typing import Any

import jax

from uldp_jax.mechanisms.core._counts import (
    binomial,
    channel_counts,
    count_dtype,
    independent_bits,
    keep_or_common,
    keep_or_common_iid,
    multinomial,
    multinomial_rows,
    x64_context,
)
from uldp_jax.mechanisms import Counts
from uldp_jax.mechanisms.core import counts_of


def has_count_path(mech: Any, iid: bool = False) -> bool:
    """True when ``mech``'s aggregate statistic can be sampled exactly without per-user draws.

    ``iid=False`` (default): from the true counts (fixed model, hence also the iid model); ``iid=True``: in the
    iid model (``n`` users drawn from ``p``), which some mechanisms (SS) support only there.
    """
    rec = counts_of(mech)
    return rec is not None and (rec.fixed is not None or (iid and rec.iid is not None))


def sample_counts_iid(key: jax.Array, mech: Any, n: jax.Array, p: jax.Array) -> jax.Array:
    """Exact aggregate statistics of ``mech`` for ``n`` users drawn iid from ``p`` (float ``[d]``).

    Uses ``mech.counts().iid`` when it has one; otherwise draws the true counts ``Multinomial(n, p)`` with the
    first half of ``split(key)`` and runs ``counts().fixed`` with the second.

    Raises:
      ValueError: when ``mech`` has no exact count-level sampler for the iid model.
    """
    rec = counts_of(mech)
    if rec is not None and rec.iid is not None:
        return rec.iid(key, n, p)
    k_true, k_mech = jax.random.split(key)
    return sample_counts(k_mech, mech, multinomial(k_true, n, p))


def sample_counts(key: jax.Array, mech: Any, counts: jax.Array) -> jax.Array:
    """Exact aggregate statistics of ``mech`` for users with true counts ``counts`` (float ``[d]``).

    Raises:
      ValueError: when ``mech`` has no exact count-level sampler.
    """
    rec = counts_of(mech)
    if rec is None or rec.fixed is None:
        raise ValueError(f"mech={type(mech).__name__} has no exact count-level fast path; use path='per_user'.")
    return rec.fixed(key, counts)


__all__ = [
    "Counts",
    "binomial",
    "channel_counts",
    "count_dtype",
    "counts_of",
    "has_count_path",
    "independent_bits",
    "keep_or_common",
    "keep_or_common_iid",
    "multinomial",
    "multinomial_rows",
    "sample_counts",
    "sample_counts_iid",
    "x64_context",
]
