"""``ul.check(mech)``: one call that checks a mechanism (a user's own, or any library one) end to end.

Nine rows, each on what the mechanism hands over, never on the code path under test (``uldp_jax/checks/``):

* **audit**: ``ul.audit`` on the exact channel (the claimed guarantee, checked exactly);
* **keys**: the reports depend on the key (two keys, ``ul.simulate``'s repetitions 0 and 1, give different
  reports, compiled as ``ul.simulate`` runs it): a ``perturb_batch`` that ignores its key or draws with NumPy
  fails;
* **reports**: every sampled report lies in the declared report space and is a column of the channel; a report
  outside is named with its input (negative items, a ``[n, 2]`` array, float items);
* **sampler**: ``draws`` reports of each input from one batched ``perturb_batch`` call, a Pearson chi-square test
  of each against its row of the channel at the Bonferroni level ``(alpha / 2) / d``;
* **leak**: a black-box lower bound on the eps the sampler spends (``ul.audit_sampler``'s method: events chosen
  on the sampler row's reports, bounded on ``trials`` fresh reports per input, confidence ``1 - alpha / 2``),
  against the claim: catches what the chi-square test pools away (a leak into rare outputs) or lacks the power
  for (a small excess on every input), with the number;
* **debias**: ``debias`` gives ``d`` values, ``E[debias] = p`` exactly on every point mass at two values of ``n``,
  and it is affine in the statistic (so unbiased for every ``p``), from the per-report statistic (the report
  itself, its bits, ``likelihood().support``, or ``statistic=``), itself checked against ``aggregate``;
* **rank**: the statistic identifies ``p``;
* **likelihood**: the likelihood EM runs on (``likelihood()``'s ``product``, ``report``, ``ops``) is proportional
  to the exact channel's columns;
* **draws**: the random words ``perturb_batch`` draws: 64-bit under x64 is a ``warn`` (a cost), narrower than 32
  bits (float16 draws) rounds the law and is flagged with the eps it realizes.

The sampler and leak rows are statistical, each at level ``alpha / 2``: a correct mechanism fails ``ul.check``
with probability at most ``alpha`` (each is one check of ``uldp_jax.testing``'s counter, so the test suite passes
``alpha=testing.ALPHA``). Every other row is exact, or decided at a probability below ``1e-12``. A check that
cannot run is reported as skipped with the reason, and the verdict says how many were skipped: never a bare "ok".
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from uldp_jax import _validate, testing
from uldp_jax.checks import _draws, _estimator, _leak, _likelihood, _sample
from uldp_jax.checks._report import CheckReport, CheckRow, skip
from uldp_jax.mechanisms.core import _base, _grid_check
from uldp_jax.privacy import _audit, _channel

DEFAULT_ALPHA = 1e-3  # false-alarm probability of the whole check (sampler and leak rows, alpha / 2 each)
DEFAULT_DRAWS = 20_000  # reports per input in the sampler test
DEFAULT_TRIALS = 200_000  # reports per input in the black-box eps bound

__all__ = ["CheckReport", "CheckRow", "check"]


def _check_audit(mech: Any) -> tuple[CheckRow, Any]:
    try:
        rep = _audit.audit(mech)
        ch = None if rep.source == "density" else _channel.channel(mech)  # real-valued reports: no channel
    except (ValueError, NotImplementedError, TypeError) as err:
        if "more than" in str(err) or isinstance(err, NotImplementedError):
            return skip("audit", err), None
        return CheckRow("audit", "FAIL", f"{type(err).__name__}: {err}"), None
    detail = f"{rep.kind}: eps={rep.eps:.6g} (claimed {rep.nominal_eps:.6g})"
    if not rep.invertible_ok:
        detail += ", an invertible output is reached by a sensitive or a second input"
    if rep.source == "density":
        detail += ", exact from the report density (real-valued reports: no finite channel)"
    return CheckRow("audit", "pass" if rep.ok else "FAIL", detail), ch


def _draws_row(key: jax.Array, mech: Any, ch: Any) -> CheckRow:
    widths = _draws.random_widths(key, mech)
    if isinstance(widths, CheckRow):
        return widths
    realized = None
    if widths and min(widths) < 32 and ch is not None:
        E = np.asarray(mech.privacy_spec().E, np.float64)
        realized = _draws.realized_eps(jax.random.fold_in(key, 3), mech, ch.Q, np.asarray(ch.protected, bool), E)
    return _draws.check_draws(widths, realized)


def check(mech: _base.Mechanism, *, key: jax.Array | None = None, draws: int = DEFAULT_DRAWS,
          trials: int = DEFAULT_TRIALS, alpha: float = DEFAULT_ALPHA, statistic: Any = None) -> CheckReport:
    """Checks a mechanism: exact audit, keys, report space, sampler versus channel, black-box eps bound, debias,
    rank, likelihood, draws (see the module docstring).

    Args:
      mech: one mechanism with an exact channel (small domain); index a grid first.
      key: PRNG key for the sampled rows. Default ``jax.random.key(0)``: ``check`` is a diagnostic with a fixed,
        documented seed (the same mechanism gets the same verdict); pass a key to draw again.
      draws: reports per input in the sampler test.
      trials: fresh reports per input in the black-box eps bound (rounded up to a multiple of ``draws``).
      alpha: false-alarm probability of the whole check (the sampler and leak rows, ``alpha / 2`` each).
      statistic: ``float[num_outputs, num_stats]``, the statistic one report of each channel column adds to
        ``aggregate`` (for a custom report kind; items, bit vectors and ``likelihood().support`` give it).

    Returns:
      A ``CheckReport`` (``.ok``, ``.verdict``, ``.failed``, ``.skipped``, ``report["leak"]``; printing it shows a
      table).

    Raises:
      TypeError: ``mech`` is not a mechanism, or ``key`` not a PRNG key.
      ValueError: a grid, a bad ``draws``/``trials``/``alpha``/``statistic``, or a mechanism outside the
        documented ranges.
    """
    if not isinstance(mech, _base.Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    _grid_check.validate_grid(mech)
    shape = _grid_check.grid_shape(mech)
    if shape:
        raise ValueError(f"Expected one mechanism, got a grid of shape {shape}; check each point, "
                         "e.g. jax.tree.map(lambda v: v[i], mech).")
    draws = _validate.check_int("draws", draws, minimum=100)
    trials = _validate.check_int("trials", trials, minimum=100)
    alpha = float(_validate.as_param("alpha", alpha, lower=0.0, upper=1.0))
    key = jax.random.key(0) if key is None else _validate.check_key(key)
    audit_row, ch = _check_audit(mech)
    if ch is None:
        reason = "no exact channel (see the audit row)"
        names = ("keys", "reports", "sampler", "leak", "debias", "rank", "likelihood")
        rows = [audit_row] + [skip(n, reason) for n in names] + [_draws_row(key, mech, None)]
        return CheckReport(type(mech).__name__, tuple(rows))
    Q, m = ch.Q, ch.Q.shape[1]
    S = _estimator.report_statistic(mech, m, statistic)
    rep_keys = (jax.random.fold_in(key, 0), jax.random.fold_in(key, 1))  # ul.simulate's repetitions 0 and 1
    sample = _sample.draw(rep_keys[0], mech, Q.shape[0], draws)
    cols = None
    if isinstance(sample, CheckRow):
        keys_row, reports_row, sampler_row = (skip(n, sample.detail) for n in ("keys", "reports", "sampler"))
    else:
        keys_row = _sample.check_keys(rep_keys, mech, Q, sample)
        reports_row, cols = _sample.check_reports(mech, sample, m)
        sampler_row = (skip("sampler", "reports outside the report space (see the reports row)") if cols is None
                       else _sample.check_sampler(sample, cols, Q, alpha / 2.0))
    if cols is None:
        leak_row = skip("leak", "no sampled reports in the channel's columns (see the reports row)")
    else:
        bound = _leak.eps_bound(jax.random.fold_in(key, 4), mech, sample.xs, cols, m,
                                np.asarray(ch.protected, bool), trials, alpha / 2.0)
        leak_row = _leak.check_leak(bound)
        testing.counted(leak_row.status != "FAIL")  # one check of the statistical budget, at level alpha / 2
    debias_row = _estimator.check_debias(mech, Q, S)
    if S is not None and cols is not None and debias_row.status != "skip":
        mismatch = _estimator.statistic_mismatch(mech, S, m, sample.xs, sample.ys, cols)
        if mismatch is not None:
            debias_row = CheckRow("debias", "FAIL", f"the per-report statistic is wrong: {mismatch}")
    rows = (audit_row, keys_row, reports_row, sampler_row, leak_row, debias_row, _estimator.check_rank(mech, Q, S),
            _likelihood.check_likelihood(mech, Q, sample.ys if cols is not None else None, cols),
            _draws_row(key, mech, ch))
    return CheckReport(type(mech).__name__, rows)
