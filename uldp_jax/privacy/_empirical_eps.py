r"""Empirical lower bounds on the privacy loss of a sampler from counts of its reports (NumPy float64; no sampling).

A sampler that is :math:`(\varepsilon, \delta)`-LDP satisfies, for every pair of inputs ``(x, x')`` and every
event ``S`` of protected outputs, :math:`P(S|x) \le e^\varepsilon P(S|x') + \delta`. With ``A`` of ``n_a`` reports
of ``x`` and ``B`` of ``n_b`` reports of ``x'`` falling in ``S``, Clopper-Pearson bounds at level ``alpha / 2``
each, :math:`\underline p_A` and :math:`\overline p_B`, give with confidence ``1 - alpha``

.. math:: \varepsilon \ge \log\frac{\underline p_A - \delta}{\overline p_B}

(LDP-Auditor, Arcolezi and Gambs, PETS 2024, ``ldp_audit/base_auditor.py``: the same bound for one fixed event).
The bound is valid only for an event chosen without looking at the counts it is computed on: events are chosen
on a *selection* sample (``select_events``) and bounded on a *fresh* one (``event_bounds``). Each pair's bound holds
at ``1 - alpha`` on its own; the overall bound is one pair's, the pair chosen on the selection sample, so it holds
at ``1 - alpha`` too (no union over pairs is needed).

Events. Over a finite report space the best event for a pair is a likelihood-ratio level set (Neyman-Pearson):
outputs are sorted by their empirical ratio on the selection sample and the prefix with the best selection score
is kept. A large report space is first projected (a post-processing, so any bound on the projection bounds the
sampler) onto a few cells, e.g. whether a report supports ``x`` and whether it supports ``x'``.
"""

from __future__ import annotations

import statistics
from typing import Any, NamedTuple

import numpy as np

from uldp_jax.privacy import _clopper_pearson

# Added to every count when ranking outputs by their empirical likelihood ratio (a 0/0 output ranks in the middle).
RANK_PRIOR = 0.5


class Events(NamedTuple):
    """Events chosen on the selection sample, one per pair.

    Attributes:
      mask: ``bool[P, m]``: the outputs (cells) of each pair's event.
      score: ``float64[P]``: the selection sample's approximate bound of each event (it ranks pairs; never
        reported as a bound: it saw the counts it was chosen on).
    """

    mask: np.ndarray
    score: np.ndarray


def z_value(alpha: float) -> float:
    """One-sided normal quantile ``z`` with ``P(Z > z) = alpha`` (stdlib; used only to rank events)."""
    return statistics.NormalDist().inv_cdf(1.0 - alpha)


def approx_bound(a: Any, n_a: Any, b: Any, n_b: Any, alpha: float, delta: float = 0.0) -> np.ndarray:
    """Normal-approximation version of ``bound`` (cheap, vectorised): ranks candidate events on the selection
    sample, where the result is never used as a bound (``-inf`` where the event has no evidence)."""
    z = z_value(alpha / 2.0)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    p_lo = (a - z * np.sqrt(a)) / n_a - delta
    p_hi = (b + z * np.sqrt(b) + z * z) / n_b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_lo > 0, np.log(np.maximum(p_lo, 1e-300) / p_hi), -np.inf)


def bound(a: Any, n_a: Any, b: Any, n_b: Any, alpha: float, delta: float = 0.0) -> np.ndarray:
    r"""Level ``1 - alpha`` lower bound :math:`\log((\underline p_A - \delta) / \overline p_B)` (float64, broadcast).

    Args:
      a: reports of ``x`` in the event (ints).
      n_a: reports of ``x`` drawn.
      b: reports of ``x'`` in the event.
      n_b: reports of ``x'`` drawn.
      alpha: ``1 - confidence``; each Clopper-Pearson bound is taken at ``alpha / 2`` (union bound).
      delta: the ``delta`` of an approximate-LDP claim (0: pure).

    Returns:
      The bound; ``-inf`` where :math:`\underline p_A \le \delta` (the event carries no evidence).
    """
    p_lo = _clopper_pearson.lower(a, n_a, alpha / 2.0) - delta
    p_hi = _clopper_pearson.upper(b, n_b, alpha / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p_lo > 0, np.log(np.maximum(p_lo, 1e-300) / p_hi), -np.inf)


