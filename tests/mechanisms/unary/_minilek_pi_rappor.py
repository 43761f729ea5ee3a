"""A small NumPy port of minilek/private_frequency_oracles' PI-RAPPOR (``oracles/pi_rappor.cc``,
``PIAsymmetricRAPPOR``), for the cross-checks in test_pi_rappor.py: its constructor's sizes, its local randomizer,
its per-item estimator (``estimate_freq``: alpha * cnt + beta * n), its dynamic program ``dp_bottom_up`` (the
support counts from the report histogram) and the exact channel of its randomizer. Vectors are big-endian digit
lists as in ``num_to_vec``; a report is ``vec_to_num(a + [c])``.
"""

from __future__ import annotations

import math

import numpy as np


def is_prime(q: int) -> bool:
    return q >= 2 and all(q % f for f in range(2, math.isqrt(q) + 1))


def sizes(K: int, eps: float) -> tuple[int, int, int]:
    """``(q, t, K)``: ``q = (1 + p2 (e^eps - 1)) / (1 - p2)`` with ``p2 = 1/2`` truncated to an int, made odd and
    lowered to a prime; ``t`` the fewest digits with ``q^t > K``; the estimates cover ``q^t - 1`` items."""
    p2 = 0.5
    q = int((1 + p2 * (math.exp(eps) - 1)) / (1.0 - p2))
    if q % 2 == 0 and q != 2:
        q -= 1
    while not is_prime(q):
        q -= 2
    t, qpow = 0, 1
    while qpow <= K:
        t, qpow = t + 1, qpow * q
    return q, t, qpow - 1


def num_to_vec(x: int, length: int, q: int) -> list[int]:
    out = [0] * length
    for i in range(length):
        out[length - 1 - i] = x % q
        x //= q
    return out


def vec_to_num(v: list[int], q: int) -> int:
    x = 0
    for a in v:
        x = x * q + a
    return x


def local_randomizer(rng: np.random.Generator, x: int, K: int, eps: float) -> int:
    """``ret[:t]`` uniform, ``ret[t] = z - <ret[:t], v>`` with ``z`` uniform below ``q - 1`` w.p. 1/2, else
    ``z = q - 1`` (the zero threshold)."""
    q, t, _ = sizes(K, eps)
    v = num_to_vec(x + 1, t, q)
    ret = [int(a) for a in rng.integers(0, q, t)]
    dot = sum(a * b for a, b in zip(ret, v)) % q
    z = int(rng.integers(0, q - 1)) if rng.random() <= 0.5 else q - 1
    return vec_to_num(ret + [(q + z - dot) % q], q)


def alpha_beta(q: int) -> tuple[float, float]:
    p1, p2 = 1 - (q - 1) / q, 0.5
    return 1.0 / (1.0 - p1 - p2), -p1 / (1.0 - p1 - p2)


def estimate_freq(x: int, messages, K: int, eps: float) -> float:
    """``alpha * cnt + beta * n``: ``cnt`` the reports with ``<u[:t], v> + u[t] >= q - 1``."""
    q, t, _ = sizes(K, eps)
    v = num_to_vec(x + 1, t, q)
    cnt = 0
    for m in messages:
        u = num_to_vec(int(m), t + 1, q)
        cnt += (sum(a * b for a, b in zip(u[:t], v)) + u[t]) % q >= q - 1
    alpha, beta = alpha_beta(q)
    return alpha * cnt + beta * len(messages)


def dp_bottom_up(y, K: int, eps: float) -> list[int]:
    """``dp_bottom_up``: ``f(a, b, z)``, the reports ``(u', r)`` with prefix ``a`` and ``<suffix(u'), b> + r = z``,
    one digit at a time; returns the support count of every item ``1..q^t - 1`` (index ``i - 1``)."""
    q, t, Kq = sizes(K, eps)
    qpows = [q**i for i in range(t + 1)]
    N = qpows[t] * q
    last = [int(v) for v in y]
    for length in range(t - 1, -1, -1):
        nxt = [0] * N
        curA, curB = qpows[length], qpows[t - length]
        prevA = qpows[length + 1]
        for b in range(curB):
            val = b % qpows[t - length - 1]
            first = (b - val) // qpows[t - length - 1]
            for a in range(curA):
                for z in range(q):
                    for dgt in range(q):
                        nxt[b * curA * q + a * q + z] += last[val * prevA * q + (a * q + dgt) * q
                                                              + (q * dgt + z - first * dgt) % q]
        last = nxt
    return [sum(last[i * q + z] for z in range(q - 1, q)) for i in range(1, Kq + 1)]


def channel(d: int, eps: float) -> np.ndarray:
    """The exact channel ``[d, q^(t+1)]`` of ``local_randomizer``: ``q^-t`` times 1/2 where the report supports
    the input, ``(1/2)/(q - 1)`` elsewhere."""
    q, t, _ = sizes(d, eps)
    Q = np.zeros((d, q ** (t + 1)))
    for x in range(d):
        v = num_to_vec(x + 1, t, q)
        for m in range(q ** (t + 1)):
            u = num_to_vec(m, t + 1, q)
            hit = (sum(a * b for a, b in zip(u[:t], v)) + u[t]) % q == q - 1
            Q[x, m] = (0.5 if hit else 0.5 / (q - 1)) / q**t
    return Q
