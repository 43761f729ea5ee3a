"""Static plan of SS's count tree (``_ss_counts``): node sizes, windows and the exact tail masses, per level.

Computed once per ``(d, k)`` with NumPy float64 (cached). Level ``t`` splits every node of size ``m`` into a left
part of ``ceil(m / 2)`` items and a right part of ``floor(m / 2)`` (sizes at one level differ by at most one, so
at most two distinct sizes). A user that needs ``r`` items of a node of ``M`` items, ``M1`` of them on the left,
takes ``L ~ Hypergeometric(M, M1, r)`` on the left. Three job types share the tables: free users
``(M, M1) = (m, m1)``, forced users whose ``x`` is on the left ``(m - 1, m1 - 1)`` or on the right ``(m - 1, m1)``.

For each job type, size and need ``r`` the plan holds the window start ``a(r)`` (``W_l`` values of ``L`` centred on
the mean, clipped to the support) and the exact masses ``P(L < a)`` and ``P(L >= a + W_l)``. A tail mass is summed
from the window edge outward over ``W_l + 64`` terms; the pmf is log-concave, so the terms left out are at most
``last * rho / (1 - rho)`` (``rho``: the ratio of the last two terms); a row where that bound is not below
``1e-18`` of the sum is summed over its whole support instead, so the masses are the float64 sums.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

Z_ROWS = 8.0  # needs window: lo = first occupied need, W_r = 2 Z sd + 3 rows (more rows: another iteration)
Z_SPLIT = 7.0  # split window: 2 Z sd + 3 values of L centred on the mean (the tails: the fallback)


class Level(NamedTuple):
    m: np.ndarray  # int[nodes], node sizes
    m1: np.ndarray  # int[nodes], left sizes
    rows: int  # R: need values 0 .. R - 1 of this level's histograms
    child_rows: int  # R of the next level
    w_rows: int  # W_r, rows split per node in the fast pass
    w_split: int  # W_l, values of L per row
    combo: np.ndarray  # int[nodes], which size (0 or 1) each node has
    jm: np.ndarray  # int[3, 2], M of (job type, size)
    jm1: np.ndarray  # int[3, 2], M1
    start: np.ndarray  # int32[3, 2, R], a(r)
    lump_lo: np.ndarray  # float64[3, 2, R], P(L < a)
    lump_hi: np.ndarray  # float64[3, 2, R], P(L >= a + W_l)


def log_factorials(d: int) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, d + 1, dtype=np.float64)))])


def hyper_logpmf(lf, M, M1, r, l):
    """``log P(L = l)`` of ``Hypergeometric(M, M1, r)`` (``-inf`` outside the support); broadcasts."""
    M2 = M - M1
    ok = (l >= np.maximum(0, r - M2)) & (l <= np.minimum(r, M1)) & (r <= M) & (r >= 0)
    g = lambda i: lf[np.clip(i, 0, lf.shape[0] - 1)]
    c = lambda a, b: g(a) - g(b) - g(a - b)
    out = c(M1, l) + c(M2, r - l) - c(M, r)
    return np.where(ok, out, -np.inf)


def _tail(lf, M, M1, r, first, step, extent):
    """``sum_{i >= 0} P(L = first + step i)`` over the support (float64), rows ``r`` (int[R])."""
    lmin, lmax = np.maximum(0, r - (M - M1)), np.minimum(r, M1)
    idx = first[:, None] + step * np.arange(extent)[None, :]
    terms = np.exp(hyper_logpmf(lf, M, M1, r[:, None], idx))
    total = terms.sum(axis=1)
    last, prev = terms[:, -1], terms[:, -2]
    beyond = idx[:, -1] + step
    more = (beyond >= lmin) & (beyond <= lmax)
    rho = np.where(prev > 0, last / np.where(prev > 0, prev, 1.0), 1.0)
    unsure = more & ((rho >= 1.0) | (last * rho / np.maximum(1.0 - rho, 1e-300) > 1e-18 * total))
    for i in np.flatnonzero(unsure):  # whole support of the few rows the bound does not settle
        stop = lmin[i] - 1 if step < 0 else lmax[i] + 1
        ls = np.arange(first[i], stop, step)
        total[i] = np.exp(hyper_logpmf(lf, M, M1, r[i], ls)).sum() if ls.size else 0.0
    return total


def _windows(lf, M, M1, R, w):
    r = np.arange(R)
    lmin, lmax = np.maximum(0, r - (M - M1)), np.minimum(r, M1)
    centre = np.floor(r * M1 / max(M, 1) + 0.5).astype(np.int64) - w // 2
    a = np.clip(centre, lmin, np.maximum(lmin, lmax - w + 1))
    valid = (M >= 0) & (M1 >= 0) & (M1 <= M)
    if not valid:
        return np.zeros(R, np.int32), np.zeros(R), np.zeros(R)
    extent = w + 64
    lo = _tail(lf, M, M1, r, a - 1, -1, extent)
    hi = _tail(lf, M, M1, r, a + w, 1, extent)
    return a.astype(np.int32), lo, hi


def _sd_need(d: int, k: int, m: int) -> float:
    return math.sqrt(max(k * (m / d) * (1 - m / d) * (d - k) / max(d - 1, 1), 0.0))


def _sd_split(d: int, k: int, m: int) -> float:
    r = k * m / d
    return math.sqrt(max(r * 0.25 * (m - r) / max(m - 1, 1), 0.0))


def plan(d: int, k: int) -> tuple[Level, ...]:
    """The levels of the tree for ``SS(d, k)`` with the module's window widths (cached)."""
    return _plan(d, k, Z_ROWS, Z_SPLIT)


