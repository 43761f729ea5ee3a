r"""The rest of Wang et al.'s NDSS 2020 post-processing methods: Norm, Norm-Cut, Base-Pos (Non-Neg), MLE-Apx,
Power and Power-NS (Norm-Sub, Base-Cut, projection and clipping are in ``_postprocess``).

Each acts on frequency estimates ``float[..., d]`` (the reference code acts on counts ``n p``; every rule here is
that rule divided by ``n``). The traceable ones are registered as "stats" estimation methods that post-process
"emp": ``"norm"``, ``"norm-cut"``, ``"base-pos"``, ``"mle-apx"``; ``power`` and ``power_ns`` fit their prior on the
host (concrete ``n``, a sum over ``1..n``) and are functions only.

References:
  Wang, Lopuhaä-Zwakenberg, Li, Skoric, Li, "Locally differentially private frequency estimation with
  consistency", NDSS 2020, §IV-§V; their code, vvv214/LDP_Protocols ``post-process/`` (``norm.py``,
  ``norm_cut.py``, ``base_pos.py``, ``non_neg.py``, ``mle_apx.py``, ``power.py``, ``power_ns.py``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _empirical, _postprocess, _registry


def norm(p_hat: jax.Array) -> jax.Array:
    r"""Norm: add the same :math:`(1 - \sum_j \hat p_j)/d` to every estimate (sums to 1; may stay negative)."""
    p_hat = jnp.asarray(p_hat)
    return p_hat + (1.0 - jnp.sum(p_hat, axis=-1, keepdims=True)) / p_hat.shape[-1]


def base_pos(p_hat: jax.Array) -> jax.Array:
    """Base-Pos: negative estimates become 0, nothing else changes (not renormalised). The reference code's
    ``NonNeg`` is the same rule (``non_neg``)."""
    return jnp.maximum(jnp.asarray(p_hat), 0.0)


non_neg = base_pos


def norm_cut(p_hat: jax.Array) -> jax.Array:
    r"""Norm-Cut: keep the largest estimates, in decreasing order, up to and including the first whose running
    total exceeds 1; zero the rest; divide by the kept total.

    As in the reference code (``norm_cut.py``), when the total of all estimates never exceeds 1 every estimate is
    kept (negatives included) and the vector is divided by its sum.
    """
    p_hat = jnp.asarray(p_hat)
    d = p_hat.shape[-1]
    order = jnp.argsort(-p_hat, axis=-1)
    srt = jnp.take_along_axis(p_hat, order, axis=-1)
    total = jnp.cumsum(srt, axis=-1)
    over = total > 1.0
    last = jnp.where(jnp.any(over, axis=-1, keepdims=True), jnp.argmax(over, axis=-1, keepdims=True), d - 1)
    kept_sorted = jnp.where(jnp.arange(d) <= last, srt, 0.0)
    kept = jnp.take_along_axis(kept_sorted, jnp.argsort(order, axis=-1), axis=-1)  # back to item order
    return kept / jnp.take_along_axis(total, last, axis=-1)


def mle_apx(p_hat: jax.Array, p: Any, q: Any) -> jax.Array:
    r"""MLE-Apx: the approximate MLE of a pure mechanism (support probabilities ``p`` for the own item, ``q`` for
    the others) under a normal approximation of the support counts, on a shrinking positive set.

    With the observed support rates :math:`o_j = q + (p - q)\hat p_j`, a positive set ``P`` (``k`` items, first
    :math:`\hat p > 0`) and :math:`S = \sum_P o_j`, set
    :math:`x = (S - p - (k-1)q)/(p(1-p) + (k-1)q(1-q))` and
    :math:`\tilde p_j = (o_j - q - q(1-q)x)/(p - q + (p(1-p) - q(1-q))x)` on ``P``, 0 elsewhere; repeat on
    :math:`\{\tilde p > 0\}` until no estimate is negative (at most ``d`` rounds). For GRR the reference code
    uses a separate rule, which is the exact MLE: ``ul.estimation.grr_mle``.
    """
    p_hat = jnp.asarray(p_hat)
    fn = lambda v: _mle_apx_1d(v, jnp.asarray(p, v.dtype), jnp.asarray(q, v.dtype))  # noqa: E731
    for _ in range(p_hat.ndim - 1):
        fn = jax.vmap(fn)
    return fn(p_hat)


def _mle_apx_1d(p_hat: jax.Array, p: jax.Array, q: jax.Array) -> jax.Array:
    obs = q + (p - q) * p_hat

    def solve(pos):
        k = jnp.sum(pos).astype(p_hat.dtype)
        s = jnp.sum(jnp.where(pos, obs, 0.0))
        x = (s - p - (k - 1.0) * q) / (p * (1.0 - p) + (k - 1.0) * q * (1.0 - q))
        est = (obs - q - q * (1.0 - q) * x) / (p - q + (p * (1.0 - p) - q * (1.0 - q)) * x)
        return jnp.where(pos, est, 0.0)

    def body(state):
        est, _ = state
        return solve(est > 0), est

    first = solve(p_hat > 0)
    est, _ = jax.lax.while_loop(lambda s: jnp.any(s[0] < 0), body, (first, first))
    return est


def power_law_alpha(mean_count: float, n: int, tol: float = 0.01) -> float:
    r"""The exponent :math:`\alpha` of the power law :math:`P(N) \propto N^{-\alpha}` on ``1..n`` whose mean is
    ``mean_count`` (bisection, as the reference ``search_alpha``; ``alpha = 1.01`` when the mean is below 1)."""
    if mean_count < 1:
        return 1.01
    N = np.arange(1, n + 1, dtype=np.float64)
    mean = lambda a: float(np.sum(N ** (1 - a)) / np.sum(N ** (-a)))  # noqa: E731  (decreasing in a)
    hi = 2.0
    while mean(hi) > mean_count:
        hi *= 2.0
    lo = hi / 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        fit = mean(mid)
        if abs(fit - mean_count) <= tol:
            return mid
        lo, hi = (mid, hi) if fit > mean_count else (lo, mid)
    return (lo + hi) / 2.0


def power(p_hat: Any, n: int, var: Any, window: int = 25_000) -> jax.Array:
    r"""Power: the posterior mean of each count under a power-law prior fitted to the estimates' mean and a normal
    likelihood of the estimate, :math:`E[N \mid c] = \sum_N N^{1-\alpha}e^{-(c-N)^2/2V} / \sum_N N^{-\alpha}
    e^{-(c-N)^2/2V}` over integers ``N`` in ``[1, n]`` within ``window`` of ``c = n p_hat`` (as the reference
    code; it also rounds ``c`` to a grid of 10 to reuse sums, which this exact version does not).

    Args:
      p_hat: ``float[d]`` frequency estimates (concrete).
      n: number of users (concrete int).
      var: per-item variance of ``p_hat`` (scalar or ``float[d]``; the null variance, as the reference code's
        ``fo.var``): ``V = n^2 var`` in counts.
      window: half-width of the sum, in counts.

    Returns:
      ``float[d]`` frequencies (counts over ``n``).
    """
    n = _validate.check_int("n", n, minimum=1)
    window = _validate.check_int("window", window, minimum=1)
    c = np.asarray(p_hat, np.float64) * n
    alpha = power_law_alpha(float(np.mean(c)), n)
    V = np.broadcast_to(np.asarray(var, np.float64) * float(n) ** 2, c.shape)
    offsets = jnp.arange(-window, window + 1, dtype=jnp.result_type(float))  # float64 under x64

    def one(args):
        ci, vi = args
        N = jnp.round(ci) + offsets
        ok = (N >= 1) & (N <= n)
        Nc = jnp.clip(N, 1.0, float(n))
        logw = -((ci - Nc) ** 2) / (2.0 * vi) - alpha * jnp.log(Nc)
        logw = jnp.where(ok, logw, -jnp.inf)
        w = jnp.exp(logw - jnp.max(logw))
        return jnp.sum(w * Nc) / jnp.sum(w)

    post = jax.lax.map(one, (jnp.asarray(c, offsets.dtype), jnp.asarray(V, offsets.dtype)), batch_size=16)
    return post / n


def power_ns(p_hat: Any, n: int, var: Any, window: int = 25_000) -> jax.Array:
    """Power-NS: ``power`` followed by Norm-Sub (``ul.estimation.norm_sub``)."""
    return _postprocess.norm_sub(power(p_hat, n, var, window))


def _pure_pq(mech: Any) -> tuple[Any, Any]:
    rec = mech.pure()
    if rec is None or rec.z is not None:
        raise ValueError(f"mle-apx needs a pure LDP mechanism (pure() with p*, q*), got {type(mech).__name__}.")
    return rec.p, rec.q


def _null_var(mech: Any, n: Any) -> Any:
    return _empirical.empirical_variance(mech, jnp.zeros((mech.d,)), n)


_EMP = _empirical.empirical
_registry.register_method("norm", lambda mech, stats, n: norm(_EMP(mech, stats, n)), "stats",
                          "Empirical estimate + Norm (Wang et al. NDSS 2020): a common shift to sum 1.")
_registry.register_method("norm-cut", lambda mech, stats, n: norm_cut(_EMP(mech, stats, n)), "stats",
                          "Empirical estimate + Norm-Cut (Wang et al. NDSS 2020).")
_registry.register_method("base-pos", lambda mech, stats, n: base_pos(_EMP(mech, stats, n)), "stats",
                          "Empirical estimate with negatives set to 0 (Base-Pos / Non-Neg, Wang et al. NDSS 2020).")
_registry.register_method("mle-apx", lambda mech, stats, n: mle_apx(_EMP(mech, stats, n), *_pure_pq(mech)),
                          "stats", "Empirical estimate + MLE-Apx (Wang et al. NDSS 2020; pure mechanisms).")
