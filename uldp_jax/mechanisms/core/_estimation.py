"""``Mechanism``'s estimation default (a mixin of the base class): the ``estimator()`` record; with the functions
generic code asks (``debias``, ``affine``, ``stats_matrix``, ``debias_variance``), each with a default read off the
exact channel."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from uldp_jax.mechanisms.core import _records, _report_space
from uldp_jax.mechanisms.core._reports import affine_variance, bits_table


class EstimationDefaults:
    """Estimation members of ``Mechanism`` (documented in its table); mechanisms override them."""

    def estimator(self) -> _records.Estimator | None:
        """The linear estimator ``debias`` and its closed forms (an ``Estimator`` record: the mechanism's own
        ``debias(stats, n)``, per-item affine form, variance), or ``None``: ``debias`` solves the channel by least
        squares and its variance comes from the channel."""
        return None


def debias(mech: Any, stats: jax.Array, n: Any) -> jax.Array:
    r"""The empirical (unbiased) estimate :math:`\hat p` from ``stats`` of ``n`` reports (001 eq 3).

    ``mech.estimator().debias`` when the mechanism writes its own (the Hadamard family's FWHT, GLUTF), else
    ``default_debias``.
    """
    est = mech.estimator()
    if est is not None and est.debias is not None:
        return est.debias(stats, n)
    return default_debias(mech, stats, n)


def default_debias(mech: Any, stats: jax.Array, n: Any) -> jax.Array:
    """``debias`` without the mechanism's own: the per-item affine inverse when ``estimator().affine`` gives one,
    otherwise the least-squares solution of ``p @ stats_matrix(mech) = stats / n`` (exact channel inversion)."""
    affine_ab = affine(mech)
    if affine_ab is not None:
        a, b = affine_ab
        f = jnp.asarray(stats, dtype=a.dtype) / jnp.asarray(n, dtype=a.dtype)
        return (f[: a.shape[0]] - b) / a
    A = stats_matrix(mech)
    f = jnp.asarray(stats, dtype=A.dtype) / jnp.asarray(n, dtype=A.dtype)
    return f @ jnp.linalg.pinv(A)


def own_debias(mech: Any) -> bool:
    """Whether ``mech`` writes its own ``debias`` (``estimator().debias``)."""
    est = mech.estimator()
    return est is not None and est.debias is not None


def affine(mech: Any) -> tuple[jax.Array, jax.Array] | None:
    """``mech.estimator().affine``: ``(a, b)`` with ``E[stats_j] / n = a_j p_j + b_j``, or ``None``."""
    est = mech.estimator()
    return None if est is None else est.affine


def stats_matrix(mech: Any) -> jax.Array:
    """``A float[d, num_stats]`` with ``E[stats] / n = p @ A``, read off the channel (small domains)."""
    Q = jnp.asarray(mech.channel_matrix()[0])
    columns = _report_space.own(mech).columns
    if columns is not None:
        return Q @ jnp.asarray(columns(), Q.dtype)
    if mech.report_kind == "item" and _report_space.num_stats(mech) == mech.num_outputs:
        return Q
    if mech.report_kind == "bits" and 2**_report_space.num_stats(mech) == mech.num_outputs:
        return Q @ jnp.asarray(bits_table(_report_space.num_stats(mech)), Q.dtype)
    raise NotImplementedError(f"{type(mech).__name__}: no stats matrix for report_kind={mech.report_kind!r} "
                              "(define estimator() with its affine form or variance).")


def debias_variance(mech: Any, p: jax.Array, n: Any) -> jax.Array:
    """``float[d]``: per-item variance of ``debias(mech, ...)`` in the iid model.

    ``estimator().variance`` when the mechanism gives one; else the affine form's; else, for a mechanism that
    writes its own ``estimator().debias``, the exact variance of that estimator from its channel
    (``variance_from_channel``), so
    ``emp+thr``'s null variance and ``ul.theory`` describe the estimator that actually runs; else that of the
    channel's least-squares inverse (item reports).
    """
    est = mech.estimator()
    if est is not None and est.variance is not None:
        return est.variance(p, n)
    if est is not None and est.affine is not None:
        return affine_variance(est.affine, p, n)
    if est is not None and est.debias is not None:
        return variance_from_channel(mech, p, n)
    if mech.report_kind != "item":
        raise NotImplementedError(f"{type(mech).__name__}: define estimator() with a variance.")
    A = stats_matrix(mech)
    W = jnp.linalg.pinv(A)  # [m, d]
    mom = p @ A
    return (mom @ W**2 - (mom @ W) ** 2) / n


def variance_from_channel(mech: Any, p: jax.Array, n: Any) -> jax.Array:
    """iid per-item variance of ``debias(mech, ...)`` (assumed affine in ``stats``), from the channel.

    One report ``y`` adds ``S[y]`` to the statistic (items: ``e_y``; bit vectors: their bits), so it adds
    ``G[y] = S[y] @ W`` to ``debias`` with ``W[k] = debias(e_k, 1) - debias(0, 1)``; the variance is
    ``(E[G^2] - E[G]^2) / n`` with ``y ~ p @ Q``. Traceable; small domains (it reads ``channel_matrix``).
    """
    Q = jnp.asarray(mech.channel_matrix()[0])
    k = int(_report_space.num_stats(mech))
    columns = _report_space.own(mech).columns
    if columns is not None:
        S = jnp.asarray(columns(), Q.dtype)
    elif mech.report_kind == "item" and k == mech.num_outputs:
        S = jnp.eye(k, dtype=Q.dtype)
    elif mech.report_kind == "bits" and 2**k == mech.num_outputs:
        S = jnp.asarray(bits_table(k), Q.dtype)
    else:
        raise NotImplementedError(f"{type(mech).__name__} writes its own debias for report_kind="
                                  f"{mech.report_kind!r}: define estimator() with a variance too.")
    one = jnp.ones((), Q.dtype)
    c = debias(mech, jnp.zeros(k, Q.dtype), one)
    W = jax.vmap(lambda e: debias(mech, e, one))(jnp.eye(k, dtype=Q.dtype)) - c  # [k, d]
    G = S @ W  # [m, d]: one report's contribution
    mom = jnp.asarray(p, Q.dtype) @ Q
    return (mom @ G**2 - (mom @ G) ** 2) / n