@functools.lru_cache(maxsize=8)
def _plan(d: int, k: int, z_rows: float, z_split: float) -> tuple[Level, ...]:
    lf = log_factorials(d)
    sizes = [np.array([d], np.int64)]
    while sizes[-1].max() > 1:
        m = sizes[-1]
        m1 = (m + 1) // 2
        sizes.append(np.stack([m1, m - m1], axis=1).reshape(-1))
    levels = []
    for t in range(len(sizes) - 1):
        m = sizes[t]
        m1 = (m + 1) // 2
        big = int(m.max())
        R, Rc = min(k, big) + 1, min(k, int(sizes[t + 1].max())) + 1
        w_rows = min(R, int(2 * math.ceil(z_rows * _sd_need(d, k, big))) + 3)
        w_split = min(Rc, int(2 * math.ceil(z_split * _sd_split(d, k, big))) + 3)
        uniq = sorted(set(m.tolist()))
        combo = np.array([uniq.index(v) for v in m.tolist()], np.int32)
        uniq = uniq + uniq[-1:] * (2 - len(uniq))
        jm = np.array([[u for u in uniq], [u - 1 for u in uniq], [u - 1 for u in uniq]], np.int64)
        jm1 = np.array([[(u + 1) // 2 for u in uniq], [(u + 1) // 2 - 1 for u in uniq], [(u + 1) // 2 for u in uniq]],
                       np.int64)
        start = np.zeros((3, 2, R), np.int32)
        lump_lo, lump_hi = np.zeros((3, 2, R)), np.zeros((3, 2, R))
        for j in range(3):
            for c in range(2):
                start[j, c], lump_lo[j, c], lump_hi[j, c] = _windows(lf, int(jm[j, c]), int(jm1[j, c]), R, w_split)
        levels.append(Level(m, m1, R, Rc, w_rows, w_split, combo, jm, jm1, start, lump_lo, lump_hi))
    return tuple(levels)


def leaf_items(d: int) -> np.ndarray:
    """Item of each leaf (``-1`` for the empty leaves) after the last level's split, in node order."""
    nodes = [(0, d)]
    while max(m for _, m in nodes) > 1:
        nxt = []
        for s, m in nodes:
            m1 = (m + 1) // 2
            nxt += [(s, m1), (s + m1, m - m1)]
        nodes = nxt
    return np.array([s if m == 1 else -1 for s, m in nodes], np.int64)


def draws(d: int, k: int, pops: int = 1) -> float:
    """Binomials per repetition of the fast passes: ``(1 + 2 P)`` chains of ``W_l + 1`` per window row."""
    return float(sum(len(lv.m) * lv.w_rows * ((1 + 2 * pops) * (lv.w_split + 1) + pops) for lv in plan(d, k)))


def temp_bytes(d: int, k: int, pops: int = 1) -> float:
    """Largest level's temporaries (float64): the window cells and the histograms of two levels."""
    return float(max(8 * (1 + 2 * pops) * len(lv.m) * lv.w_rows * (lv.w_split + 4)
                     + 16 * (1 + pops) * 2 * len(lv.m) * lv.rows for lv in plan(d, k)))
