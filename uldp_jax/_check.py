"""``ul.check(mech)``: one call that checks a mechanism (a user's own, or any library one) end to end.

Five checks, each on what the mechanism hands over, never on the code path under test:

* **audit**: ``ul.audit`` on the exact channel (the claimed guarantee, checked exactly);
* **sampler**: the sampler against the channel, on every input: ``draws`` reports of each input ``x`` from one
  batched ``perturb_batch`` call, a Pearson chi-square test of each against row ``x`` of the channel, at a
  Bonferroni level ``alpha / d`` (so a correct sampler is flagged with probability at most ``alpha``; one check
  of ``uldp_jax.testing``'s counter, so the test-suite passes ``alpha=testing.ALPHA`` and stays in its budget). The
  audit reads only the channel, so this is what catches a sampler that leaks more than its (honest) channel says;
* **debias**: ``E[debias(stats)] = p`` exactly: for every input ``x`` the expected statistic of ``n`` users
  holding ``x`` is read off the channel (``n Q[x] @ S``, ``S`` the per-report statistic: the report itself,
  its bits, or the mechanism's ``likelihood().support``) and ``debias`` of it must give the unit vector ``e_x``
  (float64, absolute tolerance ``1e-6``). ``debias`` is affine in the statistic, so this is unbiasedness for
  every ``p``. A mechanism whose ``estimator().exact`` is ``False`` (the estimator models an ideal hash family
  that its finite seed family only approximates: Wheel, OLH with ``family="hash"``) gets ``warn`` with its
  measured bias instead of ``FAIL``;
* **rank**: the statistic identifies ``p`` (``E[stats] / n = p @ A`` with ``rank(A) = d``); with a smaller rank
  every estimator of ``p`` from ``stats`` is biased somewhere;
* **draws**: the random words ``perturb_batch`` draws when x64 is enabled (read from its jaxpr, nothing is run).
  A draw without a dtype (``jax.random.uniform(k, shape)``) becomes 64-bit under ``jax_enable_x64``: twice the
  random words per user and different reports. That is a cost, not a wrong law, so the row says ``warn`` and
  ``ok`` does not change; every library sampler passes (``tests/simulate/test_kernels_x64.py``).

A check that cannot run (a channel too large to enumerate, a report space without a per-report statistic, a
sampler that needs more inputs than ``xs``) is reported as skipped with the reason, never as passed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate, testing
from uldp_jax.estimation import _empirical
from uldp_jax.mechanisms.core import _base, _estimation, _grid_check, _records, _report_space, _reports
from uldp_jax.privacy import _audit, _channel

DEBIAS_ATOL = 1e-6  # |debias(E stats | x) - e_x| allowed (float64 evaluation of an exact identity)
DEFAULT_ALPHA = 1e-3  # false-alarm probability of the sampler test (all inputs together)
DEFAULT_DRAWS = 20_000  # reports per input in the sampler test


@dataclasses.dataclass(frozen=True)
class CheckRow:
    """One line of a ``CheckReport``.

    Attributes:
      name: ``"audit"``, ``"sampler"``, ``"debias"``, ``"rank"`` or ``"draws"``.
      status: ``"pass"``, ``"FAIL"``, ``"warn"`` (a cost, not an error: ``ok`` stays true) or ``"skip"``.
      detail: what was measured (or why it was skipped).
    """

    name: str
    status: str
    detail: str


@dataclasses.dataclass(frozen=True, repr=False)
class CheckReport:
    """What ``ul.check`` found; prints as a short table.

    Attributes:
      mechanism: the mechanism's class name.
      rows: one ``CheckRow`` per check, in the order audit, sampler, debias, rank, draws.
    """

    mechanism: str
    rows: tuple[CheckRow, ...]

    @property
    def ok(self) -> bool:
        """No check failed (skipped checks do not fail; see ``skipped``)."""
        return all(r.status != "FAIL" for r in self.rows)

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the failed checks."""
        return tuple(r.name for r in self.rows if r.status == "FAIL")

    @property
    def skipped(self) -> tuple[str, ...]:
        """Names of the checks that could not run."""
        return tuple(r.name for r in self.rows if r.status == "skip")

    def __getitem__(self, name: str) -> CheckRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def __repr__(self) -> str:
        width = max(len(r.name) for r in self.rows)
        lines = [f"ul.check({self.mechanism}): {'ok' if self.ok else 'FAILED: ' + ', '.join(self.failed)}"]
        lines += [f"  {r.name:<{width}}  {r.status:<4}  {r.detail}" for r in self.rows]
        return "\n".join(lines)

    __str__ = __repr__


