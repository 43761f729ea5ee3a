r"""uBD's mixture weights: the saddle point of Yoon, Park, Nam and Lee's minimax risk (NumPy float64, no SciPy).

uBD (``UBD``) reports, for a sensitive input, a ``k``-subset of ``X_S`` with ``k ~ t`` (subset selection over
``X_S``), and for a non-sensitive input a uniform ``k``-subset w.p. ``t_k (1 - z_k)``, else the input itself. With
``w = d``, ``v = s`` and ``J_1, J_2, J_3`` linear in ``t`` (the information of the block design at the least
favourable prior :math:`P_\alpha`: mass ``alpha`` spread on ``X_S``, ``1 - alpha`` on ``X_N``), the paper's risk is

.. math:: M(\alpha, t) = \frac{v-1}{J_1} + \frac{w-v-1}{J_2} + \frac{1}{J_3},

``n`` times the worst-case squared l2 risk of the score estimator at :math:`P_\alpha` (``_ubd_forms``), and the
weights are :math:`\sup_\alpha \inf_{t \in \Delta_v} M(\alpha, t)` (phy811/uBD ``optimize_M.m``: fmincon inside
fminbnd). Here the inner problem, convex in ``t`` and a function of the three numbers ``J = A t`` only, is solved
by pairwise Frank-Wolfe with exact line searches (O(v) per step, linear convergence on the simplex; its optimum
has at most three sizes), the outer one by golden-section search on ``alpha in [0, 1]``, warm-started.

The terms are written with ``t = e^{-eps}`` and the products ``(e^eps - 1) J_i (1 - alpha)`` (``B`` below) so
that they stay finite for every eps the library accepts and at ``alpha = 1`` (all mass sensitive).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
ALPHA_TOL = 1e-11  # golden-section bracket width on alpha
GAP_TOL = 1e-14  # Frank-Wolfe stops when the duality gap is below GAP_TOL * risk
MAX_STEPS = 500  # Frank-Wolfe steps per alpha (a cap; it stops at the gap long before)
DROP = 1e-13  # weights below DROP (relative) are dropped: sizes nobody would draw


class UBDWeights(NamedTuple):
    """The optimum of ``ubd_weights``.

    Attributes:
      sizes: the subset sizes drawn (increasing ints in ``[1, s]``).
      weights: float64 ``[len(sizes)]``, their probabilities (sum 1).
      alpha: float, the least favourable prior's sensitive mass (the estimator's anchor).
      nmse: float, ``n`` times the minimax squared l2 risk, ``M(alpha, t)``.
    """

    sizes: tuple[int, ...]
    weights: np.ndarray
    alpha: float
    nmse: float


def info_terms(alpha: float, d: int, s: int, eps: float, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""``(A float64[3, len(k)], c float64[3])``: :math:`M = \sum_i c_i / (A t)_i` for weights ``t`` over sizes
    ``k``, with ``A`` scaled so every entry stays finite (the paper's ``J_i`` times ``(1 - alpha)/(e - 1)`` for
    ``i = 2, 3``, times ``1/(e-1)`` for ``i = 1``; ``c`` scaled alike)."""
    t, em1 = np.exp(-eps), np.expm1(eps)
    k = np.asarray(k, np.float64)
    den = k + (s - k) * t  # (k e + s - k) / e
    a1 = k * (s - k) * -np.expm1(-eps) / ((alpha * k * em1 + s) * den) * s / (s - 1.0)  # J_1 / (e - 1)
    a2 = (d - s) * k * t / den  # J_2 (1 - alpha) / (e - 1)
    a3 = s * (d - s) * k / (d * (alpha * k * em1 + s))  # J_3 (1 - alpha) / (e - 1)
    c = np.array([(s - 1.0) / em1, (d - s - 1.0) * (1.0 - alpha) / em1, (1.0 - alpha) / em1])
    return np.stack([a1, a2, a3]), c


def risk(A: np.ndarray, c: np.ndarray, t: np.ndarray) -> float:
    """``sum_i c_i / (A t)_i`` (a term with ``c_i = 0`` contributes 0, whatever its ``J_i``)."""
    J = A @ t
    live = c > 0
    with np.errstate(divide="ignore"):  # a J of 0 (sizes with no information there): an infinite risk
        return float(np.sum(c[live] / J[live]))


