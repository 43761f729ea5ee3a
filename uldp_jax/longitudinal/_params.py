r"""Two-stage (PRR then IRR) probabilities of the memoized protocols, in float64 on the host.

Every protocol here is a permanent randomized response (PRR, at ``eps_perm``) followed by an instantaneous one
(IRR) whose parameters are chosen so that ONE report, the composite of the two, is ``eps_1``-LDP (Arcolezi et al.
2023, "Frequency estimation of evolving data under local differential privacy", EDBT; multi-freq-ldpy's
``long_freq_est``). A single report therefore costs ``eps_1``, and infinitely many reports of one value reveal
the PRR output, which costs ``eps_perm``; hence ``eps_1 < eps_perm`` is required.

The composite of a support indicator is ``P* = q2 + p1 (p2 - q2)`` (own item) and ``Q* = q2 + q1 (p2 - q2)``
(another item). multi-freq-ldpy writes each IRR parameter as a long symbolic closed form; we solve the defining
equation instead (one closed form for GRR-type pairs, bisection for unary pairs), so one short routine serves all
pairings; tests check the solutions against multi-freq-ldpy's expressions.
"""

from __future__ import annotations

import math

import jax
import numpy as np

from uldp_jax import _validate


def concrete_eps(value, name: str) -> float:
    """A valid, concrete ``eps`` as a float. A traced one (``jax.vmap`` over a constructor) is refused by name:
    the protocols derive their PRR/IRR probabilities in float64 Python at construction."""
    if isinstance(value, jax.core.Tracer):
        raise TypeError(f"Expected {name} to be a concrete number, got a traced value ({value.aval}): longitudinal "
                        "protocols are not built under jax.vmap; for an eps grid build one protocol per point, e.g. "
                        "[LGRR(d, e, e / 2) for e in eps_grid].")
    return float(_validate.check_eps(value, name))


def check_pair(eps_perm, eps_1) -> tuple[float, float]:
    """Validates ``0 < eps_1 < eps_perm`` (both finite); returns them as floats."""
    eps_perm = concrete_eps(eps_perm, "eps_perm")
    eps_1 = concrete_eps(eps_1, "eps_1")
    if not eps_1 < eps_perm:
        raise ValueError(f"Expected eps_1={eps_1!r} < eps_perm={eps_perm!r}: a memoized protocol spends eps_1 on "
                         "one report and at most eps_perm on infinitely many reports of one value.")
    return eps_perm, eps_1


def grr_keep(eps: float, m: int) -> tuple[float, float]:
    """GRR over ``m`` outputs: ``(p, q)`` with ``p/q = e^eps``."""
    p = 1.0 / (1.0 + (m - 1) * math.exp(-eps))
    return p, (1.0 - p) / (m - 1)


def grr_irr(p1: float, q1: float, eps_1: float, m: int) -> tuple[float, float]:
    r"""IRR of a GRR-type pair over ``m`` outputs so that the composite keep ratio is ``e^{eps_1}``.

    The composite of two GRRs is a GRR with ratio :math:`(p_1 r + 1 - p_1)/(q_1 r + 1 - q_1)`, ``r = p2/q2``;
    solving it for ``r`` gives :math:`r = (E(1-q_1) - (1-p_1))/(p_1 - E q_1)`, :math:`E = e^{\varepsilon_1}`.
    The same formula holds for uRR (``p1 = c1``, ``q1 = c2``), whose composite keeps the uRR shape.
    """
    big = math.exp(eps_1)
    den = p1 - big * q1
    r = (big * (1.0 - q1) - (1.0 - p1)) / den if den > 0 else math.inf
    if not (den > 0 and r > 1.0 and math.isfinite(r)):
        raise ValueError(f"Expected eps_1={eps_1!r} reachable through the PRR (p1={p1:.6g}, q1={q1:.6g}).")
    return r / (r + m - 1), 1.0 / (r + m - 1)


def ue_eps(p1, q1, p2, q2) -> float:
    """Composite eps of a unary pair: ``ln(P*(1-Q*)/(Q*(1-P*)))``."""
    ps, qs = q2 + p1 * (p2 - q2), q2 + q1 * (p2 - q2)
    return math.log(ps) + math.log1p(-qs) - math.log(qs) - math.log1p(-ps)


def ue_irr(p1: float, q1: float, eps_1: float, irr: str) -> tuple[float, float]:
    """IRR bit probabilities ``(p2, q2)`` of a unary pair: ``irr="sym"`` (``p2 = 1 - q2``, SUE-like) or ``"half"``
    (``p2 = 1/2``, OUE-like), with the composite ``eps_1``. Bisection on ``q2`` (the composite eps falls from its
    value at ``q2 = 0`` to 0 at ``q2 = p2``): 200 halvings reach float64 resolution."""
    p2_of = (lambda q: 1.0 - q) if irr == "sym" else (lambda q: 0.5)
    lo, hi = 0.0, 0.5
    top = ue_eps(p1, q1, p2_of(1e-300), 1e-300)
    if not top > eps_1:
        raise ValueError(f"Expected eps_1={eps_1!r} below {top:.6g}, the most this IRR ({irr}) can keep.")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ue_eps(p1, q1, p2_of(mid), mid) > eps_1:
            lo = mid
        else:
            hi = mid
    q2 = 0.5 * (lo + hi)
    return p2_of(q2), q2


def sue_keep(eps: float) -> tuple[float, float]:
    """Symmetric UE (basic RAPPOR): ``p = e^{eps/2}/(e^{eps/2}+1)``, ``q = 1 - p``."""
    p = 1.0 / (1.0 + math.exp(-eps / 2.0))
    return p, 1.0 - p


def oue_keep(eps: float) -> tuple[float, float]:
    """Optimized UE: ``p = 1/2``, ``q = 1/(e^eps + 1)``."""
    return 0.5, 1.0 / (math.exp(eps) + 1.0)


def loloha_g(eps_perm: float, eps_1: float) -> int:
    """LOLOHA's optimal hash range (Arcolezi et al. 2023, L-OLH; multi-freq-ldpy ``L_LH_Client(optimal=True)``):
    the integer nearest the minimiser of the approximate variance, at least 2."""
    a, ep = eps_1 / eps_perm, eps_perm
    disc = (np.exp(4 * ep) - 14 * np.exp(2 * ep) - 12 * np.exp(2 * ep * (a + 1)) + 12 * np.exp(ep * (a + 1))
            + 12 * np.exp(ep * (a + 3)) + 1)
    g = (np.sqrt(disc) - np.exp(2 * ep) + 6 * np.exp(ep) - 6 * np.exp(ep * a) + 1) / (6 * (np.exp(ep) - np.exp(ep * a)))
    return int(max(np.rint(g), 2))