def _skip(name: str, err: Exception) -> CheckRow:
    return CheckRow(name, "skip", f"{type(err).__name__}: {err}")


def _check_audit(mech: Any) -> tuple[CheckRow, Any]:
    try:
        ch = _channel.channel(mech)
        rep = _audit.audit(mech)
    except (ValueError, NotImplementedError, TypeError) as err:
        if "more than" in str(err) or isinstance(err, NotImplementedError):
            return _skip("audit", err), None
        return CheckRow("audit", "FAIL", f"{type(err).__name__}: {err}"), None
    detail = f"{rep.kind}: eps={rep.eps:.6g} (claimed {rep.nominal_eps:.6g})"
    if not rep.invertible_ok:
        detail += ", an invertible output is reached by a sensitive or a second input"
    return CheckRow("audit", "pass" if rep.ok else "FAIL", detail), ch


def _check_sampler(key: jax.Array, mech: Any, Q: np.ndarray, draws: int, alpha: float) -> CheckRow:
    d = int(mech.d)
    xs = jnp.repeat(jnp.arange(d, dtype=jnp.int32), draws)
    try:
        ys = mech.perturb_batch(key, xs)
        idx = np.asarray(_records.likelihood_of(mech).index(ys)).reshape(d, draws)
    except (TypeError, NotImplementedError) as err:
        return _skip("sampler", err)
    level = alpha / d
    worst_x, worst_p = 0, 1.0
    for x in range(d):  # d chi-square tests on host (d is small: the channel was enumerated)
        counts = np.bincount(idx[x], minlength=Q.shape[1])
        if counts.shape[0] > Q.shape[1]:
            return CheckRow("sampler", "FAIL", f"input {x} produced report column {counts.shape[0] - 1} outside "
                            f"the channel's {Q.shape[1]} columns")
        pvalue = testing.chi_square(counts, Q[x]).pvalue
        if pvalue < worst_p:
            worst_x, worst_p = x, pvalue
    # one check of the statistical budget (``testing.fits``: counted, Bonferroni p-value over the d inputs)
    status = "pass" if testing.fits(min(1.0, d * worst_p), alpha) else "FAIL"
    return CheckRow("sampler", status, f"{draws} draws per input; smallest chi-square p-value {worst_p:.3g} "
                    f"(input {worst_x}); level {level:.2g} (alpha={alpha:g} over {d} inputs)")


def _report_statistic(mech: Any, m: int) -> np.ndarray | None:
    """``S float64[m, num_stats]``: the statistic one report of each channel column adds, when known."""
    k = int(_report_space.num_stats(mech))
    columns = _report_space.own(mech).columns
    if columns is not None:
        return np.asarray(columns(), np.float64)
    if mech.report_kind == "item" and k == m:
        return np.eye(m)
    if mech.report_kind == "bits" and 2**k == m:
        return _reports.bits_table(k).astype(np.float64)
    S = _records.likelihood_of(mech).support()
    if S is not None and np.shape(S) == (m, k):
        return np.asarray(S, np.float64)
    return None


def _check_debias(mech: Any, Q: np.ndarray) -> tuple[CheckRow, np.ndarray | None]:
    S = _report_statistic(mech, Q.shape[1])
    if S is None:
        return CheckRow("debias", "skip", f"no per-report statistic for report_kind={mech.report_kind!r} "
                        "(item or bit reports, or likelihood().support with num_stats columns)"), None
    A = Q @ S  # [d, num_stats]: E[stats] / n for n users holding x
    n = 1000.0
    try:
        with jax.enable_x64(True):
            mech64 = _channel.as_float64(mech)
            est = np.stack([np.asarray(_estimation.debias(mech64, jnp.asarray(n * A[x]), jnp.float64(n)), np.float64)
                            for x in range(A.shape[0])])
    except (TypeError, ValueError, NotImplementedError) as err:
        return _skip("debias", err), A
    err = np.abs(est - np.eye(A.shape[0], est.shape[-1]))
    worst = float(err.max()) if err.size else 0.0
    x, j = np.unravel_index(int(np.argmax(err)), err.shape)
    status = "pass" if np.isfinite(worst) and worst <= DEBIAS_ATOL else "FAIL"
    note = f"tolerance {DEBIAS_ATOL:g}"
    if status == "FAIL" and np.isfinite(worst) and not getattr(mech.estimator(), "exact", True):
        # The mechanism declares its estimator the model of an ideal hash family (Estimator.exact = False): the
        # bias of its finite family is expected and exactly computable, so it is reported, not failed.
        status, note = "warn", "estimator().exact is False: the bias of a finite hash family, as declared"
    return CheckRow("debias", status, f"max |E[debias] - p| = {worst:.3g} over point masses (input {x}, item {j}); "
                    f"{note}"), A


