"""The estimator rows of ``ul.check``: the per-report statistic, ``debias`` and ``rank``.

``S float64[m, num_stats]`` is the statistic one report of each channel column adds (item reports: the item;
bit vectors: their bits; else ``likelihood().support`` with ``num_stats`` columns, or ``statistic=`` given to
``ul.check`` for a custom report kind). It is checked against ``aggregate`` on the sampled reports, then
``A = Q @ S`` (``E[stats] / n = p @ A``) gives:

* ``debias``: ``debias(stats, n)`` returns ``d`` values; ``debias(n A[x], n) = e_x`` (float64, absolute tolerance
  ``DEBIAS_ATOL``) for every input ``x`` at two values of ``n`` (a ``debias`` that ignores ``n`` fails); and it is
  affine in the statistic: at the statistics ``n S[y]`` of a few report columns and a random mixture of them,
  ``debias(sum_k w_k s_k) = sum_k w_k debias(s_k)`` (a ``debias`` clipped at 0 fails). Affine and exact on the
  point masses is unbiased for every ``p``. A mechanism whose ``estimator().exact`` is ``False`` (an estimator
  modelling an ideal hash family: Wheel, OLH with ``family="hash"``) gets ``warn`` with its measured bias
  instead of ``FAIL``;
* ``rank``: the statistic identifies ``p`` (``rank(A) = d``); with a smaller rank every estimator of ``p`` from
  ``stats`` is biased somewhere.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.checks._report import CheckRow, skip
from uldp_jax.estimation import _empirical
from uldp_jax.mechanisms.core import _estimation, _records, _report_space, _reports
from uldp_jax.privacy import _channel

_aggregate = jax.jit(lambda mech, ys, w: mech.aggregate(ys, w))  # one program for the d inputs' weights
DEBIAS_ATOL = 1e-6  # |debias(E stats | x) - e_x| allowed (float64 evaluation of an exact identity)
DEBIAS_NS = (1000.0, 17.0)  # the numbers of users the point masses are debiased at
AFFINE_COLUMNS = 8  # report columns whose statistics (and a mixture of them) test affinity


class Statistic(NamedTuple):
    """The per-report statistic ``S float64[m, num_stats]``; ``table=None`` is the identity (item reports: the
    statistic is the histogram of the columns), never formed (``m`` may be large)."""

    table: np.ndarray | None

    def of(self, M: np.ndarray) -> np.ndarray:
        """``M @ S`` for ``M float[..., m]`` (counts, or the channel: ``Q @ S = A``)."""
        return M if self.table is None else M @ self.table


def report_statistic(mech: Any, m: int, statistic: Any = None) -> Statistic | None:
    """``S`` (``statistic`` when given, checked), or ``None`` when unknown.

    Raises:
      ValueError: ``statistic`` is not a finite ``[m, num_stats]`` array.
    """
    k = int(_report_space.num_stats(mech))
    if statistic is not None:
        S = np.asarray(statistic, np.float64)
        if S.shape != (m, k) or not np.all(np.isfinite(S)):
            raise ValueError(f"Expected statistic to be a finite float[{m}, {k}] array (the statistic one report "
                             f"of each channel column adds to aggregate's {k} entries), got shape {S.shape}.")
        return Statistic(S)
    columns = _report_space.own(mech).columns  # the mechanism's own per-column statistic (uBD, HPGR)
    if columns is not None:
        return Statistic(np.asarray(columns(), np.float64))
    if mech.report_kind == "item" and k == m:
        return Statistic(None)
    if mech.report_kind == "bits" and 2**k == m:
        return Statistic(_reports.bits_table(k).astype(np.float64))
    S = _records.likelihood_of(mech).support()
    if S is not None and np.shape(S) == (m, k):
        return Statistic(np.asarray(S, np.float64))
    return None


def statistic_mismatch(mech: Any, S: Statistic, m: int, xs: np.ndarray, ys: Any, cols: np.ndarray) -> str | None:
    """Where ``aggregate`` of each input's sampled reports differs from their column counts ``@ S`` (or None)."""
    d = int(xs.max()) + 1
    draws = xs.shape[0] // d
    for x in range(d):  # aggregate with a 0/1 weight per user: one shape for every input
        got = np.asarray(_aggregate(mech, ys, jnp.asarray(xs == x)), np.float64)
        want = S.of(np.bincount(cols[x * draws:(x + 1) * draws], minlength=m).astype(np.float64))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            return (f"aggregate of input {x}'s {draws} reports is not their column counts @ statistic "
                    f"(shape {got.shape} vs {want.shape}, max difference "
                    f"{np.max(np.abs(got - want)) if got.shape == want.shape else float('nan'):.3g})")
    return None


