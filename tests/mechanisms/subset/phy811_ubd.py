"""A small NumPy port of phy811/uBD's decoder (``uBD/ULDP scheme/decode_opt_ULDP.m``, ``compute_M_J.m``) and encoder
(``encode_opt_ULDP.m``), for the cross-checks in test_ubd.py. Written from the MATLAB, 0-based, without its last
post-processing step (``max(p_hat, 0)`` then renormalise), which the library leaves to ``ul.estimate``'s methods.

Reports are the MATLAB's ``Y``: ``bool[n, w]`` rows, a subset of X_S or one non-sensitive item. Its mixture decoder
takes the sensitive items to be the first ``v`` columns (``Y_P = Y(:, 1:v)``), so the tests use X_S = {0..v-1}.
"""

from __future__ import annotations

import numpy as np


def compute_m_j(alpha, t, w, v, eps):
    e = np.exp(eps)
    k = np.arange(1, v + 1)
    J1 = v * (e - 1) ** 2 / (v - 1) * np.sum(t * k * (v - k) / ((alpha * k * (e - 1) + v) * (k * e + v - k)))
    J2 = (w - v) * (e - 1) / (1 - alpha) * np.sum(t * k / (k * e + v - k))
    J3 = v * (w - v) * (e - 1) / (w * (1 - alpha)) * np.sum(t * k / (alpha * k * (e - 1) + v))
    return (v - 1) / J1 + (w - v - 1) / J2 + 1 / J3, J1, J2, J3


def decode_single(Y, k, eps, sens, non):
    e = np.exp(eps)
    v, n = len(sens), Y.shape[0]
    freq = Y.sum(axis=0) / n
    c1 = (e - 1) / (e + v / k - 1)
    c2 = c1 * (v - k) / (v - 1)
    c3 = ((k - 1) * e + v - k) / ((v - k) * (e - 1))
    p = np.zeros(Y.shape[1])
    p[sens] = (freq[sens] + (k - 1) * freq[non].sum() / (v - 1)) / c2 - c3
    p[non] = freq[non] / c1
    return p


def decode_mixture(Y, alpha, t, eps, v):
    e = np.exp(eps)
    n, w = Y.shape
    P = np.r_[np.full(v, alpha / v), np.full(w - v, (1 - alpha) / (w - v))]
    _, J1, J2, J3 = compute_m_j(alpha, t, w, v, eps)
    k = np.flatnonzero(t > 0) + 1
    eta = np.zeros(w)
    YP, YI = Y[:, :v], Y[:, v:]
    for i in np.flatnonzero(np.isin(YP.sum(axis=1), k)):
        Qx = np.ones(w)
        Qx[np.flatnonzero(YP[i])] = e
        eta += Qx / (P @ Qx) / n
    eta[v:] += YI.sum(axis=0) / n * (w - v) / (1 - alpha)
    h1 = np.r_[eta[:v] - eta[:v].mean(), np.zeros(w - v)]
    h2 = np.r_[np.zeros(v), eta[v:] - eta[v:].mean()]
    u = np.r_[np.full(v, w - v), np.full(w - v, -v)].astype(float)
    h3 = (u @ eta) / (u @ u) * u
    return P + h1 / J1 + h2 / J2 + h3 / J3


def encode(rng, xs, eps, w, sens, t):
    """``bool[n, w]`` reports of ``encode_opt_ULDP.m`` (mixture mode) for inputs ``xs``, with ``rng`` a
    ``numpy.random.Generator``."""
    e = np.exp(eps)
    v, n = len(sens), len(xs)
    pos = {x: r for r, x in enumerate(sens)}
    cdf = np.cumsum(t)
    Y = np.zeros((n, w), bool)
    for i, x in enumerate(xs):
        u = rng.random()
        if x in pos:
            k = int(np.searchsorted(cdf, u, side="right")) + 1
            keys = rng.random(v)
            keys[pos[x]] = -np.inf if u < e / (e + v / k - 1) else np.inf  # the MATLAB reuses its size uniform
            Y[i, np.asarray(sens)[np.argsort(keys)[:k]]] = True
        else:
            ks = np.flatnonzero(t > 0) + 1
            probs = np.r_[t[ks - 1] * v / (ks * e + v - ks), 0.0]
            probs[-1] = 1 - probs[:-1].sum()
            c = int(np.searchsorted(np.cumsum(probs), u, side="right"))
            if c == len(ks):
                Y[i, x] = True
            else:
                Y[i, np.asarray(sens)[np.argsort(rng.random(v))[: ks[c]]]] = True
    return Y
