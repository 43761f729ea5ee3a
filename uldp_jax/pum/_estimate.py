"""Distribution estimation with a PUM (001 §5.3, eq 21) and Theorem 1's l1 decomposition (001 §5.4)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _api
from uldp_jax import _validate
from uldp_jax.estimation import _registry
from uldp_jax.mechanisms.core import _spec
from uldp_jax.pum import _mechanism as _pum


class PUMEstimate(NamedTuple):
    """An estimate from PUM reports (leading axes, e.g. repetitions, broadcast).

    Attributes:
      p: float ``[..., d]``: estimate of the input distribution (001 eq 21).
      r: float ``[..., d + K]``: estimate of the intermediate distribution over ``Z`` (channel row order).
      pi: float ``[..., K, d]``: the bot distributions ``pi_hat_k`` used in eq 21.
    """

    p: jax.Array
    r: jax.Array
    pi: jax.Array


class PUMTruth(NamedTuple):
    """The true distributions of a population of ``n`` users (fixed model; float64 NumPy).

    Attributes:
      p: ``[d]``: empirical distribution of the users' items.
      r: ``[d + K]``: distribution of the intermediate items ``f_pre^(i)(x_i)``.
      pi: ``[K, d]``: ``pi_k`` (001 eq 20): distribution of ``x`` among users mapped to ``bot_k`` (zeros when no
        user is); ``p = r[:d] + r[d:] @ pi`` exactly.
      n: number of users.
    """

    p: np.ndarray
    r: np.ndarray
    pi: np.ndarray
    n: int


class PUMLoss(NamedTuple):
    """l1 losses of Theorem 1 (001 eq 22), float64 ``[...]``; ``l1_p <= bound`` always.

    Attributes:
      l1_p: ``l1(p_hat, p)``.
      first: ``l1(r_hat, r)`` over ``Z``.
      second: ``sum_k |r_hat(bot_k)| l1(pi_hat_k, pi_k)`` (001 writes ``r_hat(bot_k)``; the two agree for
        estimates in the simplex, e.g. emp+thr and EM, and the absolute value keeps the bound valid for emp).
      bound: ``first + second``.
    """

    l1_p: np.ndarray
    first: np.ndarray
    second: np.ndarray
    bound: np.ndarray


def check_prior(mech: _pum.PUM, prior: Any) -> Any:
    """Validates ``prior`` (``None`` or float ``[K, d]`` whose rows are distributions or all-NaN)."""
    if prior is None:
        return None
    shape = tuple(jnp.shape(prior))
    if shape != (mech.num_tags, mech.d):
        raise ValueError(f"Expected prior with shape (num_tags, d) = ({mech.num_tags}, {mech.d}), got {shape}.")
    if not _validate.is_concrete(prior):
        return prior
    arr = np.asarray(prior, np.float64)
    for k, row in enumerate(arr):
        if np.all(np.isnan(row)):
            continue  # no knowledge about bot k: case (I) for this bot
        if not np.all(np.isfinite(row)) or np.any(row < 0):
            raise ValueError(f"Expected prior row {k} to be a distribution (non-negative, finite) or all NaN.")
        if not math.isclose(float(row.sum()), 1.0, abs_tol=1e-6):
            raise ValueError(f"Expected prior row {k} to sum to 1 (a distribution), got {row.sum():.8g}.")
    return arr


def combine(mech: _pum.PUM, r_hat: jax.Array, prior: Any = None) -> PUMEstimate:
    r"""Eq 21: :math:`\hat p(x) = \hat r(x) + \sum_k \hat r(\bot_k) \hat\pi_k(x)`; pure, jit/vmap-able.

    Bots without knowledge (``prior=None``, or an all-NaN row) use case (I) of 001 §5.3:
    :math:`\hat\pi_k \propto \max(\hat r, 0)` over ``X_N`` (uniform on ``X_N`` if that is all zero), which
    amounts to discarding the bots and renormalising ``r_hat`` over ``X_N`` (the ``X_S`` estimates are kept
    as they are) when no bot has a prior.

    Args:
      mech: the ``PUM``.
      r_hat: float ``[..., d + K]`` estimate of ``r`` over ``Z``.
      prior: ``None`` or float ``[K, d]``: ``pi_hat_k`` per bot (case II: e.g. a POI distribution; case III:
        the true ``pi_k``); all-NaN rows mean "unknown".

    Returns:
      ``PUMEstimate``.
    """
    d, K = mech.d, mech.num_tags
    r_hat = jnp.asarray(r_hat)
    rx, rb = r_hat[..., :d], r_hat[..., d:]
    nonsens = jnp.asarray(~_spec.sensitive_mask(d, mech.sensitive))
    w = jnp.where(nonsens, jnp.maximum(rx, 0.0), 0.0)
    tot = jnp.sum(w, axis=-1, keepdims=True)
    uniform = nonsens / jnp.sum(nonsens)
    pi_none = jnp.where(tot > 0, w / jnp.where(tot > 0, tot, 1.0), uniform)
    pi = jnp.broadcast_to(pi_none[..., None, :], rx.shape[:-1] + (K, d))
    if prior is not None:
        prior = jnp.asarray(prior, r_hat.dtype)
        known = ~jnp.any(jnp.isnan(prior), axis=-1)
        pi = jnp.where(known[:, None], jnp.nan_to_num(prior), pi)
    p = rx + jnp.sum(rb[..., :, None] * pi, axis=-2)
    return PUMEstimate(p, r_hat, pi)


def pum_estimate(mech: _pum.PUM, ys: Any, prior: Any = None, method: str = "em", **options: Any) -> PUMEstimate:
    """Estimates ``r`` over ``Z`` from PUM reports with ``Q_cmn`` (any registered method), then ``p`` by eq 21.

    Args:
      mech: the ``PUM`` that produced ``ys``.
      ys: reports from ``ul.perturb(key, mech, xs, personal)``.
      prior: ``None`` (case I: no knowledge) or float ``[K, d]`` bot distributions (cases II/III; all-NaN rows:
        no knowledge for that bot).
      method: an estimation method of ``ul.estimation`` ("emp", "emp+thr", "em", ...) applied to ``Q_cmn``.
      **options: method options.

    Returns:
      ``PUMEstimate`` with ``p`` float ``[d]``, ``r`` float ``[d + K]``, ``pi`` float ``[K, d]``.
    """
    if not isinstance(mech, _pum.PUM):
        raise TypeError(f"Expected mech to be a PUM, got {type(mech).__name__}.")
    prior = check_prior(mech, prior)
    cmn = mech.cmn
    spec = resolve_method(method, cmn)
    if spec.input == "reports":
        r_hat = spec.fn(cmn, ys, **options)
    else:
        _api.check_reports(cmn, ys)
        r_hat = spec.fn(cmn, cmn.aggregate(ys), _api.num_reports(cmn, ys), **options)
    return combine(mech, r_hat, prior)


def resolve_method(method: str, cmn: Any) -> Any:
    """The registered estimation method ``method`` in its concrete form for the common mechanism ``cmn``."""
    return _registry.get_method(method, cmn)


def pum_truth(mech: _pum.PUM, xs: Any, personal: Any) -> PUMTruth:
    """The true ``p``, ``r`` and ``pi_k`` (001 §5.3) of users ``xs`` with personal items ``personal`` (host-side).

    001's experiments (§6.1) measure against a *population*: pass the whole population's items here and perturb
    a random sample of it, so the error includes the users' sampling error (``uldp_jax.experiments`` 001-fig8 does
    this; ``ul.simulate_pum(..., population=(pop_xs, pop_personal))`` does it for case (III) and the losses).
    Passing the reporting users themselves gives their empirical distribution, which leaves that sampling
    error out.

    Args:
      mech: the ``PUM``.
      xs: ``int[n]`` items in ``[0, d)``.
      personal: ``int[n, K]`` or ``int[n, K, r]`` (``-1`` = none).
    """
    xs = np.asarray(_validate.check_items("xs", xs, mech.d, ndim=1), np.int64)
    personal = np.asarray(mech.check_personal(personal, xs.shape))
    n, d, K = xs.shape[0], mech.d, mech.num_tags
    if n < 1:
        raise ValueError("Expected xs to hold at least one user.")
    zs = _pum.preprocess_np(d, xs, personal)
    p = np.bincount(xs, minlength=d) / n
    r = np.bincount(zs, minlength=d + K) / n
    idx = np.where(zs >= d, (zs - d) * d + xs, K * d)
    counts = np.bincount(idx, minlength=K * d + 1)[: K * d].reshape(K, d).astype(np.float64)
    pi = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    return PUMTruth(p, r, pi, n)


def pum_loss(mech: _pum.PUM, est: PUMEstimate, truth: PUMTruth) -> PUMLoss:
    """Theorem 1's terms for an estimate (or a batch of them, leading axes) against the truth (float64)."""
    d = mech.d
    p_hat, r_hat, pi_hat = (np.asarray(a, np.float64) for a in (est.p, est.r, est.pi))
    l1_p = np.abs(p_hat - truth.p).sum(-1)
    first = np.abs(r_hat - truth.r).sum(-1)
    second = np.sum(np.abs(r_hat[..., d:]) * np.abs(pi_hat - truth.pi).sum(-1), axis=-1)
    return PUMLoss(l1_p, first, second, first + second)
