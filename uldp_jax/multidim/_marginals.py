r"""Per-attribute (marginal) estimators and their closed-form iid variances, one per protocol.

Each protocol's class calls these from its ``marginals(ys)`` and ``marginal_variance(ps, n)`` members (the
capability belongs to the mechanism); ``marginals(mech, ys)`` below is the public spelling. Estimates are the
oracles' own unbiased debiasing (``ul.mechanisms.core.debias``), not clipped or normalised (multi-freq-ldpy clips at
0 and renormalises; tests compare before that step).
"""

from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp

from uldp_jax.mechanisms import Mechanism
from uldp_jax.mechanisms.core import affine, debias, debias_variance
from uldp_jax.multidim import _product


def split_stats(oracles: Sequence[Mechanism], ys: Any) -> list[Any]:
    """Each attribute's statistic (its oracle's ``aggregate``) from flat tuple reports (SPL, RS+FD)."""
    parts = _product.decode(ys, _product.columns_per_attribute(oracles))
    return [o.aggregate(_product.from_column(o, c)) for o, c in zip(oracles, parts)]


def spl_marginals(oracles: Sequence[Mechanism], ys: Any) -> tuple[Any, ...]:
    n = jnp.shape(ys)[0]
    return tuple(debias(o, s, n) for o, s in zip(oracles, split_stats(oracles, ys)))


def spl_variance(oracles: Sequence[Mechanism], ps: Sequence[Any], n: Any) -> tuple[Any, ...]:
    """The oracle's iid variance at its own eps (``eps / k``) with all ``n`` users."""
    return tuple(debias_variance(o, jnp.asarray(p), n) for o, p in zip(oracles, ps))


def smp_marginals(oracles: Sequence[Mechanism], offsets: Sequence[int], ys: Any) -> tuple[Any, ...]:
    """Attribute ``j``'s estimate from the ``n_j`` users who sampled it (multi-freq-ldpy's estimator)."""
    ys = jnp.asarray(ys, jnp.int32)
    att = jnp.searchsorted(jnp.asarray(offsets[1:], jnp.int32), ys, side="right")
    out = []
    for j, (o, off) in enumerate(zip(oracles, offsets)):
        w = (att == j).astype(jnp.int32)
        cols = jnp.clip(ys - off, 0, o.num_outputs - 1)
        out.append(debias(o, o.aggregate(_product.from_column(o, cols), w), jnp.sum(w)))
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


def rsfd_marginals(oracles: Sequence[Mechanism], fake: str, ys: Any) -> tuple[Any, ...]:
    r"""Arcolezi et al.'s estimator :math:`\hat f = (k S/n - (k-1)\phi - b) / a` per attribute (``(a, b)`` the
    oracle's affine form at ``eps'``: RS+FD[GRR] ``(p - q, q)``, ``phi = 1/d_j``)."""
    n, k = jnp.shape(ys)[0], len(oracles)
    out = []
    for o, s in zip(oracles, split_stats(oracles, ys)):
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
    return mech.marginals(ys)


def marginal_variance(mech: Any, ps: Sequence[Any], n: Any) -> tuple[Any, ...]:
    """Each attribute's closed-form per-item iid variance ``float[d_j]`` at true marginals ``ps`` and ``n`` users."""
    return mech.marginal_variance(ps, n)


def marginals_of(p: Any, domains: Sequence[int]) -> tuple[Any, ...]:
    """The marginals of a joint ``p: float[prod d_j]`` (flat, row-major as ``encode``)."""
    P = jnp.reshape(jnp.asarray(p), tuple(domains))
    k = len(domains)
    return tuple(jnp.sum(P, axis=tuple(i for i in range(k) if i != j)) for j in range(k))
