"""A small NumPy port of minilek/private_frequency_oracles' PGR (``oracles/projective_geometry.cc``,
``oracles/util/util.cc``), for the cross-checks in test_pgr.py: its local randomizer (with ``util.cc``'s
rejection loop, ``randvec_with_specified_dot_product``), its per-item estimator (``estimate_freq``: alpha * cnt +
beta * n) and the exact channel of that randomizer. Points are numbered as in ``util.cc``.
"""

from __future__ import annotations

import numpy as np


def index_to_vec(j, t, q):
    tot, qpow, zeros = 0, 1, t - 1
    while j >= tot + qpow:
        tot, qpow, zeros = tot + qpow, qpow * q, zeros - 1
    v = [0] * t
    v[zeros] = 1
    r, at = j - tot, t - 1
    while r > 0:
        v[at], r, at = r % q, r // q, at - 1
    return v


def vec_to_index(v, q):
    lead = next(i for i, a in enumerate(v) if a)
    c = 0
    for a in v[lead + 1:]:
        c = c * q + a
    return (q ** (len(v) - 1 - lead) - 1) // (q - 1) + c


def canonical_index(v, q):
    lead = next(i for i, a in enumerate(v) if a)
    g = pow(v[lead], q - 2, q)
    return vec_to_index([(a * g) % q for a in v], q)


def randvec(rng, v, s, q):
    """``util.cc``'s ``randvec_with_specified_dot_product``: all coordinates uniform, rejected when all are zero,
    then coordinate ``i`` (v's first non-zero) overwritten to make the dot product ``s``, rejected if now zero."""
    i = next(j for j, a in enumerate(v) if a)
    while True:
        r = [int(a) for a in rng.integers(0, q, len(v))]
        if sum(r) == 0:
            continue
        z = sum(v[j] * r[j] for j in range(len(v)) if j != i) % q
        r[i] = ((s - z) * pow(v[i], q - 2, q)) % q
        if sum(r):
            return r


def local_randomizer(rng, x, eps, q, t):
    K, cset = (q**t - 1) // (q - 1), (q ** (t - 1) - 1) // (q - 1)
    p = 1.0 / ((np.exp(eps) - 1) * cset + K)
    v = index_to_vec(x, t, q)
    s = 0 if rng.random() <= p * np.exp(eps) * cset else int(rng.integers(1, q))
    return canonical_index(randvec(rng, v, s, q), q)


def estimate_all(reports, d, eps, q, t):
    """``estimate_freq`` for every item: ``alpha * #{reports orthogonal to x} + beta * n``."""
    K, cset, cint = (q**t - 1) // (q - 1), (q ** (t - 1) - 1) // (q - 1), (q ** (t - 2) - 1) // (q - 1)
    e = np.exp(eps)
    p = 1.0 / ((e - 1) * cset + K)
    s, r = e * p * cset, p * ((e - 1) * cint + cset)
    alpha = 1.0 / (s - r)
    us = [index_to_vec(int(u), t, q) for u in reports]
    out = np.zeros(d)
    for x in range(d):
        v = index_to_vec(x, t, q)
        cnt = sum(1 for u in us if sum(a * b for a, b in zip(u, v)) % q == 0)
        out[x] = alpha * cnt - alpha * r * len(reports)
    return out


def channel(d, eps, q, t):
    """``float64[d, K]``: the exact law of ``local_randomizer``. Off the hyperplane, the rejection loop keeps a
    draw whose free coordinates are all zero only when the overwritten coordinate was not zero, so the point
    ``e_i`` (``i`` = the input's first non-zero coordinate) has weight ``(q - 1)/q`` where every other point has
    weight 1."""
    K, cset = (q**t - 1) // (q - 1), (q ** (t - 1) - 1) // (q - 1)
    e = np.exp(eps)
    on = e * ((e - 1) * cset + K) ** -1 * cset
    Q = np.zeros((d, K))
    for x in range(d):
        v = index_to_vec(x, t, q)
        i = next(j for j, a in enumerate(v) if a)
        orth = np.array([sum(a * b for a, b in zip(index_to_vec(u, t, q), v)) % q == 0 for u in range(K)])
        w = np.where(orth, 0.0, 1.0)
        unit = [0] * t
        unit[i] = 1
        w[vec_to_index(unit, q)] = (q - 1) / q
        Q[x] = np.where(orth, on / cset, (1 - on) * w / w.sum())
    return Q
