"""The sampler rows of ``ul.check``: one batch of reports of every input, then

* ``keys``: the reports depend on the key: compiled as ``ul.simulate`` runs it, two keys (its repetitions 0 and
  1, ``fold_in(key, r)``) give different reports (a ``perturb_batch`` that ignores its key does not, nor one that
  draws with NumPy or Python randomness: compiling freezes its numbers into constants, the same reports for
  every key and every repetition);
* ``reports``: every report lies in the declared report space (``check_reports``: the item / bit-vector forms or
  the mechanism's own ``reports().check``) and is a column of the channel (``likelihood().index``). A report
  outside is named, with its input: a negative item, an ``[n, 2]`` array, a float item whose fraction names the
  input (item and bit reports are their column, so nothing beyond the column can travel in them). A field of a
  custom report pytree that ``index`` ignores is not tested here (GLUTF's base report when ``has_base`` is
  False is such a field, drawn independently of the input);
* ``sampler``: a Pearson chi-square test of each input's reports against its row of the channel.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import testing
from uldp_jax.checks._report import CheckRow, skip
from uldp_jax.mechanisms.core import _records, _reports

# Every sampled row calls perturb_batch through this one compiled function, as ``ul.simulate`` runs it: one
# program per mechanism class and batch shape (eps is a traced leaf), reused by every call of the check.
perturb = jax.jit(lambda mech, key, xs: mech.perturb_batch(key, xs))
KEY_COLLISION = 1e-12  # P(an honest sampler repeats every report for a second key) at most this: no budget


class Sample(NamedTuple):
    """Reports of every input, input-major (``draws`` of input 0, then of input 1, ...)."""

    xs: np.ndarray  # int32[n]: the input of each report
    ys: Any  # perturb_batch's report pytree, leading axis n
    n: int  # number of reports


def draw(key: jax.Array, mech: Any, d: int, draws: int) -> Sample | CheckRow:
    """``draws`` reports of each of the ``d`` inputs from one batched ``perturb_batch`` call (or a skip row)."""
    xs = np.repeat(np.arange(d, dtype=np.int32), draws)
    try:
        ys = perturb(mech, key, jnp.asarray(xs))
    except (TypeError, NotImplementedError) as err:
        return skip("sampler", err)
    return Sample(xs, ys, xs.shape[0])


def _same(a: Any, b: Any) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in zip(la, lb))


def check_keys(keys: tuple[jax.Array, jax.Array], mech: Any, Q: np.ndarray, sample: Sample) -> CheckRow:
    """The ``keys`` row (see the module docstring): ``sample`` was drawn with ``keys[0]``; one more batch of the
    same inputs with ``keys[1]`` (the same compiled program)."""
    log_c = float(np.sum(np.log(np.maximum(np.sum(Q**2, axis=1), 1e-300))))  # log P(one user of each x repeats)
    reps = sample.n // Q.shape[0]
    if log_c > -1e-12:
        return skip("keys", "every input has one report (a deterministic channel): nothing depends on the key")
    if reps * log_c > math.log(KEY_COLLISION):
        return skip("keys", f"the channel is too close to deterministic: {sample.n} users repeat with "
                    f"probability {math.exp(reps * log_c):.2g} > {KEY_COLLISION:g}")
    xs = jnp.asarray(sample.xs)
    try:
        other = perturb(mech, keys[1], xs)
    except (TypeError, NotImplementedError) as err:
        return skip("keys", err)
    users = f"{sample.n} users ({reps} of each input)"
    if _same(sample.ys, other):
        return CheckRow("keys", "FAIL", f"the same reports of {users} for two keys (ul.simulate's repetitions 0 "
                        "and 1), compiled as ul.simulate runs it: perturb_batch ignores its key, or draws with "
                        "NumPy / Python randomness, which compiling freezes into constants")
    return CheckRow("keys", "pass", f"{users}: two keys give different reports (an honest sampler repeats "
                    f"with probability <= {KEY_COLLISION:g})")


def _report_at(sample: Sample, i: int) -> str:
    """``input 3 gave report -1``: report ``i`` and its input."""
    def row(a: Any) -> Any:
        a = np.asarray(a)
        return a[i].tolist() if a.ndim and a.shape[0] == sample.n else a.tolist()

    return f"input {int(sample.xs[i])} gave report {jax.tree.map(row, sample.ys)!r}"


def _first_outside(sample: Sample, m: int, item: bool) -> int:
    """The first item report that is not an integer in ``[0, m)`` (else 0: the first report)."""
    leaves = jax.tree_util.tree_leaves(sample.ys)
    if not (item and len(leaves) == 1 and np.ndim(leaves[0]) == 1 and np.shape(leaves[0])[0] == sample.n):
        return 0
    arr = np.asarray(leaves[0])
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(arr) & (arr == np.round(arr)) & (arr >= 0) & (arr < m))
    return int(np.argmax(bad)) if bad.any() else 0


def check_reports(mech: Any, sample: Sample, m: int) -> tuple[CheckRow, np.ndarray | None]:
    """The ``reports`` row and, when it passes, each report's channel column ``int64[n]``."""
    item = mech.report_kind == "item"
    try:
        _reports.check_reports(mech, sample.ys)
    except (TypeError, ValueError) as err:
        example = _report_at(sample, _first_outside(sample, m, item))
        return CheckRow("reports", "FAIL", f"outside the declared report space: {example} ({err})"), None
    try:
        cols = np.asarray(_records.likelihood_of(mech).index(sample.ys))
    except (TypeError, ValueError, NotImplementedError) as err:
        return skip("reports", err), None
    if cols.shape != (sample.n,) or cols.dtype.kind not in "iu":
        return CheckRow("reports", "FAIL", f"likelihood().index gave {cols.dtype}{list(cols.shape)} for {sample.n} "
                        "reports; expected one integer channel column per report"), None
    bad = (cols < 0) | (cols >= m)
    if bad.any():
        i = int(np.argmax(bad))
        return CheckRow("reports", "FAIL", f"input {int(sample.xs[i])} gave a report of channel column "
                        f"{int(cols[i])}, outside the channel's {m} columns"), None
    return CheckRow("reports", "pass", f"{sample.n} reports ({_reports.describe_reports(sample.ys)}) in the "
                    f"report space, each one of the channel's {m} columns"), cols


def check_sampler(sample: Sample, cols: np.ndarray, Q: np.ndarray, alpha: float) -> CheckRow:
    """The ``sampler`` row: one chi-square test per input at the Bonferroni level ``alpha / d``; one check of
    ``uldp_jax.testing``'s counter at level ``alpha``."""
    d, m = Q.shape
    idx = cols.reshape(d, -1)
    draws = idx.shape[1]
    worst_x, worst_p = 0, 1.0
    for x in range(d):  # d chi-square tests on host (d is small: the channel was enumerated)
        pvalue = testing.chi_square(np.bincount(idx[x], minlength=m), Q[x]).pvalue
        if pvalue < worst_p:
            worst_x, worst_p = x, pvalue
    status = "pass" if testing.fits(min(1.0, d * worst_p), alpha) else "FAIL"
    return CheckRow("sampler", status, f"{draws} draws per input; smallest chi-square p-value {worst_p:.3g} "
                    f"(input {worst_x}); level {alpha / d:.2g} (alpha={alpha:g} over {d} inputs)")
