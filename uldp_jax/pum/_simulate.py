"""Monte Carlo runs of the personalized-mechanism scenario (001 §6.2): reps on device, no Python user loops.

The pre-processors are deterministic, so ``Q^(i)(x_i) = Q_cmn(f_pre^(i)(x_i))``: the intermediate items
``zs = f_pre(xs)`` are computed once and the common mechanism is simulated on them by the engine
(``uldp_jax.engine``: one plan, its block layout and ``fold_in(key, rep)`` randomness), then every repetition
is estimated with the registered method and eq 21 is applied under each prior case.

Report-based methods (e.g. EM on per-report likelihoods) run on the engine's report path: the reports are those
of the engine's per-user block layout, so they aggregate to the stats ``ul.simulate_stats`` gives for the same
key and ``block_size``. (Before the engine package, this module drew every repetition's reports as one
``perturb_batch`` over all users, with no user blocks; report-based estimates therefore changed for the same
key, in their random draws only, not in law. Stats-based methods give the same numbers as before.)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.engine import _kernels, _plan, _reports
from uldp_jax.pum import _mechanism as _pum
from uldp_jax.pum import _estimate

DEFAULT_PRIORS = {"I": None, "III": "true"}


class PUMSimResult(NamedTuple):
    """Output of ``simulate_pum``.

    Attributes:
      r: float ``[reps, d + K]``: ``r_hat`` per repetition.
      estimates: ``{case: PUMEstimate}`` with a leading ``[reps]`` axis.
      losses: ``{case: PUMLoss}`` float64 ``[reps]`` (Theorem 1's terms against ``truth``).
      truth: ``PUMTruth`` the estimates are measured against: the population's (``population``) when given, else
        the simulated users' own.
      stats: int32 ``[reps, num_stats]`` aggregates of ``Q_cmn`` (``None`` for report-based methods).
    """

    r: jax.Array
    estimates: dict
    losses: dict
    truth: _estimate.PUMTruth
    stats: Any


def simulate_pum(key: jax.Array, mech: _pum.PUM, xs: Any, personal: Any, *, priors: dict | None = None,
                 reps: int = 1, method: str = "emp", method_options: dict | None = None, rep_batch: int | None = None,
                 population: Any = None, **sim_options: Any) -> PUMSimResult:
    """Runs ``reps`` repetitions of the PUM on fixed users and estimates ``p`` under several prior cases.

    Args:
      key: PRNG key; repetition ``r`` uses ``fold_in(key, r)``.
      mech: a ``PUM``.
      xs: ``int[n]`` the users' items.
      personal: ``int[n, K]`` or ``int[n, K, r]`` their personal sensitive items per tag (``-1`` = none).
      priors: ``{case name: None | float[K, d] | "true"}``; ``None`` is case (I), an array case (II),
        ``"true"`` the true ``pi_k`` of the *population* (case III of 001 §5.3). Default
        ``{"I": None, "III": "true"}``.
      reps: number of repetitions.
      method: estimation method for ``r`` over ``Z`` (``ul.estimation.method_names()``).
      method_options: options of ``method``.
      rep_batch: repetitions vectorised together (report-based methods; forwarded to the engine).
      population: ``(pop_xs, pop_personal)``, the items and personal items of the whole population the users
        ``xs`` were sampled from (001 §6.1: the truth is the population's distribution), or a ``PUMTruth``
        (``ul.pum_truth(mech, pop_xs, pop_personal)``). Case (III)'s ``"true"`` prior and the losses then use the
        population's ``p``, ``r`` and ``pi_k``, so the error includes the users' sampling error. ``None``: the
        users are the whole population (their empirical distribution is the truth).
      **sim_options: forwarded to the engine's plan, as for ``ul.simulate_stats`` (``block_size``,
        ``chunk_blocks``, ``path``, ...).

    Returns:
      ``PUMSimResult``.
    """
    _validate.check_key(key)
    if not isinstance(mech, _pum.PUM):
        raise TypeError(f"Expected mech to be a PUM, got {type(mech).__name__}.")
    reps = _validate.check_int("reps", reps, minimum=1)
    if rep_batch is not None:
        rep_batch = _validate.check_int("rep_batch", rep_batch, minimum=1)
        sim_options["rep_batch"] = rep_batch
    priors = dict(DEFAULT_PRIORS if priors is None else priors)
    if not priors:
        raise ValueError("Expected priors to name at least one case.")
    if population is None:
        truth = _estimate.pum_truth(mech, xs, personal)
    elif isinstance(population, _estimate.PUMTruth):
        truth = population
        if np.shape(truth.pi) != (mech.num_tags, mech.d) or np.shape(truth.r) != (mech.d + mech.num_tags,):
            raise ValueError("Expected population to be a PUMTruth of this mechanism (pi [K, d], r [d + K]).")
    elif isinstance(population, (tuple, list)) and len(population) == 2:
        truth = _estimate.pum_truth(mech, population[0], population[1])
    else:
        raise TypeError("Expected population to be None, (pop_xs, pop_personal) or a PUMTruth, "
                        f"got {type(population).__name__}.")
    resolved = {}
    for name, prior in priors.items():
        if isinstance(prior, str):
            if prior != "true":
                raise ValueError(f"Expected priors[{name!r}] to be None, an array or 'true', got {prior!r}.")
            prior = truth.pi
        resolved[name] = _estimate.check_prior(mech, prior)
    zs = jnp.asarray(_pum.preprocess_np(mech.d, np.asarray(xs), np.asarray(personal)), jnp.int32)
    options = dict(method_options or {})
    plan = _plan.make_plan(key, mech.cmn, xs=zs, reps=reps, methods=(method,), method_options={method: options},
                           **sim_options)  # the method is resolved once, for Q_cmn
    spec = plan.methods[method]
    if spec.input == "stats":
        stats, n = _kernels.run_stats(plan, key, sim_options.get("progress", False)), plan.n
        r_hat = jax.vmap(lambda st: spec.fn(mech.cmn, st, n, **options))(stats)
    else:
        stats = None
        with _kernels.progress_bar(sim_options.get("progress", False), plan) as bar:
            r_hat = _reports.report_estimates(key, plan, method, bar)
    estimates, losses = {}, {}
    for name, prior in resolved.items():  # a few prior cases, not users or reps
        est = _estimate.combine(mech, r_hat, prior)
        estimates[name] = est
        losses[name] = _estimate.pum_loss(mech, est, truth)
    return PUMSimResult(r_hat, estimates, losses, truth, stats)
