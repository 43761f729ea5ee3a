"""Claims in ``summary.md`` as tests at a stated level: "X is best", "A is below B", "error decreases along a list".

Each claim compares means of independent runs from their standard errors with one-sided z-tests (normal
approximation, ``statistics.NormalDist``: no SciPy needed at run time); a claim over several comparisons is one test
at family level ``alpha`` (Bonferroni over its comparisons). Exact values (standard error 0, e.g. closed forms) need
no test: the claim is then decided exactly and says so. The numbers come from the rows an experiment writes, so the
same function rescores a committed CSV (``experiments/rescore_claims.py``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

LEVEL = 0.05  # family level of each claim


def z_one_sided(alpha: float, dof: int | None = None) -> float:
    """Critical value of a one-sided test at level ``alpha``: normal, or Student t with ``dof`` degrees of freedom
    (a mean and standard error estimated from ``dof + 1`` repetitions; ``t_one_sided``)."""
    if dof is not None:
        return t_one_sided(alpha, dof)
    return statistics.NormalDist().inv_cdf(1.0 - alpha)


def t_abs_cdf(t: float, dof: int) -> float:
    """``P(|T| < t)`` for Student t with integer ``dof >= 1``, exact (the finite series in ``atan(t / sqrt(dof))``,
    Abramowitz & Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(dof))
    c2, total, term = math.cos(theta) ** 2, 0.0, 1.0
    if dof % 2:
        for k in range(1, (dof - 1) // 2 + 1):  # theta + sin cos (1 + 2/3 c^2 + 2 4/(3 5) c^4 + ...)
            total += term
            term *= c2 * (2 * k) / (2 * k + 1)
        return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    for k in range(1, dof // 2 + 1):  # sin (1 + 1/2 c^2 + 1 3/(2 4) c^4 + ...)
        total += term
        term *= c2 * (2 * k - 1) / (2 * k)
    return math.sin(theta) * total


def t_one_sided(alpha: float, dof: int) -> float:
    """Critical value of a one-sided Student t test at level ``alpha`` with integer ``dof >= 1`` (bisection on
    ``t_abs_cdf``; beyond 1,000 degrees of freedom the Cornish-Fisher expansion in ``1 / dof``, A & S 26.7.5, whose
    next term is below 1e-9 there)."""
    if not (0.0 < alpha < 0.5) or int(dof) != dof or dof < 1:
        raise ValueError(f"t_one_sided: need 0 < alpha < 0.5 and an integer dof >= 1, got alpha={alpha!r}, dof={dof!r}")
    if dof > 1_000:
        z, v = z_one_sided(alpha), float(dof)
        g1 = (z**3 + z) / 4.0
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
        return z + g1 / v + g2 / v**2 + g3 / v**3
    lo, hi = 0.0, 1.0
    while 1.0 - t_abs_cdf(hi, int(dof)) > 2.0 * alpha:
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 1.0 - t_abs_cdf(mid, int(dof)) > 2.0 * alpha else (lo, mid)
    return 0.5 * (lo + hi)


def z_below(a: tuple, b: tuple) -> float:
    """z for "mean a < mean b" from independent ``(mean, se)`` pairs (``inf`` when exact and a < b)."""
    se = math.hypot(a[1], b[1])
    if se > 0:
        return (b[0] - a[0]) / se
    if abs(b[0] - a[0]) <= 1e-9 * max(abs(a[0]), abs(b[0])):  # exact values equal up to rounding: a tie
        return 0.0
    return math.inf if a[0] < b[0] else -math.inf


def _fmt(z: float) -> str:
    return "exact" if math.isinf(z) else f"{z:.1f}"


def best(values: dict, name: str = "error", higher_is_better: bool = False, alpha: float = LEVEL,
         dof: int | None = None) -> str:
    """"``best`` is below (above) every other": one-sided z-tests of the best against each of the others, family
    level ``alpha`` (Bonferroni). ``values``: ``{label: (mean, se)}`` or ``(mean, se, reps)``. ``dof``: the
    standard errors come from ``dof + 1`` repetitions (or cases), so the tests are Student t with ``dof`` degrees of
    freedom; ``None``: the smallest ``reps - 1`` when every value gives its ``reps`` (``sample_dof``), else normal."""
    if dof is None:
        dof = sample_dof(values.values())
    vals = {k: (float(v[0]), float(v[1]) if v[1] == v[1] else 0.0) for k, v in values.items()
            if math.isfinite(float(v[0]))}
    sign = -1.0 if higher_is_better else 1.0
    order = sorted(vals, key=lambda k: sign * vals[k][0])
    if len(order) < 2:
        return f"best {name}: fewer than two candidates."
    top = order[0]
    flip = (lambda m: (-m[0], m[1])) if higher_is_better else (lambda m: m)
    zs = {k: z_below(flip(vals[top]), flip(vals[k])) for k in order[1:]}
    crit = z_one_sided(alpha / len(zs), dof)
    runner = min(zs, key=zs.get)
    exact = all(vals[k][1] == 0 for k in order)
    verdict = "holds" if all(z > crit for z in zs.values()) else "not established"
    if exact and any(z == 0 for z in zs.values()):
        verdict = "tied with " + ", ".join(k for k, z in zs.items() if z == 0) + " (equal values)"
    stat, test = ("z", "z-tests") if dof is None else ("t", f"t-tests ({dof} dof)")
    how = ("exact values (no sampling error)" if exact else
           f"one-sided {test} against each of the other {len(zs)}, family level {alpha:g} (Bonferroni, {stat} > "
           f"{crit:.2f} each)")
    gap = "" if exact else f", {stat} = {_fmt(zs[runner])}"
    return (f"best {name}: {top} ({vals[top][0]:.3g}) — {how}: {verdict}; closest: {runner} "
            f"({vals[runner][0]:.3g}{gap}). Order: "
            + (" > " if higher_is_better else " < ").join(order) + ".")


def decreasing(seq: Sequence[tuple], name: str = "error", alpha: float = LEVEL) -> str:
    """"error decreases along ``seq``" (``[(label, (mean, se)), ...]``, or ``(mean, se, reps)``): each step a
    one-sided z-test (Student t with the smallest ``reps - 1`` dof when every entry gives ``reps``), family level
    ``alpha`` (Bonferroni over the steps)."""
    dof = sample_dof([m for _, m in seq])
    stat, test = ("z", "z-test") if dof is None else ("t", f"t-test ({dof} dof)")
    zs = [z_below(b[1], a[1]) for a, b in zip(seq, seq[1:])]
    crit = z_one_sided(alpha / max(len(zs), 1), dof)
    verdict = "holds" if all(z > crit for z in zs) else "not established"
    steps = ", ".join(f"{a[0]} -> {b[0]}: {stat} = {_fmt(z)}" for a, b, z in zip(seq, seq[1:], zs))
    return (f"{name} decreases along " + " > ".join(f"{lab} ({m[0]:.3g})" for lab, m in seq)
            + f" — one-sided {test} per step, family level {alpha:g} (Bonferroni, {stat} > {crit:.2f}): {verdict} "
            f"({steps}).")


def sample_dof(values) -> int | None:
    """``min(reps) - 1`` over ``(mean, se, reps)`` values that all give a usable ``reps`` (at least 2), else
    ``None`` (normal limits: ``(mean, se)`` pairs, exact values or rows that do not say)."""
    reps = []
    for v in values:
        try:
            k = int(float(v[2])) if len(v) > 2 and v[2] not in (None, "") else 0
        except (TypeError, ValueError):
            k = 0
        if k < 2:
            return None
        reps.append(k)
    return min(reps) - 1 if reps else None


def agree(observed: Sequence[float], expected: Sequence[float], se: Sequence[float], alpha: float = LEVEL) -> tuple:
    """``(rejected, k, crit)``: two-sided z-tests of ``observed = expected`` at family level ``alpha`` (Bonferroni
    over the ``k`` settings with ``se > 0``)."""
    pairs = [(o, e, s) for o, e, s in zip(observed, expected, se) if s > 0]
    crit = statistics.NormalDist().inv_cdf(1.0 - alpha / (2 * max(len(pairs), 1)))
    return sum(abs(o - e) > crit * s for o, e, s in pairs), len(pairs), crit