def _affinity_error(f: Any, S: Statistic, reachable: np.ndarray, n: float) -> float:
    """``max |debias(sum_k w_k s_k) - sum_k w_k debias(s_k)|``, relative to the size of the values, at the
    statistics ``s_k = n S[y_k]`` of a few reachable columns (fixed seed: the check is deterministic)."""
    rng = np.random.default_rng(0)
    cols = np.flatnonzero(reachable)
    cols = rng.choice(cols, size=min(AFFINE_COLUMNS, cols.size), replace=False)
    if cols.size < 2:
        return 0.0
    w = rng.dirichlet(np.ones(cols.size))
    one_hot = np.zeros((cols.size, reachable.size))
    one_hot[np.arange(cols.size), cols] = 1.0
    rows = S.of(one_hot)  # [K, num_stats]: S[y_k]
    each = np.stack([f(n * r, n) for r in rows])
    mixed = f(n * (w @ rows), n)
    return float(np.max(np.abs(mixed - w @ each)) / max(1.0, float(np.max(np.abs(each)))))


def check_debias(mech: Any, Q: np.ndarray, S: Statistic | None) -> CheckRow:
    """The ``debias`` row (see the module docstring)."""
    if S is None:
        return skip("debias", f"no per-report statistic for report_kind={mech.report_kind!r}: pass "
                    "ul.check(mech, statistic=S), S[y] the statistic one report of channel column y adds")
    d = int(mech.d)
    if Q.shape[0] != d:
        return skip("debias", f"the channel has {Q.shape[0]} inputs for d={d} items")
    A = S.of(Q)
    try:
        with jax.enable_x64(True):
            mech64 = _channel.as_float64(mech)

            def f(stats: np.ndarray, n: float) -> np.ndarray:
                return np.asarray(_estimation.debias(mech64, jnp.asarray(stats), jnp.float64(n)), np.float64)

            shape = f(DEBIAS_NS[0] * A[0], DEBIAS_NS[0]).shape
            if shape != (d,):
                return CheckRow("debias", "FAIL", f"debias returned shape {shape}; expected ({d},), one estimate "
                                "per item")
            est = {n: np.stack([f(n * A[x], n) for x in range(d)]) for n in DEBIAS_NS}
            affinity = _affinity_error(f, S, Q.sum(axis=0) > 0, DEBIAS_NS[0])
    except (TypeError, ValueError, NotImplementedError) as err:
        return skip("debias", err)
    errs = {n: np.abs(e - np.eye(d)) for n, e in est.items()}
    n_worst = max(errs, key=lambda n: float(np.nan_to_num(errs[n], nan=np.inf).max()))
    err = np.nan_to_num(errs[n_worst], nan=np.inf)
    worst = float(err.max())
    x, j = np.unravel_index(int(np.argmax(err)), err.shape)
    measured = (f"max |E[debias] - p| = {worst:.3g} over point masses (input {x}, item {j}, n={n_worst:g}); "
                f"affinity error {affinity:.2g}")
    if not np.isfinite(affinity) or affinity > DEBIAS_ATOL:
        return CheckRow("debias", "FAIL", f"debias is not affine in the statistic: {measured} (a clipped or "
                        "otherwise non-linear debias is biased)")
    if np.isfinite(worst) and worst <= DEBIAS_ATOL:
        return CheckRow("debias", "pass", f"{measured}; tolerance {DEBIAS_ATOL:g}")
    bias_only = np.isfinite(worst) and all(np.allclose(e, est[DEBIAS_NS[0]], atol=DEBIAS_ATOL) for e in est.values())
    record = mech.estimator()
    if bias_only and record is not None and not record.exact:
        # The mechanism declares its estimator the model of an ideal hash family (Estimator.exact = False): the
        # bias of its finite family is expected and exactly computable, so it is reported, not failed.
        return CheckRow("debias", "warn", f"{measured}; estimator().exact is False: the bias of a finite hash "
                        "family, as declared")
    hint = "" if bias_only else " (it changes with n: debias must use the n it is given)"
    return CheckRow("debias", "FAIL", f"{measured}; tolerance {DEBIAS_ATOL:g}{hint}")


def check_rank(mech: Any, Q: np.ndarray | None, S: Statistic | None) -> CheckRow:
    """The ``rank`` row: ``rank(Q @ S)`` against ``d``."""
    if Q is None or S is None:
        try:
            rank, d = _empirical.statistic_rank(mech)
        except (NotImplementedError, ValueError, TypeError) as err:
            return skip("rank", err)
    else:
        rank, d = int(np.linalg.matrix_rank(S.of(Q))), int(Q.shape[0])
    status = "pass" if rank >= d else "FAIL"
    return CheckRow("rank", status, f"rank {rank} of d={d}" + ("" if rank >= d else
                                                                ": p is not identifiable from the statistic"))
