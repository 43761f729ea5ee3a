r"""The EM driver shared by every likelihood: plain EM and SQUAREM on ``lax.while_loop``.

A *model* is a function ``update(p) -> (p_next, loglik)``: one EM step (the expectation over the hidden true
values followed by the closed-form maximisation) and the mean log-likelihood per report at ``p``. EM is
monotone in the log-likelihood; on the probability simplex its fixed points are the maximum-likelihood
estimates (001 §2.5, Agrawal & Aggarwal 2001).

Stopping rule (used everywhere, including the benchmark): stop after the first iteration in which the mean
log-likelihood *per report* changed by at most ``tol`` nats in absolute value, i.e.
:math:`|L_k - L_{k-1}|/n \le` ``tol``, or after ``max_iters`` iterations (``EMInfo.converged`` says which). 001's
EM stops on the relative change of the log-likelihood; per report, with :math:`|L|/n` of order 1, this is the
same rule up to a constant. A negative change (rounding in an accepted step) does not stop the loop. Default
``tol``: 1e-14 nats per report on output histograms (``DEFAULT_TOL``; a step costs O(d)) and 1e-12 on per-report
likelihoods (``REPORT_TOL``: bit vectors, hashed, subset and GLUTF reports), in float32 and float64 alike.

``tol="stat"`` stops at the statistical resolution of the data instead of at the MLE: after the first step that
gained at most ``STAT_GAIN`` nats *in total* over the ``W`` reports (``tol = STAT_GAIN / W`` per report; Newton
drops its certificate condition). Near the MLE the log-likelihood is :math:`-\tfrac12 z^\top z` in standard-error
units (``z``: the distance to the MLE in the Fisher metric), so a step that moves a contraction of rate ``r``
closer gains :math:`\tfrac12 |z|^2 (1 - r^2)`: at most ``STAT_GAIN`` means :math:`|z| \le \sqrt{2\,
STAT\_GAIN / (1 - r^2)}` (0.03 SE at r = 0.9, 0.1 at r = 0.99), and every linear functional of the estimate (each
frequency, a sum of them) is that many of its own standard errors from the exact MLE's: the same answer, well
within one SE, in the tens of passes instead of hundreds or thousands. Items whose MLE is 0 are the exception for
(SQUAREM-)EM, which approaches the boundary sublinearly: they stop up to about 0.1 SE above 0 (Newton binds them
exactly). tests/estimation/test_em_core.py checks 0.1 SE for every solver family.

In float32 (x64 disabled) the difference of two float32 log-likelihoods rounds to zero long before the MLE (a
sum of ``n`` log terms of size ~3 has a resolution of ~2e-7 nats per report). A model may therefore supply a
*gain* ``gain(p_a, p_b)``: the change :math:`(L(p_b) - L(p_a))/n` computed from the parameter difference,
:math:`\frac1n\sum_i w_i \log(1 + (L_i(p_b - p_a))/(L_i p_a))`, which has float32's *relative* precision (the
parameter difference is exact by Sterbenz's lemma near convergence), so the stopping statistic and SQUAREM's
acceptance test resolve changes of 1e-15 nats per report while the heavy passes stay float32. Models without a
gain (and every model in float64) use the difference of the log-likelihoods. ``EMInfo.num_steps`` reports the
iterations done.

SQUAREM (Varadhan & Roland 2008, step length S3) with two EM maps per cycle: from :math:`p_0` and
:math:`p_1 = F(p_0)` (carried over), :math:`p_2 = F(p_1)`, :math:`r = p_1 - p_0`, :math:`v = p_2 - 2p_1 + p_0`,
:math:`\alpha = -\|r\|/\|v\|` capped at -1; the extrapolation :math:`p' = p_0 - 2\alpha r + \alpha^2 v` is clamped
below at :math:`10^{-3} p_0` (a projection back into the interior of the simplex: EM never revives a zero) and
renormalised. :math:`F(p')` and :math:`L(p')` come from one map; if :math:`L(p') \ge L(p_1)` the next cycle
starts at :math:`(p', F(p'))`, else at :math:`(p_1, p_2)` (plain EM). The stabilising map of the textbook scheme
is the carried-over :math:`F(p')`, so it is not recomputed: a cycle costs two EM maps instead of three. Either way :math:`L` never decreases, so SQUAREM is monotone too.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate


class EMState(NamedTuple):
    """Loop state of EM (plain or SQUAREM).

    Attributes:
      p: ``float[d]`` current iterate :math:`p_k`.
      p_next: ``float[d]`` :math:`F(p_k)`, one EM step further (the estimate returned).
      loglik: ``float[]`` mean log-likelihood per report at ``p``.
      loglik_change: ``float[]`` ``loglik`` minus the previous iterate's (``inf`` before the first step).
      num_steps: ``int32[]`` iterations done (EM steps, or SQUAREM cycles).
      num_evals: ``int32[]`` evaluations of the EM map ``F``.
    """

    p: jax.Array
    p_next: jax.Array
    loglik: jax.Array
    loglik_change: jax.Array
    num_steps: jax.Array
    num_evals: jax.Array


class EMInfo(NamedTuple):
    """Diagnostics of an EM run.

    Attributes:
      num_steps: ``int32[]`` iterations (EM steps for plain EM, cycles for SQUAREM).
      num_evals: ``int32[]`` evaluations of the EM map (equals ``num_steps + 1`` for plain EM).
      converged: ``bool[]`` whether the stopping rule fired before ``max_iters``.
      loglik: ``float[]`` mean log-likelihood per report at the last measured iterate.
      loglik_change: ``float[]`` last change of the mean log-likelihood per report.
      gap: ``float[]`` (per-report models, ``_em_newton``) the certificate :math:`(\\max_x g_x - W)/W`: an upper
        bound on the log-likelihood per report still to gain (up to the gradient's rounding); ``None`` for the
        output-histogram solver.
    """

    num_steps: jax.Array
    num_evals: jax.Array
    converged: jax.Array
    loglik: jax.Array
    loglik_change: jax.Array
    gap: Any = None


Update = Callable[[jax.Array], tuple[jax.Array, jax.Array]]
Gain = Callable[[jax.Array, jax.Array], jax.Array]

DEFAULT_TOL = 1e-14
REPORT_TOL = 1e-12  # the default of the per-report models (each step is a pass over all reports)
STAT_GAIN = 1e-4  # tol="stat": nats gained in all by the last step (a move of ~0.01-0.1 SE; module doc)
STAT = "stat"


def resolve_tol(tol: Any, weight: Any, dtype: Any, default: float) -> tuple[jax.Array, bool]:
    """``(tol per report, certify)`` of a checked ``tol``: ``"stat"`` is ``STAT_GAIN / weight`` (``weight``: the
    reports' total, ``W``) without Newton's certificate condition; ``None`` is ``default``."""
    if isinstance(tol, str):
        return jnp.asarray(STAT_GAIN, dtype) / jnp.maximum(jnp.asarray(weight, dtype), 1.0), False
    return jnp.asarray(default if tol is None else tol, dtype), True


def default_tol(dtype: Any) -> float:
    """The default stopping tolerance (nats per report), the same in float32 and float64 (see the module doc)."""
    del dtype
    return DEFAULT_TOL


def use_gain(gain: Gain | None, dtype: Any) -> Gain | None:
    """``gain`` where it is needed (below float64), else ``None`` (log-likelihood differences are exact enough)."""
    return None if jnp.dtype(dtype) == jnp.float64 else gain


SOLVERS = ("auto", "em", "squarem", "newton")  # ``solver=``: the model's fastest, plain EM, SQUAREM, projected Newton


def check_options(tol: Any, max_iters: Any, accelerate: Any, solver: Any = "auto") -> tuple[Any, int, str]:
    """Validates the EM options (``tol > 0`` finite, ``"stat"`` or ``None``, ``max_iters >= 1``, ``accelerate`` bool, ``solver``
    in ``SOLVERS``) and returns ``(tol, max_iters, solver)``.

    ``accelerate`` is the older spelling of ``solver``: ``accelerate=False`` means ``solver="em"``; with
    ``accelerate=True`` (its default) ``solver`` decides. ``"auto"`` is each model's default: SQUAREM on
    histograms and dense likelihoods, projected Newton on per-report bit likelihoods (SQUAREM past its domain)."""
    if isinstance(tol, str):
        if tol != STAT:
            raise ValueError(f"Expected tol={tol!r} to be a positive real number or {STAT!r}.")
    elif tol is not None and _validate.is_concrete(tol):
        if isinstance(tol, bool) or not isinstance(tol, (numbers.Real, np.ndarray, jax.Array)):
            raise TypeError(f"Expected tol={tol!r} to be a positive real number or 'stat'.")
        t = np.asarray(tol, np.float64)
        if t.ndim != 0 or not np.isfinite(t) or not float(t) > 0.0:
            raise ValueError(f"Expected tol={tol!r} > 0 and finite.")
    max_iters = _validate.check_int("max_iters", max_iters, minimum=1)
    if not isinstance(accelerate, (bool, np.bool_)):
        raise TypeError(f"Expected accelerate={accelerate!r} to be a bool.")
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"Expected solver={solver!r} in {SOLVERS}.")
    if not accelerate:
        if solver not in ("auto", "em"):
            raise ValueError(f"accelerate=False means solver='em'; got solver={solver!r} as well.")
        solver = "em"
    return tol, max_iters, solver


def no_newton(solver: str, what: str) -> str:
    """``solver`` for a model without a Newton solver: refuses ``"newton"``, maps ``"auto"`` to SQUAREM."""
    if solver == "newton":
        raise ValueError(f"solver='newton' runs on per-report bit likelihoods; {what} has no Newton solver "
                         "(use 'auto', 'squarem' or 'em').")
    return "squarem" if solver == "auto" else solver


def _map(update: Update, p: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``update(p)`` with ``F(p)`` renormalised: a float32 EM map's mass drifts by ~1e-7 per step, which would
    otherwise dominate SQUAREM's second differences near the MLE."""
    p_next, loglik = update(p)
    return p_next / jnp.sum(p_next, axis=-1, keepdims=True), loglik


def init(update: Update, p0: jax.Array) -> EMState:
    """Evaluates the EM map once at ``p0``."""
    p1, loglik = _map(update, p0)
    inf = jnp.asarray(jnp.inf, loglik.dtype)
    return EMState(p0, p1, loglik, inf, jnp.int32(0), jnp.int32(1))


def _change(gain: Gain | None, p_a, l_a, p_b, l_b):
    """``(L(p_b) - L(p_a)) / n``: the model's gain if any, else the difference of the log-likelihoods."""
    return l_b - l_a if gain is None else gain(p_a, p_b).astype(l_b.dtype)


def step(update: Update, state: EMState, gain: Gain | None = None) -> EMState:
    """One plain EM step (``gain``: the model's precise log-likelihood change, see the module doc)."""
    p = state.p_next
    p_next, loglik = _map(update, p)
    change = _change(gain, state.p, state.loglik, p, loglik)
    return EMState(p, p_next, loglik, change, state.num_steps + 1, state.num_evals + 1)


def _extrapolate(p0, r, v, alpha, floor: float = 1e-3):
    """``p0 - 2 alpha r + alpha^2 v``, clamped below at ``floor * p0`` (EM cannot revive a zero) and renormalised."""
    pe = jnp.maximum(p0 - 2.0 * alpha * r + alpha * alpha * v, floor * p0)
    return pe / jnp.sum(pe, axis=-1, keepdims=True)


def squarem_step(update: Update, state: EMState, gain: Gain | None = None) -> EMState:
    """One SQUAREM (S3) cycle: two EM maps; monotone in the log-likelihood (``gain``: as in ``step``)."""
    p0, p1, l0 = state.p, state.p_next, state.loglik
    p2, l1 = _map(update, p1)
    r = p1 - p0
    v = p2 - p1 - r
    rr, vv = jnp.sum(r * r), jnp.sum(v * v)
    alpha = jnp.where(vv > 0, -jnp.sqrt(rr / jnp.where(vv > 0, vv, 1.0)), -1.0)
    alpha = jnp.minimum(alpha, -1.0)
    p_ext = _extrapolate(p0, r, v, alpha)
    p_ext_next, l_ext = _map(update, p_ext)
    ok = jnp.isfinite(l_ext) & (_change(gain, p1, l1, p_ext, l_ext) >= 0)
    p_new = jnp.where(ok, p_ext, p1)
    p_new_next = jnp.where(ok, p_ext_next, p2)
    l_new = jnp.where(ok, l_ext, l1)
    change = _change(gain, p0, l0, p_new, l_new)
    return EMState(p_new, p_new_next, l_new, change, state.num_steps + 1, state.num_evals + 2)


def run(update: Update, p0: jax.Array, tol: Any, max_iters: int, accelerate: bool,
        gain: Gain | None = None) -> tuple[jax.Array, EMInfo]:
    """Runs EM (or SQUAREM) from ``p0`` until the stopping rule fires; pure, vmappable, not jitted.

    Args:
      update: the model's EM map, ``p -> (F(p), mean loglik per report at p)``.
      p0: ``float[d]`` strictly positive starting point on the simplex.
      tol: stopping tolerance on the per-report log-likelihood change (``None``: dtype default).
      max_iters: iteration cap (EM steps, or SQUAREM cycles).
      accelerate: use SQUAREM.
      gain: the model's precise log-likelihood change ``(p_a, p_b) -> (L(p_b) - L(p_a)) / n``, used below
        float64 (``use_gain``); ``None``: differences of the log-likelihoods.

    Returns:
      ``(p_hat float[d], EMInfo)``.
    """
    tol = default_tol(p0.dtype) if tol is None else tol
    tol = jnp.asarray(tol, p0.dtype)
    gain = use_gain(gain, p0.dtype)
    body = (lambda s: squarem_step(update, s, gain)) if accelerate else (lambda s: step(update, s, gain))

    def cond(s):
        return (s.num_steps < max_iters) & (jnp.abs(s.loglik_change) > tol)

    state = jax.lax.while_loop(cond, body, init(update, p0))
    info = EMInfo(state.num_steps, state.num_evals, jnp.abs(state.loglik_change) <= tol, state.loglik,
                  state.loglik_change)
    return state.p_next, info


def start_point(p_init: jax.Array, mix: float = 1e-3) -> jax.Array:
    """A strictly positive start on the simplex: ``(1 - mix) p_init + mix / d`` (EM never revives a zero)."""
    d = p_init.shape[-1]
    p = jnp.maximum(p_init, 0.0)
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    return (1.0 - mix) * p + mix / d


def check_init(init: Any, d: int) -> Any:
    """Validates a user-supplied starting distribution: a real ``float[d]`` (shape and dtype also when traced;
    values when concrete: a distribution, i.e. finite, non-negative, summing to 1 within 1e-4)."""
    if init is None:
        return init
    if isinstance(init, (str, bytes)) or not hasattr(init, "dtype") and not isinstance(init, (list, tuple)):
        raise TypeError(f"Expected init to be a real float[{d}] array (or None), got {type(init).__name__}.")
    kind = jnp.dtype(init.dtype).kind if hasattr(init, "dtype") else np.asarray(init).dtype.kind
    if kind not in "iuf":
        raise TypeError(f"Expected init to be a real float[{d}] array (or None), got dtype kind {kind!r}.")
    shape = tuple(np.shape(init))
    if shape != (d,):
        raise ValueError(f"Expected init to have shape ({d},), got {shape}.")
    if not _validate.is_concrete(init):
        return init
    arr = np.asarray(init, np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or not abs(arr.sum() - 1.0) <= 1e-4:
        raise ValueError(f"Expected init to be a distribution (non-negative, finite, summing to 1), got {arr} "
                         f"(sum {arr.sum():.6g}).")
    return init


def check_throw(throw: Any) -> bool:
    """Validates ``throw`` (a bool)."""
    if not isinstance(throw, (bool, np.bool_)):
        raise TypeError(f"Expected throw={throw!r} to be a bool.")
    return bool(throw)


def maybe_throw(info: EMInfo, throw: bool) -> None:
    if throw and _validate.is_concrete(info.converged) and not bool(np.all(np.asarray(info.converged))):
        raise RuntimeError(f"EM did not converge in {int(np.max(np.asarray(info.num_steps)))} iterations "
                           f"(last loglik change {np.asarray(info.loglik_change)}); raise max_iters or tol.")
