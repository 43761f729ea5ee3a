"""Statistical checks of samplers against exact channels (used by the test-suite; public for users).

False alarms. Every statistical check of the test suite goes through ``fits`` (a p-value) or ``within_se`` (an
estimate against its reference in standard errors), both at the per-check level ``ALPHA``. The suite's budget is
``SUITE_ALPHA``: with at most ``MAX_CHECKS`` checks per run, a correct implementation fails some check with
probability at most ``MAX_CHECKS * ALPHA = SUITE_ALPHA`` (Bonferroni; the checks need not be independent). The
counter ``checks_run()`` lets the test session verify the bound over the whole run (``tests/conftest.py`` sums the
counts of all pytest-xdist workers). Seeds are fixed for reproducibility only: a failing check is a finding, never
a reason to change its seed; ``pytest --seed-shift N`` reruns the same checks on fresh draws to measure the
false-alarm rate (``experiments/benchmarks/false_alarms.py``).

Power: checks against a deliberately wrong channel (``fits(..., alpha)`` must fail) use a separate, smaller
threshold (``pvalue < 1e-6``); they are not false-alarm prone and not counted.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _estimation, _records
from uldp_jax.mechanisms.core._base import Mechanism
from uldp_jax.mechanisms.core._pytree import static_field
from uldp_jax.privacy import _channel


SUITE_ALPHA = 0.01  # probability that a correct implementation fails any statistical check of one run
MAX_CHECKS = 2000  # statistical checks one run may make (verified at the end of the session)
ALPHA = SUITE_ALPHA / MAX_CHECKS  # per-check level: 5e-6, i.e. |z| <= 4.56 (two-sided normal)

_COUNT = [0]


def checks_run() -> int:
    """Number of ``fits``/``within_se`` checks made in this process."""
    return _COUNT[0]


def z_critical(alpha: float = ALPHA, dof: int | None = None) -> float:
    """Two-sided critical value: ``P(|Z| > z) = alpha`` (normal; Student t with ``dof`` when given)."""
    from scipy import stats  # test-extra dependency; imported on use

    if dof is None:
        return float(stats.norm.isf(alpha / 2.0))
    return float(stats.t.isf(alpha / 2.0, dof))


def fits(result: Any, alpha: float = ALPHA) -> bool:
    """A goodness-of-fit p-value (``result.pvalue`` or a float) is above the per-check level ``alpha``."""
    _COUNT[0] += 1
    pvalue = float(getattr(result, "pvalue", result))
    return pvalue > alpha


def counted(passed: bool) -> bool:
    """One check decided elsewhere at a level of at most ``ALPHA`` (a confidence bound, such as ``ul.check``'s
    black-box eps bound): counts it and returns ``passed``."""
    _COUNT[0] += 1
    return bool(passed)


def within_se(observed: Any, expected: Any, se: Any, alpha: float = ALPHA, dof: int | None = None) -> bool:
    """``|observed - expected| <= z_critical(alpha / k, dof) * se`` for all ``k`` elements (Bonferroni over the
    elements, so one call is one check at level ``alpha``). ``se`` is the standard error of ``observed``
    (a sample mean of many repetitions: normal approximation; pass ``dof = reps - 1`` for few repetitions)."""
    _COUNT[0] += 1
    obs, exp, se = (np.asarray(v, np.float64) for v in (observed, expected, se))
    k = max(int(np.broadcast(obs, exp, se).size), 1)
    return bool(np.all(np.abs(obs - exp) <= z_critical(alpha / k, dof) * se))


def at_most(observed: Any, bound: Any, se: Any, alpha: float = ALPHA, dof: int | None = None) -> bool:
    """One-sided ``within_se``: ``observed <= bound + z(alpha / k) * se`` for all ``k`` elements, where ``z`` is the
    one-sided critical value (``P(Z > z) = alpha / k``). One check at level ``alpha``.

    For ordering claims ("method A's error is below B's"): the check fails only where the data refute the claim
    at level ``alpha`` (``observed`` is A's, ``bound`` B's, ``se`` the standard error of their difference).
    """
    _COUNT[0] += 1
    obs, bnd, se = (np.asarray(v, np.float64) for v in (observed, bound, se))
    k = max(int(np.broadcast(obs, bnd, se).size), 1)
    return bool(np.all(obs <= bnd + z_critical(2.0 * alpha / k, dof) * se))


def emp_tv(mech: Mechanism, p: Any, n: Any) -> tuple[float, float]:
    """``(mean, sd)`` of the total variation distance ``0.5 * sum_x |p_hat(x) - p(x)|`` of one ``emp`` estimate
    from ``n`` iid users drawn from ``p`` (the mechanism's own ``debias`` variance).

    Normal approximation, items treated as independent (large ``n``; the sum of ``d`` folded normals):
    ``mean = 0.5 sqrt(2/pi) sum_x sigma_x`` (001 Props 4 and 7), ``sd = 0.5 sqrt((1 - 2/pi) sum_x sigma_x^2)``.
    In the fixed or population model the iid variance is an upper bound (law of total variance), so ``mean``
    bounds the expected TV from above there. With ``at_most`` it checks claims such as "EM's TV is below emp's".
    """
    truth = np.asarray(p, np.float64)
    with jax.enable_x64(True):
        var = np.asarray(_estimation.debias_variance(mech, jnp.asarray(truth), jnp.float64(n)), np.float64)
    var = np.maximum(var, 0.0)
    return (float(0.5 * np.sqrt(2.0 / np.pi) * np.sqrt(var).sum()),
            float(0.5 * np.sqrt((1.0 - 2.0 / np.pi) * var.sum())))


def estimate_within_se(mech: Mechanism, estimate: Any, p: Any, n: Any, alpha: float = ALPHA) -> bool:
    """One check (``within_se``): an estimate ``float[..., d]`` of ``p`` from ``n`` users is within the per-check
    level of ``p``, its standard error that of the mechanism's own ``debias`` (``_estimation.debias_variance``: iid
    users drawn from ``p``). A leading axis holds independent repetitions: their mean is checked.

    In the fixed model (``p`` = the users' histogram / n) the iid variance bounds the exact one from above (law of
    total variance), so the level still holds. Meant for unbiased estimates ("emp"). EM and ``emp+thr`` may be
    checked the same way only where every ``p_j`` is well inside (0, 1): there the MLE is asymptotically normal
    and efficient. Where ``p_j = 0`` both are biased upwards (the uniform remainder of 001 §6.1; the MLE on the
    boundary), and an item whose empirical variance is 0 there fails on any positive mass: compare those with
    the method's own definition instead. Replaces fixed tolerances on random estimates: the tolerance follows
    ``n``, the mechanism and the level. The SE is floored at 1e-7 (float32 rounding)."""
    est = np.asarray(estimate, np.float64)
    reps = est.shape[0] if est.ndim == 2 else 1
    if est.ndim == 2:
        est = est.mean(axis=0)
    truth = np.asarray(p, np.float64)
    with jax.enable_x64(True):
        var = np.asarray(_estimation.debias_variance(mech, jnp.asarray(truth), jnp.float64(n)), np.float64)
    # floor: float32 rounding of an estimate whose variance is 0 (e.g. a non-sensitive item nobody holds)
    return within_se(est, truth, np.maximum(np.sqrt(np.maximum(var, 0.0) / reps), 1e-7), alpha)


class FixedChannel(Mechanism):
    """A mechanism given by an explicit channel and claimed guarantee, stored as given (to test audits).

    Attributes:
      Q: ``[d, m]`` channel (rows = inputs); nothing is cast or checked here, so broken channels reach the audit.
      protected: ``bool[m]`` protected outputs.
      spec: the claimed ``PrivacySpec`` (static).
    """

    Q: Any
    protected: Any
    spec: Any = static_field()

    report_kind = "item"

    @property
    def d(self) -> int:
        return np.shape(self.Q)[0]

    @property
    def num_outputs(self) -> int:
        return np.shape(self.Q)[-1]

    def channel_matrix(self) -> tuple[Any, Any]:
        return self.Q, self.protected

    def privacy_spec(self) -> Any:
        return self.spec

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Draws each user's report from its row of ``Q`` (meaningful for a valid channel only)."""
        logits = jnp.log(jnp.asarray(self.Q, jnp.float32))[jnp.asarray(xs, jnp.int32)]
        return jax.random.categorical(key, logits).astype(jnp.int32)


