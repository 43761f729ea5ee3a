"""Static sizes of the compact report route from the rates and the population alone, so the reports are drawn once.

``_reports._compact_estimates`` needs, before drawing, the chunks of the sampler's Bernoulli process that every
user finishes in, the widest report, and (support lists) the product-part rows EM keeps and their ones. An exact
first pass draws every report for them (a share of the call: experiments/benchmarks/README.md (k)). ``predicted_sizes``
bounds them instead, each with a small chance ``MISS`` (over all its repetitions) of being passed:

- ``k_max``: no user's process holds more than ``k_max`` ones of its ``m <= s`` "other" bits, the Binomial(s, q)
  upper quantile at ``MISS / 3 / (n reps)`` (union over users and repetitions; exact tail in log space);
- kept rows and their ones: sums of independent per-user terms (fixed population: one per user; iid: n draws of
  the item mixture), bounded by Bernstein's inequality at ``MISS / 3 / reps`` each (per-term range ``1`` and
  ``k_max + 1``).

The compiled route checks every bound on the reports it draws (``_reports_device``: a user whose last chunk lane
holds a one, a report with a one past the width, more kept rows or ones than sized); where one is passed the call
falls back to the exact first pass, so a bound only ever decides how fast the answer comes, never the answer.
The route takes the bounds only where they cost little against a typical draw's sizes (``miss = 1``;
``_reports._bounds_pay``): a chunk or a bucket more than the reports need can cost more than the first pass
(bench_em's RAPPOR: 24 chunks where 23 do, and rows of 768 for 737).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from uldp_jax import _validate
from uldp_jax.estimation import _support
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import num_stats

MISS = 1e-3  # chance per call that the reports pass a predicted size (the call then sizes them exactly)


def predicted_sizes(mech: Any, xs: np.ndarray | None, target: np.ndarray, n: int, reps: int, iid: bool,
                    miss: float = MISS) -> tuple[int, int, int, int] | None:
    """``(num_chunks, kept rows, their ones, widest report)`` bounding what ``reps`` repetitions of ``n`` users
    draw, each passed with chance at most ``miss / 3`` (module docstring; ``miss = 1``: sizes a typical draw
    reaches), or ``None`` where they are not predicted (rates not concrete, or "other" items outside the product
    part: the exact first pass sizes those)."""
    compact = mech.compact()
    if compact is None or compact.params is None or not _support.others_in_product(mech):
        return None
    items_s, own_prob, q = compact.params
    if not (_validate.is_concrete(own_prob) and _validate.is_concrete(q)):
        return None
    d = num_stats(mech)
    s = int(np.asarray(items_s).shape[0])
    q = float(np.asarray(q, np.float64))
    own = np.broadcast_to(np.asarray(own_prob, np.float64), (d,))
    prod, has_inv = _support.unary_parts(mech)
    k_max = binomial_quantile(s, q, miss / 3 / (max(n, 1) * max(reps, 1)))
    num_chunks = max(1, -(-(k_max + 1) // _compact.CHUNK))
    widest = min(_support.bucket(k_max + 1), num_chunks * _compact.CHUNK + 1)
    in_s = np.zeros(d, bool)
    in_s[np.asarray(items_s, np.int64)] = True
    m = s - in_s  # "other" bits of each item's process
    mean_k, var_k = m * q, m * q * (1.0 - q)
    inv = own * ~prod if has_inv else np.zeros(d)  # P(invertible report | x): own bit set, outside the product
    o = own * prod  # P(own bit in a kept row | x)
    row = 1.0 - inv
    ones = row * mean_k + o
    ones2 = row * (var_k + mean_k**2) + 2.0 * o * mean_k + o  # E[(kept ones)^2 | x]
    w = np.bincount(np.asarray(xs, np.int64), minlength=d)[:d] if not iid else None
    rows_mean, rows_var = _sum_moments(row, row, w, target, n)
    ones_mean, ones_var = _sum_moments(ones, ones2, w, target, n)
    delta = miss / 3 / max(reps, 1)
    kept = min(n, math.ceil(rows_mean + bernstein_margin(rows_var, 1.0, delta)))
    kept_ones = math.ceil(ones_mean + bernstein_margin(ones_var, k_max + 1.0, delta))
    return num_chunks, max(kept, 1), max(min(kept_ones, kept * (k_max + 1)), 1), widest


def _sum_moments(first: np.ndarray, second: np.ndarray, counts: np.ndarray | None, target: np.ndarray,
                 n: int) -> tuple[float, float]:
    """Mean and variance of a sum of independent per-user terms with per-item moments ``first``, ``second``:
    one user per entry of ``counts`` (fixed population), or ``n`` users drawn from ``target`` (iid)."""
    if counts is not None:
        return float(counts @ first), float(counts @ np.maximum(second - first**2, 0.0))
    t = np.asarray(target, np.float64)
    mean = float(t @ first)
    return n * mean, n * max(float(t @ second) - mean**2, 0.0)


def bernstein_margin(var: float, bound: float, delta: float) -> float:
    """``t`` with ``exp(-t^2 / (2 (var + bound t / 3))) = delta``: a sum of independent terms, each at most
    ``bound`` above its mean, passes its mean by ``t`` or more with probability at most ``delta``."""
    log_inv = math.log(1.0 / delta)
    a = bound * log_inv / 3.0
    return a + math.sqrt(a * a + 2.0 * var * log_inv)


def binomial_quantile(s: int, q: float, delta: float) -> int:
    """The least ``k`` with ``P(Binomial(s, q) > k) <= delta`` (log space, exact sums over the upper tail)."""
    if q <= 0.0 or s == 0:
        return 0
    if q >= 1.0:
        return s
    mode = min(s, int((s + 1) * q))
    ks = np.arange(mode, s + 1, dtype=np.float64)
    at_mode = (math.lgamma(s + 1) - math.lgamma(mode + 1) - math.lgamma(s - mode + 1) + mode * math.log(q)
               + (s - mode) * math.log1p(-q))
    step = np.log(s - ks[:-1]) - np.log(ks[:-1] + 1.0) + (math.log(q) - math.log1p(-q))  # log p(k+1) / p(k)
    log_pmf = at_mode + np.concatenate([[0.0], np.cumsum(step)])
    # tail[i] = log P(X > ks[i]) = logsumexp(log_pmf[i + 1:])
    rev = np.logaddexp.accumulate(log_pmf[::-1])[::-1]
    tail = np.append(rev[1:], -np.inf)
    ok = np.flatnonzero(tail <= math.log(delta))
    return int(ks[ok[0]]) if ok.size else s
