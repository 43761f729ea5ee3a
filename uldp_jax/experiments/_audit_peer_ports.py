"""Small ports of outside LDP clients, as plain NumPy callables, for ``ul.audit_sampler``'s tests and the
``audit-peers`` experiment.

Each is a few lines re-written from the client it names (credited below; no outside file is committed), with its
behaviour, defect included, kept exactly. ``audit-peers`` audits the real pure-LDP packages where they are installed
and these ports where the code is not a package (zitengsun/hadamard_response) or as a cross-check. Each takes a NumPy
``Generator`` so that runs are reproducible.
"""

from __future__ import annotations

import math

import numpy as np


def pure_ldp_112_ue(eps: float, d: int, rng: np.random.Generator, oue: bool = False):
    """pure-LDP 1.1.2's ``UEClient._perturb`` (Samuel-Maddock/pure-LDP, ``frequency_oracles/unary_encoding``):
    every bit is drawn 1 w.p. ``q``, then the own bit is set to 1 w.p. ``p``, so the own bit is 1 w.p.
    ``p + (1 - p) q`` instead of ``p``. The defect LDP-Auditor found (pure-LDP issue #11; fixed in 1.2.0 by
    clearing the own bit first). ``p, q``: SUE's ``e^{eps/2} / (e^{eps/2} + 1)``, or OUE's ``1/2, 1/(e^eps + 1)``."""
    if oue:
        p, q = 0.5, 1.0 / (math.exp(eps) + 1.0)
    else:
        p = math.exp(eps / 2) / (math.exp(eps / 2) + 1.0)
        q = 1.0 - p

    def perturb(x: int) -> np.ndarray:
        v = (rng.random(d) < q).astype(np.int8)
        if rng.random() < p:
            v[x] = 1
        return v

    return perturb


def pure_ldp_120_rappor(f: float, m: int, rng: np.random.Generator):
    """pure-LDP 1.2.0's ``RAPPORClient._perturb`` with one hash function per cohort and one cohort (item ``x``'s
    Bloom bit is ``x``): a bit is *set* to 1 w.p. ``1 - f/2`` (if 1) or ``f/2`` (if 0), and otherwise left as it
    was, so a set bit is never cleared. Claimed eps: ``2 log((1 - f/2) / (f/2))`` (its ``convert_f_to_eps``, k=1)."""

    def perturb(x: int) -> np.ndarray:
        b = np.zeros(m, np.int8)
        b[x] = 1
        u = rng.random(m)
        return np.where(((b == 1) & (u < 1 - 0.5 * f)) | ((b == 0) & (u < 0.5 * f)), 1, b).astype(np.int8)

    return perturb


def rappor_claimed_eps(f: float) -> float:
    return 2.0 * math.log((1 - 0.5 * f) / (0.5 * f))


def zitengsun_ss_faithful(eps: float, k: int, rng: np.random.Generator):
    """zitengsun/hadamard_response ``Subsetselection.encode_symbol`` (Acharya, Sun, Zhang, "Hadamard response",
    AISTATS 2019; ``Subsetselection.py``): the faithful subset selection of Ye and Barg, a uniform subset of
    ``s = ceil(k / (e^eps + 1))`` items that holds the own item w.p. ``p``. eps-LDP."""
    s, p, _ = _ss_params(eps, k)

    def perturb(x: int) -> np.ndarray:
        out = np.zeros(k, dtype=bool)
        others = np.delete(np.arange(k), x)
        if rng.random() < p:
            out[x] = True
            out[rng.choice(others, s - 1, replace=False)] = True
        else:
            out[rng.choice(others, s, replace=False)] = True
        return out

    return perturb


def zitengsun_ss_fast(eps: float, k: int, rng: np.random.Generator):
    """zitengsun/hadamard_response ``Subsetselection.encode_string_fast`` (Acharya, Sun, Zhang; ``Subsetselection.py``),
    vectorised over users: instead of a uniform subset of ``s = ceil(k / (e^eps + 1))`` items it sets the own bit
    w.p. ``p = s e^eps / (s e^eps + k - s)`` and every other bit independently w.p. ``q = (s - p) / (k - 1)``.
    Their ratio ``p (1 - q) / (q (1 - p))`` exceeds ``e^eps`` (``zitengsun_ss_true_eps``). ``encode_string_light`` and
    ``encode_string_compress`` draw each report by the same per-bit rule (the latter returns the ones' positions)."""
    s, p, q = _ss_params(eps, k)

    def perturb(xs: np.ndarray) -> np.ndarray:
        xs = np.asarray(xs)
        flip = rng.random((xs.size, k))
        own = flip[np.arange(xs.size), xs] < p
        out = flip < q
        out[np.arange(xs.size), xs] |= own
        return out

    return perturb


def _ss_params(eps: float, k: int) -> tuple[int, float, float]:
    s = int(math.ceil(k / (math.exp(eps) + 1)))
    p = s * math.exp(eps) / (s * math.exp(eps) + k - s)
    return s, p, (s - p) / (k - 1)


def zitengsun_ss_true_eps(eps: float, k: int) -> float:
    """The eps the fast encoder spends: ``log(p (1 - q) / (q (1 - p)))``, its worst bit-vector ratio."""
    _, p, q = _ss_params(eps, k)
    return math.log(p * (1 - q) / (q * (1 - p)))