def minimax_nmse(d: int, s: int, eps: float, sizes, weights, alpha: float) -> float:
    """``M(alpha, t)``: ``n`` times the squared l2 risk of uBD's estimator at the prior :math:`P_\\alpha` (its worst
    case when ``(alpha, t)`` is ``ubd_weights``' saddle point)."""
    A, c = info_terms(alpha, d, s, eps, np.asarray(sizes))
    return risk(A, c, np.asarray(weights, np.float64))


def _line_min(c: np.ndarray, J: np.ndarray, dJ: np.ndarray, top: float) -> float:
    """argmin over ``g in [0, top]`` of ``sum c / (J + g dJ)`` (convex in ``g``): bisection on the derivative."""
    live = c > 0
    c, J, dJ = c[live], J[live], dJ[live]

    def slope(g: float) -> float:  # +inf where a J reaches 0 (a size with no information on that axis)
        with np.errstate(divide="ignore"):
            return float(np.sum(-c * dJ / (J + g * dJ) ** 2))

    if slope(top) <= 0.0:
        return top
    lo, hi = 0.0, top
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if slope(mid) > 0.0 else (mid, hi)
    return 0.5 * (lo + hi)


def inner_min(A: np.ndarray, c: np.ndarray, t0: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """``min_{t in simplex} sum c / (A t)`` by pairwise Frank-Wolfe (mass moves from the worst used size to the
    best size); returns ``(value, t)``. ``t0``: a warm start (default: the best single size)."""
    scale = 1.0 / np.max(A, axis=1)  # c_i / (A t)_i is unchanged by scaling row i and c_i alike: O(1) numbers
    A, c = A * scale[:, None], c * scale
    live = c > 0
    if t0 is None:
        single = np.sum(c[live, None] / np.maximum(A[live], 1e-300), axis=0)
        t0 = np.zeros(A.shape[1])
        t0[int(np.argmin(single))] = 1.0
    t = t0.copy()
    for _ in range(MAX_STEPS):
        J = A @ t
        grad = (np.where(live, -c / np.where(live, J, 1.0) ** 2, 0.0)) @ A
        best = int(np.argmin(grad))
        used = np.flatnonzero(t > 0)
        worst = int(used[np.argmax(grad[used])])
        if grad[worst] - grad[best] <= GAP_TOL * risk(A, c, t) or best == worst:
            break
        g = _line_min(c, J, A[:, best] - A[:, worst], t[worst])
        t[best] += g
        t[worst] -= g
        t[t < DROP * t.max()] = 0.0
        t /= t.sum()
    return risk(A, c, t), t


def ubd_weights(d: int, s: int, eps: float) -> UBDWeights:
    r"""uBD's optimal mixture over subset sizes: :math:`\sup_\alpha \inf_t M(\alpha, t)` (see the module).

    Args:
      d: domain size ``|X|`` (> ``s``).
      s: number of sensitive items ``|X_S|`` (>= 2).
      eps: privacy budget (a concrete float).

    Returns:
      ``UBDWeights(sizes, weights, alpha, nmse)``.
    """
    if not 2 <= s < d:
        raise ValueError(f"Expected 2 <= s < d for uBD, got s={s}, d={d} (one sensitive item: ul.URR).")
    k = np.arange(1, s + 1)
    cache: dict[float, tuple[float, np.ndarray]] = {}
    start = [None]

    def value(alpha: float) -> float:  # inf_t M(alpha, t), warm-started at the last solution
        A, c = info_terms(alpha, d, s, eps, k)
        val, t = inner_min(A, c, start[0])
        start[0] = t
        cache[alpha] = (val, t)
        return val

    lo, hi = 0.0, 1.0
    x1, x2 = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
    f1, f2 = value(x1), value(x2)
    while hi - lo > ALPHA_TOL:  # maximise: keep the bracket around the larger value
        if f1 >= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - GOLDEN * (hi - lo)
            f1 = value(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + GOLDEN * (hi - lo)
            f2 = value(x2)
    for end in (0.0, 1.0):  # the supremum may sit on an end point (alpha = 1: every item of the prior sensitive)
        value(end)
    alpha = max(cache, key=lambda a: cache[a][0])
    val, t = cache[alpha]
    used = np.flatnonzero(t > 0)
    return UBDWeights(tuple(int(j) for j in k[used]), t[used] / t[used].sum(), float(alpha), float(val))