def select_events(a: np.ndarray, n_a: Any, b: np.ndarray, n_b: Any, allowed: np.ndarray, alpha: float,
                  delta: float = 0.0) -> Events:
    """Chooses, for each pair, the likelihood-ratio-ordered event with the best selection score.

    Args:
      a: ``int[P, m]`` selection-sample counts of each output (cell) under each pair's first input ``x``.
      n_a: ``int[P]`` (or a scalar) reports of ``x`` in the selection sample.
      b: ``int[P, m]`` the same under the second input ``x'``.
      n_b: ``int[P]`` (or a scalar) reports of ``x'``.
      allowed: ``bool[m]`` or ``bool[P, m]``: outputs an event may contain (the protected outputs of a ULDP claim).
      alpha: the audit's ``1 - confidence`` (sets the score's normal quantile).
      delta: approximate-LDP ``delta``.

    Returns:
      ``Events``: each pair's event (``mask``) and score.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    P, m = a.shape
    n_a = np.broadcast_to(np.asarray(n_a, np.float64), (P,))[:, None]
    n_b = np.broadcast_to(np.asarray(n_b, np.float64), (P,))[:, None]
    allowed = np.broadcast_to(np.asarray(allowed, bool), (P, m))
    ratio = ((a + RANK_PRIOR) / n_a) / ((b + RANK_PRIOR) / n_b)
    ratio = np.where(allowed, ratio, -np.inf)  # excluded outputs sort last and are never taken
    order = np.argsort(-ratio, axis=1, kind="stable")
    A = np.cumsum(np.take_along_axis(a, order, axis=1), axis=1)
    B = np.cumsum(np.take_along_axis(b, order, axis=1), axis=1)
    score = approx_bound(A, n_a, B, n_b, alpha, delta)
    score = np.where(np.take_along_axis(allowed, order, axis=1), score, -np.inf)
    best = np.argmax(score, axis=1)  # the prefix length - 1 of each pair's event
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(m)[None, :], axis=1)
    mask = (rank <= best[:, None]) & allowed
    return Events(mask, score[np.arange(P), best])


def event_bounds(events: Events, a: np.ndarray, n_a: Any, b: np.ndarray, n_b: Any, alpha: float,
                 delta: float = 0.0) -> np.ndarray:
    """``float64[P]``: each pair's bound (``bound``) on fresh counts ``a``, ``b`` (``int[P, m]``) of its event."""
    A = np.where(events.mask, np.asarray(a, np.float64), 0.0).sum(axis=1)
    B = np.where(events.mask, np.asarray(b, np.float64), 0.0).sum(axis=1)
    return bound(A, n_a, B, n_b, alpha, delta)


def invertible_violations(counts: np.ndarray, inputs: np.ndarray, protected: np.ndarray,
                          invertible_inputs: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """Observed breaches of ULDP's invertibility (001 Def 2 (1)): a non-protected output reached by a sensitive
    input or by two inputs. Observing one is proof (a report seen has positive probability), not a statistic.

    Args:
      counts: ``int[I, m]`` reports of each tested input (all samples together).
      inputs: ``int[I]`` the tested inputs.
      protected: ``bool[m]`` protected outputs.
      invertible_inputs: ``bool[d]`` the inputs allowed to reach invertible outputs (``X_N``).

    Returns:
      ``[(output, inputs that reached it), ...]`` for each breached output (empty: none observed).
    """
    seen = (np.asarray(counts) > 0) & ~np.asarray(protected, bool)[None, :]
    out = []
    for y in np.flatnonzero(seen.any(axis=0)):  # few outputs: the invertible columns that were reached
        who = tuple(int(x) for x in np.asarray(inputs)[seen[:, y]])
        if len(who) > 1 or not invertible_inputs[who[0]]:
            out.append((int(y), who))
    return out


def revealed_violations(revealed: np.ndarray, inputs: np.ndarray,
                        invertible_inputs: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """Observed breaches of ULDP's invertibility from support-form counts, where reports are not enumerable: an
    invertible report of input ``x`` that names another input (so the input it reveals is not ``x``: its report
    would reach two inputs, or a wrong one), or any invertible report of a sensitive input. Proof, not a statistic.

    Args:
      revealed: ``int[I, d + 1]``: invertible reports of each tested input naming each input (column ``d``: an
        invertible report whose input is not named, e.g. a bool predicate's).
      inputs: ``int[I]`` the tested inputs.
      invertible_inputs: ``bool[d]`` the inputs allowed to reach invertible outputs (``X_N``).

    Returns:
      ``[(named input, (input seen from,)), ...]`` (``-1``: not named) for each breach (empty: none observed).
    """
    d = revealed.shape[1] - 1
    out = []
    for i, j in zip(*np.nonzero(np.asarray(revealed) > 0)):  # few entries: the inputs' invertible reports
        x, named = int(inputs[i]), (int(j) if j < d else -1)
        if not invertible_inputs[x] or named not in (x, -1):
            out.append((named, (x,)))
    return out


def claim_pvalue(a: float, n_a: int, b: float, n_b: int, claimed: float, delta: float = 0.0) -> float:
    """p-value of the claim ``eps <= claimed`` for one event: the smallest ``alpha`` at which ``bound`` exceeds
    ``claimed`` (1.0 when no ``alpha < 1`` does). Read off two nested log-spaced grids of ``alpha`` and rounded up to
    a grid point, so it is never smaller than the exact value (a conservative p-value)."""
    lo, hi = -300.0, np.log10(1.0 - 1e-12)
    for _ in range(2):
        grid = np.linspace(lo, hi, 128)
        above = bound(a, n_a, b, n_b, 10.0**grid, delta) > claimed
        if not above.any():
            return 1.0
        first = int(np.argmax(above))
        if first == 0:
            return float(10.0**grid[0])
        lo, hi = grid[first - 1], grid[first]
    return float(10.0**hi)
