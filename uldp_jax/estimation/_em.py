r"""EM reconstruction ("iterative Bayesian update", 001 §2.5): the exact MLE on the probability simplex.

Two likelihood forms:

* **Output histogram** (item reports: GRR, uRR, BinaryCA, and any mechanism with ``channel_matrix``): the
  counts ``c`` of the ``m`` outputs are sufficient. One EM step is

  .. math:: p'_x = \frac{p_x}{n} \sum_y Q(y|x) \frac{c_y}{(pQ)_y},

  i.e. ``p * Q @ (c / (p @ Q)) / n`` — the *transpose* product, which is what asymmetric, non-square channels
  (all ULDP channels) need. Mechanisms whose ``likelihood()`` has ``ops`` (GRR, uRR: keep-or-uniform mixtures; HR
  family)
  cost O(d) per step; others fall back to the dense channel (O(d m), small domains, concrete
  mechanisms only).
* **Product likelihood** (bit-vector reports: RAPPOR/UE, uRAP): see ``_em_reports``; needs the reports.

* **Per-report factors** (``mech.likelihood().report(ys)``: SS, OLH, Wheel, GRR, UE and GLUTF mechanisms): see
  ``em_likelihood`` (registered as "em-pure").

Every form is one ``_em_core.Update`` run by ``_em_core.run`` (one loop, one stopping rule, ``EMInfo``,
SQUAREM, ``throw``). ``em`` (``ul.estimation.em``, ``return_info=True`` for the diagnostics) dispatches on
the protocol methods, never on class names; the registered method "em" does the same for ``ul.estimate`` and
``ul.simulate`` (stats for item reports, reports for bit vectors). All solvers start from "emp+thr" (as 001
does) mixed with 0.1% of the uniform distribution (EM never revives an item whose probability is 0), run
SQUAREM by default (``accelerate=False`` for plain EM: same fixed point) and follow the stopping rule of
``_em_core``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _memory
from uldp_jax import _sizing
from uldp_jax import _validate
from uldp_jax.estimation import _em_core, _em_newton, _em_ratio, _em_reports, _registry, _threshold
from uldp_jax.mechanisms.core import _reports
from uldp_jax.mechanisms.core import SupportRatio, likelihood_of

DEFAULT_MAX_ITERS = 10_000


def _channel_ops(mech: Any, dtype: Any):
    """``(matvec: p -> p Q, rmatvec: v -> Q v)`` for an item-report mechanism: ``mech.likelihood().ops``, else the
    dense channel ``channel_matrix()``: traced with the mechanism where it is written in ``jnp`` (a user's
    mechanism on a ``jax.vmap`` grid), else built once from concrete parameters."""
    ops = likelihood_of(mech).ops
    if ops is not None:
        return ops
    try:
        Q = jnp.asarray(mech.channel_matrix()[0], dtype)
    except jax.errors.ConcretizationTypeError as err:
        raise TypeError(f"EM for mech={type(mech).__name__} uses its dense channel, whose channel_matrix() needs "
                        "concrete parameters (it converts them to NumPy), so it cannot run on a traced or batched "
                        "mechanism; write channel_matrix() with jnp or define likelihood() with ops.") from err
    return (lambda p: p @ Q), (lambda v: Q @ v)


def histogram_update(mech: Any, counts: jax.Array) -> _em_core.Update:
    """The EM map on an output histogram ``counts: float[num_outputs]`` (exact E-step for any channel)."""
    matvec, rmatvec = _channel_ops(mech, counts.dtype)
    n = jnp.sum(counts)

    def update(p):
        m = matvec(p)
        pos = counts > 0
        safe_m = jnp.where(m > 0, m, 1.0)
        loglik = jnp.sum(jnp.where(pos, counts * jnp.where(m > 0, jnp.log(safe_m), -jnp.inf), 0.0)) / n
        ratio = jnp.where(pos, counts / safe_m, 0.0)
        return p * rmatvec(ratio) / n, loglik

    return update


def log_ratio_gain(ratio_terms: Any) -> _em_core.Gain:
    r"""A gain (``_em_core``) from ``ratio_terms(p_a, dp) -> (weights w, D_a, dD)`` (per output or report):
    :math:`\sum w \log(1 + dD/D_a) / \sum w`, precise in float32 (see ``_em_core``).

    The gain is that of the *normalised* iterates :math:`p/\sum p` (the likelihood is homogeneous of degree 1
    in ``p``, so it subtracts :math:`\log(\sum p_b / \sum p_a)`, also from the difference): a float32 iterate's
    sum is 1 only to ~1e-7, which would otherwise swamp the change.
    """

    def gain(p_a, p_b):
        dp = p_b - p_a
        w, den, dden = ratio_terms(p_a, dp)
        pos = w > 0
        ok = pos & (den > 0)
        x = jnp.where(ok, dden / jnp.where(ok, den, 1.0), 0.0)
        revived = jnp.any(pos & (den <= 0) & (dden > 0))  # from a zero likelihood: an infinite gain
        g = jnp.sum(jnp.where(ok, w * jnp.log1p(jnp.maximum(x, -1.0)), 0.0)) / jnp.sum(w)
        g = g - jnp.log1p(jnp.sum(dp) / jnp.sum(p_a))
        return jnp.where(revived, jnp.inf, g)

    return gain


def histogram_gain(mech: Any, counts: jax.Array) -> _em_core.Gain:
    """The precise log-likelihood change of ``histogram_update`` (one extra O(d) product per call)."""
    matvec, _ = _channel_ops(mech, counts.dtype)
    return log_ratio_gain(lambda p_a, dp: (counts, matvec(p_a), matvec(dp)))


def _float_dtype() -> Any:
    return jnp.zeros(()).dtype  # float64 under x64, else float32


def _start(mech, stats, n, init, alpha, dtype):
    if init is None:
        p_init = _threshold.empirical_threshold(mech, stats, n, alpha)
    else:
        p_init = jnp.asarray(init, dtype)
    return _em_core.start_point(jnp.asarray(p_init, dtype))


def em_stats(mech: Any, stats: jax.Array, n: Any = None, *, tol: Any = None,
             max_iters: int = DEFAULT_MAX_ITERS, accelerate: bool = True, init: Any = None, solver: str = "auto",
             alpha: Any = 0.05, throw: bool = False) -> tuple[jax.Array, _em_core.EMInfo]:
    r"""EM on the output histogram of an item-report mechanism: the MLE of ``p`` on the simplex.

    Pure and vmappable over ``stats`` (repetitions); not jitted internally.

    Args:
      mech: an item-report mechanism (GRR, URR, BinaryCA, or any mechanism with ``channel_matrix``).
      stats: ``int[num_outputs]`` output histogram.
      n: number of reports (unused: the histogram's total is ``n``; accepted for the stats-method signature).
      tol: stopping tolerance on the mean log-likelihood change per report (``_em_core``); ``None`` = dtype
        default; ``"stat"``: stop at the statistical resolution of the data (a step gaining at most
        ``_em_core.STAT_GAIN`` nats in all: within a small fraction of one standard error of the exact MLE).
      max_iters: iteration cap (>= 1).
      accelerate: SQUAREM (default) or plain EM (``False``: ``solver="em"``; kept as an alias of ``solver``).
      solver: ``"auto"`` (SQUAREM), ``"squarem"`` or ``"em"`` (plain EM): the same fixed point.
      init: starting distribution (default: "emp+thr" at level ``alpha``), mixed with 0.1% uniform.
      alpha: level of the "emp+thr" start.
      throw: raise ``RuntimeError`` if EM did not converge (concrete results only).

    Returns:
      ``(p_hat float[d], EMInfo)``.

    Raises:
      ValueError/TypeError: bad ``tol``, ``max_iters``, ``alpha``, ``init``, or a report-vector mechanism.
    """
    tol, max_iters, solver = _em_core.check_options(tol, max_iters, accelerate, solver)
    accelerate = _em_core.no_newton(solver, "EM on aggregate statistics") == "squarem"
    _threshold.check_alpha(alpha)
    _em_core.check_init(init, mech.d)
    throw = _em_core.check_throw(throw)
    _memory.check_call_memory("EM (em_stats)", mech, stage="em")  # static sizes: before any float[d] exists
    if mech.report_kind != "item":
        raise ValueError(f"em_stats needs an item-report mechanism, got mech={type(mech).__name__} with "
                         f"report_kind={mech.report_kind!r}; use em_reports on its reports.")
    stats = jnp.asarray(stats)
    if stats.shape[-1:] != (mech.num_outputs,):
        raise ValueError(f"Expected stats with shape ({mech.num_outputs},), got {tuple(stats.shape)}.")
    dtype = _float_dtype()
    counts = stats.astype(dtype)
    n_total = jnp.sum(counts)
    p0 = _start(mech, counts, n_total, init, alpha, dtype)
    tol, _ = _em_core.resolve_tol(tol, n_total, dtype, _em_core.default_tol(dtype))
    if likelihood_of(mech).ops is not None:  # structured: one compiled solver per mechanism type and shapes
        p_hat, info = _solve_histogram(mech, counts, p0, tol, max_iters, accelerate)
    else:
        p_hat, info = _em_core.run(histogram_update(mech, counts), p0, tol, max_iters, accelerate,
                                   histogram_gain(mech, counts))
    _em_core.maybe_throw(info, throw)
    return p_hat, info


@functools.partial(jax.jit, static_argnums=(4, 5))
def _solve_histogram(mech, counts, p0, tol, max_iters, accelerate):
    return _em_core.run(histogram_update(mech, counts), p0, tol, max_iters, accelerate,
                        histogram_gain(mech, counts))


def likelihood_update(L: jax.Array, w: jax.Array, N: jax.Array) -> _em_core.Update:
    """The EM map on per-report likelihood factors ``L[n, d]`` (weights ``w[n]``) plus invertible counts ``N[d]``."""
    n = jnp.sum(w) + jnp.sum(N)

    def update(p):
        D = L @ p
        pos = w > 0
        safe = jnp.where(D > 0, D, 1.0)
        r = jnp.where(pos, w / safe, 0.0)
        l_rep = jnp.sum(jnp.where(pos, w * jnp.log(safe), 0.0))
        l_inv = jnp.sum(jnp.where(N > 0, N * jnp.log(jnp.where(N > 0, p, 1.0)), 0.0))
        return (p * (r @ L) + N) / n, (l_rep + l_inv) / n

    return update


def likelihood_gain(L: jax.Array, w: jax.Array, N: jax.Array) -> _em_core.Gain:
    """The precise log-likelihood change of ``likelihood_update`` (one extra product with ``L``)."""
    return log_ratio_gain(lambda p_a, dp: (jnp.concatenate([w, N]), jnp.concatenate([L @ p_a, p_a]),
                                            jnp.concatenate([L @ dp, dp])))


@functools.partial(jax.jit, static_argnums=(5, 6))
def _solve_likelihood(L, w, N, p0, tol, max_iters, accelerate):
    return _em_core.run(likelihood_update(L, w, N), p0, tol, max_iters, accelerate, likelihood_gain(L, w, N))


def _check_likelihood_size(mech: Any, terms: Any, max_iters: int) -> None:
    """Refuses, before anything runs, a per-report likelihood larger than ``sizing().likelihood_cells``."""
    shape = terms.bits.shape if isinstance(terms, SupportRatio) else terms[0].shape
    n, d = int(np.prod(shape[:-1])), int(shape[-1])
    if n * d > _sizing.sizing().likelihood_cells:
        raise ValueError(
            f"EM on the per-report likelihood of {type(mech).__name__}(d={mech.d}) with {n} reports iterates over "
            f"{n} x {d} = {n * d:.3g} cells (every iteration, up to max_iters={max_iters}), more than "
            f"{_sizing.sizing().likelihood_cells} (2^26). Use method='emp' or 'norm-sub' (one pass over the aggregated "
            "statistics), or run EM on fewer reports (a random subset) or a smaller domain.")


def em_likelihood(mech: Any, ys: Any, *, tol: Any = None, max_iters: int = DEFAULT_MAX_ITERS,
                  accelerate: bool = True, init: Any = None, throw: bool = False,
                  solver: str = "auto") -> tuple[jax.Array, _em_core.EMInfo]:
    """EM on the per-report likelihood ``mech.likelihood().report(ys)`` (subset, hashed and GLUTF reports).

    Starts from ``init`` (default uniform), mixed with 0.1% uniform; options and stopping rule as in
    ``em_stats`` (``_em_core``; in float32 the stopping statistic is the precise gain of ``likelihood_gain``).
    Returns ``(p_hat float[d], EMInfo)``.
    """
    tol, max_iters, solver = _em_core.check_options(tol, max_iters, accelerate, solver)
    _em_core.check_init(init, mech.d)
    throw = _em_core.check_throw(throw)
    report = likelihood_of(mech).report
    terms = None if report is None else jax.eval_shape(report, ys)  # the form only: nothing runs or compiles
    if terms is None:
        raise ValueError(f"em-pure needs a per-report likelihood (likelihood().report) and mech="
                         f"{type(mech).__name__} has none; use method='em'.")
    _check_likelihood_size(mech, terms, max_iters)
    dtype = _float_dtype()
    p_init = jnp.full((mech.d,), 1.0 / mech.d, dtype) if init is None else jnp.asarray(init, dtype)
    p0 = _em_core.start_point(p_init)
    if isinstance(terms, SupportRatio):  # bits, chunked: never an n x d float likelihood; compiled per bucket
        tol, certify = _em_core.resolve_tol(tol, terms.bits.shape[0], dtype, _em_core.REPORT_TOL)
        gap_tol = _em_newton.gap_tol_of(certify, dtype, dtype)
        p_hat, info = _em_ratio.solve_reports(mech, ys, p0, tol, max_iters, solver, gap_tol)
    else:  # a user's dense factors (L float[n, d], w float[n], N float[d])
        terms = report(ys)
        L, w, N = (jnp.asarray(a, dtype) for a in terms)
        tol, _ = _em_core.resolve_tol(tol, jnp.sum(w) + jnp.sum(N), dtype, _em_core.REPORT_TOL)
        accelerate = _em_core.no_newton(solver, "EM on a dense per-report likelihood") == "squarem"
        p_hat, info = _solve_likelihood(L, w, N, p0, tol, max_iters, accelerate)
    _em_core.maybe_throw(info, throw)
    return p_hat, info


def em(mech: Any, ys: Any, *, return_info: bool = False, **options: Any) -> Any:
    """EM (exact MLE on the simplex) from the reports ``ys`` of any mechanism: the one documented EM entry.

    The likelihood is the mechanism's (protocol methods on ``ul.Mechanism``):

    * item reports: the channel's columns on the output histogram (``em_stats``; structured channels via
      ``likelihood().ops``, else the dense channel);
    * ``likelihood().product`` (RAPPOR/UE, uRAP): the exact product-Bernoulli likelihood on the reported ones
      (``em_reports``; ``ys`` dense ``bool[n, d]``, ``ul.CompactBits`` or ``SupportReports``);
    * ``likelihood().report(ys)`` (SS, OLH, Wheel, GLUTF mechanisms): per-report factors (``em_likelihood``).

    Every form runs through ``_em_core`` (one loop, one stopping rule, SQUAREM by default, ``throw``); the
    per-report bit-vector models (``em_reports``, any d) take projected Newton steps instead (``_em_newton``:
    exact gradient pass, stopping on its certificate ``EMInfo.gap``).

    Range: exact (the MLE of the given reports, to float32 precision) for eps up to 100, the top of the valid
    eps range (tests/estimation/test_em_large_eps.py: OUE at eps 50-100 against a float64 MLE); an estimate's miss
    against the true distribution there is sampling error.

    Args:
      mech: the mechanism.
      ys: its reports.
      return_info: also return the ``EMInfo`` diagnostics.
      **options: ``tol`` (a number, or ``"stat"``: stop at the data's statistical resolution, much sooner; see
        ``em_stats``), ``max_iters``, ``solver`` (``accelerate``), ``init``, ``throw`` (and ``alpha``, ``chunk``,
        ``pass_dtype``, ``layout`` where they apply: see ``em_stats`` / ``em_reports``).

    Returns:
      ``p_hat float[d]``, or ``(p_hat, EMInfo)`` with ``return_info=True``.
    """
    _memory.check_call_memory("EM", mech, stage="em")  # static sizes: before the statistic or any pass exists
    if mech.report_kind == "item":
        _reports.check_reports(mech, ys)
        out = em_stats(mech, mech.aggregate(ys), None, **options)
    elif likelihood_of(mech).product is not None:
        out = _em_reports.em_reports(mech, ys, **options)
    elif likelihood_of(mech).report is None:
        raise ValueError(f"EM on {type(mech).__name__}'s reports (report_kind={mech.report_kind!r}) needs their "
                         "likelihood: define likelihood() with report=(ys -> (L float[n, d], w float[n], N float[d])) "
                         "or, for product-Bernoulli bits, product=(mask, invertible, log_odds).")
    else:
        out = em_likelihood(mech, ys, **options)
    return out if return_info else out[0]


def _em_stats_method(mech: Any, stats: jax.Array, n: Any, **options: Any) -> jax.Array:
    return em_stats(mech, stats, n, **options)[0]


def _em_reports_method(mech: Any, ys: Any, **options: Any) -> jax.Array:
    return em(mech, ys, **options)


def _em_pure_method(mech: Any, ys: Any, **options: Any) -> jax.Array:
    return em_likelihood(mech, ys, **options)[0]


_DOC = "EM reconstruction: exact MLE on the simplex (stats for item reports, reports otherwise)."


def _resolve_em(mech: Any) -> _registry.Method:
    if mech.report_kind == "item":
        return _registry.Method(_em_stats_method, "stats", _DOC)
    return _registry.Method(_em_reports_method, "reports", _DOC, forms=_registry.FORMS)


_registry.register_method("em", _em_reports_method, "reports", _DOC, resolver=_resolve_em, forms=_registry.FORMS)
_registry.register_method(
    "em-pure", _em_pure_method, "reports",
    "EM on per-report likelihoods (likelihood().report): pure bases (SS, OLH, Wheel, GRR, UE) and GLUTF mechanisms.",
    forms=_registry.FORMS)
