r"""Per-attribute (marginal) estimators and their closed-form iid variances, one per protocol.

Each protocol's class calls these from its ``marginals(stats, n)`` (``stats``: the histogram of flat reports,
``mech.aggregate(ys)``, also what ``ul.simulate`` returns per repetition) and ``marginal_variance(ps, n)``
members (the capability belongs to the mechanism); ``marginals(mech, ys)`` below is the public spelling. Estimates
are the oracles' own unbiased debiasing (``ul.mechanisms.core.debias``), not clipped or normalised
(multi-freq-ldpy clips at 0 and renormalises; tests compare after applying that step to ours).
"""

from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp

from uldp_jax.mechanisms import Mechanism
from uldp_jax.mechanisms.core import affine, debias, debias_variance
from uldp_jax.multidim import _product


def column_stat(o: Mechanism, hist: Any) -> Any:
    """The oracle's own statistic from a histogram of its channel columns (items: itself; bits: bit sums)."""
    if o.report_kind == "item":
        return hist
    bits = (jnp.arange(o.num_outputs)[:, None] >> jnp.arange(o.d)[None, :]) & 1
    return hist @ bits.astype(hist.dtype)


def split_stats(oracles: Sequence[Mechanism], stats: Any) -> list[Any]:
    """Each attribute's statistic from the histogram ``stats`` of flat tuple reports (SPL, RS+FD)."""
    sizes = _product.columns_per_attribute(oracles)
    H = jnp.reshape(jnp.asarray(stats), sizes)
    k = len(sizes)
    return [column_stat(o, jnp.sum(H, axis=tuple(i for i in range(k) if i != j))) for j, o in enumerate(oracles)]


def spl_marginals(oracles: Sequence[Mechanism], stats: Any, n: Any) -> tuple[Any, ...]:
    return tuple(debias(o, s, n) for o, s in zip(oracles, split_stats(oracles, stats)))


def spl_variance(oracles: Sequence[Mechanism], ps: Sequence[Any], n: Any) -> tuple[Any, ...]:
    """The oracle's iid variance at its own eps (``eps / k``) with all ``n`` users."""
    return tuple(debias_variance(o, jnp.asarray(p), n) for o, p in zip(oracles, ps))


def smp_marginals(oracles: Sequence[Mechanism], offsets: Sequence[int], stats: Any) -> tuple[Any, ...]:
    """Attribute ``j``'s estimate from the ``n_j`` users who sampled it (multi-freq-ldpy's estimator)."""
    stats = jnp.asarray(stats)
    out = []
    for o, off in zip(oracles, offsets):
        hist = stats[off:off + o.num_outputs]
        out.append(debias(o, column_stat(o, hist), jnp.sum(hist)))
    return tuple(out)


def smp_variance(oracles: Sequence[Mechanism], ps: Sequence[Any], n: Any) -> tuple[Any, ...]:
    """The oracle's iid variance at the full eps with ``n / k`` users (``n_j``'s mean; first order in ``1/n``)."""
    k = len(oracles)
    return tuple(debias_variance(o, jnp.asarray(p), n / k) for o, p in zip(oracles, ps))


def fake_support(o: Mechanism, fake: str) -> Any:
    """``phi``: the probability that a fake report of attribute ``j`` supports a given item (E[stat_v] per user)."""
    a, b = affine(o)
    if fake == "r":
        return a / o.d + b
    return jnp.asarray(o.pure().q)


def _affine(o: Mechanism) -> tuple[Any, Any]:
    form = affine(o)
    if form is None:
        raise ValueError(f"RS+FD's estimator needs an oracle with an affine estimator; {o!r} has none.")
    return form


def rsfd_marginals(oracles: Sequence[Mechanism], fake: str, stats: Any, n: Any) -> tuple[Any, ...]:
    r"""Arcolezi et al.'s estimator :math:`\hat f = (k S/n - (k-1)\phi - b) / a` per attribute (``(a, b)`` the
    oracle's affine form at ``eps'``: RS+FD[GRR] ``(p - q, q)``, ``phi = 1/d_j``)."""
    k = len(oracles)
    out = []
    for o, s in zip(oracles, split_stats(oracles, stats)):
        a, b = _affine(o)
        out.append((k * s / n - (k - 1) * fake_support(o, fake) - b) / a)
    return tuple(out)


def rsfd_variance(oracles: Sequence[Mechanism], fake: str, ps: Sequence[Any], n: Any) -> tuple[Any, ...]:
    r"""``Variance_RSpFD``: :math:`k^2 \sigma (1 - \sigma) / (n a^2)`, :math:`\sigma = (a f + b + (k-1)\phi)/k`,
    the probability that one user's report supports the item (exact in the iid model: the statistic is a sum of
    independent per-user indicators)."""
    k = len(oracles)
    out = []
    for o, p in zip(oracles, ps):
        a, b = _affine(o)
        sig = (a * jnp.asarray(p) + b + (k - 1) * fake_support(o, fake)) / k
        out.append(k**2 * sig * (1 - sig) / (n * a**2))
    return tuple(out)


def marginals(mech: Any, ys: Any) -> tuple[Any, ...]:
    """Each attribute's unbiased frequency estimate ``float[d_j]`` from a multidimensional protocol's reports."""
    return mech.marginals(mech.aggregate(ys), jnp.shape(ys)[0])


def marginal_variance(mech: Any, ps: Sequence[Any], n: Any) -> tuple[Any, ...]:
    """Each attribute's closed-form per-item iid variance ``float[d_j]`` at true marginals ``ps`` and ``n`` users."""
    return mech.marginal_variance(ps, n)


def marginals_of(p: Any, domains: Sequence[int]) -> tuple[Any, ...]:
    """The marginals of a joint ``p: float[prod d_j]`` (flat, row-major as ``encode``)."""
    P = jnp.reshape(jnp.asarray(p), tuple(domains))
    k = len(domains)
    return tuple(jnp.sum(P, axis=tuple(i for i in range(k) if i != j)) for j in range(k))