class ChiSquare(NamedTuple):
    """Pearson goodness-of-fit result: statistic, degrees of freedom, p-value (float64)."""

    stat: float
    dof: int
    pvalue: float


def report_index(mech: Mechanism, ys: Any) -> np.ndarray:
    """Maps a batch of reports to channel column indices (items as is; bits as sum_j bit_j 2^j; other reports:
    the mechanism's ``likelihood().index``)."""
    return np.asarray(_records.likelihood_of(mech).index(ys))


def chi_square(observed: np.ndarray, expected_probs: np.ndarray, min_expected: float = 5.0) -> ChiSquare:
    """Pearson chi-square of counts against probabilities; cells with small expectation are pooled."""
    observed = np.asarray(observed, dtype=np.float64)
    probs = np.asarray(expected_probs, dtype=np.float64)
    n = observed.sum()
    expected = n * probs
    if np.any(observed[expected == 0] > 0):
        return ChiSquare(float("inf"), 0, 0.0)  # an impossible output occurred
    keep = expected >= min_expected
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    nz = exp > 0
    obs, exp = obs[nz], exp[nz]
    stat = float(np.sum((obs - exp) ** 2 / exp))
    dof = int(obs.size - 1)
    pvalue = _chi2_sf(stat, dof) if dof > 0 else 1.0
    return ChiSquare(stat, dof, pvalue)