def _check_rank(mech: Any, A: np.ndarray | None) -> CheckRow:
    if A is None:
        try:
            rank, d = _empirical.statistic_rank(mech)
        except (NotImplementedError, ValueError, TypeError) as err:
            return _skip("rank", err)
    else:
        rank, d = int(np.linalg.matrix_rank(A)), int(A.shape[0])
    status = "pass" if rank >= d else "FAIL"
    detail = f"rank {rank} of d={d}" + ("" if rank >= d else ": p is not identifiable from the statistic")
    return CheckRow("rank", status, detail)


def _eqns(jaxpr: Any):
    """Every equation of a jaxpr, its sub-jaxprs (scan, cond, pjit, custom rules) included."""
    for eqn in jaxpr.eqns:
        yield eqn
        for v in eqn.params.values():
            for j in (v if isinstance(v, (tuple, list)) else (v,)):
                inner = getattr(j, "jaxpr", j)
                if hasattr(inner, "eqns"):
                    yield from _eqns(inner)


def _check_draws(key: jax.Array, mech: Any) -> CheckRow:
    xs = jnp.arange(int(mech.d), dtype=jnp.int32)
    try:
        with jax.enable_x64(True):
            jaxpr = jax.make_jaxpr(lambda k: mech.perturb_batch(k, xs))(key).jaxpr
    except (TypeError, ValueError, NotImplementedError) as err:
        return _skip("draws", err)
    widths = {np.dtype(v.aval.dtype).itemsize * 8 for e in _eqns(jaxpr) if "random" in e.primitive.name
              for v in e.outvars if not jax.dtypes.issubdtype(v.aval.dtype, jax.dtypes.prng_key)}
    if not widths:
        return CheckRow("draws", "pass", "perturb_batch draws no random words")
    if max(widths) <= 32:
        return CheckRow("draws", "pass", "32-bit random words, also under jax_enable_x64")
    return CheckRow("draws", "warn", f"{max(widths)}-bit random words under jax_enable_x64: give every jax.random "
                    "call a dtype (jnp.float32, jnp.int32) so that x64 changes neither the reports nor the cost")


def check(mech: _base.Mechanism, *, key: jax.Array | None = None, draws: int = DEFAULT_DRAWS,
          alpha: float = DEFAULT_ALPHA) -> CheckReport:
    """Checks a mechanism: exact audit, sampler versus channel on every input, debias exactness, rank, draws.

    Args:
      mech: one mechanism with an exact channel (small domain); index a grid first.
      key: PRNG key for the sampler test. Default ``jax.random.key(0)``: ``check`` is a diagnostic with a fixed,
        documented seed (the same mechanism gets the same verdict); pass a key to draw again.
      draws: reports per input in the sampler test.
      alpha: false-alarm probability of the sampler test over all inputs (Bonferroni).

    Returns:
      A ``CheckReport`` (``.ok``, ``.failed``, ``report["sampler"]``; printing it shows a table).

    Raises:
      TypeError: ``mech`` is not a mechanism, or ``key`` not a PRNG key.
      ValueError: a grid, a bad ``draws``/``alpha``, or a mechanism outside the documented ranges.
    """
    if not isinstance(mech, _base.Mechanism):
        raise TypeError(f"Expected mech to be a mechanism (a ul.Mechanism subclass), got {type(mech).__name__}.")
    _grid_check.validate_grid(mech)
    shape = _grid_check.grid_shape(mech)
    if shape:
        raise ValueError(f"Expected one mechanism, got a grid of shape {shape}; check each point, "
                         "e.g. jax.tree.map(lambda v: v[i], mech).")
    draws = _validate.check_int("draws", draws, minimum=100)
    _validate.as_param("alpha", alpha, lower=0.0, upper=1.0)
    key = jax.random.key(0) if key is None else _validate.check_key(key)
    audit_row, ch = _check_audit(mech)
    if ch is None:
        reason = "no exact channel (see the audit row)"
        rows = (audit_row, CheckRow("sampler", "skip", reason), CheckRow("debias", "skip", reason),
                CheckRow("rank", "skip", reason), _check_draws(key, mech))
        return CheckReport(type(mech).__name__, rows)
    sampler_row = _check_sampler(key, mech, ch.Q, draws, float(alpha))
    debias_row, A = _check_debias(mech, ch.Q)
    return CheckReport(type(mech).__name__, (audit_row, sampler_row, debias_row, _check_rank(mech, A),
                                             _check_draws(key, mech)))