def _chi2_sf(stat: float, dof: int) -> float:
    """Upper tail of chi-square(dof) in float64 (the per-check level is ~1e-6: float32 would not do)."""
    with jax.enable_x64(True):
        return float(jax.scipy.special.gammaincc(jnp.float64(dof / 2.0), jnp.float64(stat / 2.0)))


def sampler_vs_channel(key: jax.Array, mech: Mechanism, x: int, n: int, batched: bool = True,
                       Q: np.ndarray | None = None) -> ChiSquare:
    """Draws ``n`` reports of input ``x`` and tests them against row ``x`` of the exact channel.

    Args:
      key: PRNG key.
      mech: mechanism with an exact channel (or pass ``Q`` to test against another channel).
      x: the input item.
      n: number of draws.
      batched: one ``perturb_batch`` call (True) or a ``vmap`` over split keys of ``perturb_batch`` on one user
        (False).
      Q: channel to test against (default: ``channel(mech).Q``), e.g. a mis-parameterised one.
    """
    if Q is None:
        Q = _channel.channel(mech).Q
    xs = jnp.full((n,), x, dtype=jnp.int32)
    if batched:
        ys = mech.perturb_batch(key, xs)
    else:
        one = lambda k, x: jax.tree.map(lambda a: a[0], mech.perturb_batch(k, jnp.reshape(x, (1,))))  # noqa: E731
        ys = jax.vmap(one)(jax.random.split(key, n), xs)
    idx = report_index(mech, ys)
    counts = np.bincount(idx, minlength=Q.shape[1])
    return chi_square(counts, Q[x])


__all__ = [
    "ALPHA", "ChiSquare", "FixedChannel", "MAX_CHECKS", "SUITE_ALPHA", "at_most", "checks_run", "chi_square",
    "emp_tv", "estimate_within_se", "fits", "report_index", "sampler_vs_channel", "within_se", "z_critical",
]
