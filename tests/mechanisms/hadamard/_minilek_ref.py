"""A small NumPy port of minilek/private_frequency_oracles' recursive Hadamard response
(``oracles/recursive_hadamard_response.cc``), for the cross-checks in test_rhr.py: its constructor's sizes, its
local randomizer and its ``estimate_all_freqs``, loop for loop.

``estimate_all_freqs`` accumulates ``bit * factor`` into ``vector<int> Emp``: C++ ``int += double`` truncates the
sum toward zero at every report. ``truncate=True`` reproduces that; ``truncate=False`` is the same decoder in
exact arithmetic (what the paper and ``ul.RHR`` compute). The C++ returns counts (``n p_hat``), not frequencies.
"""

from __future__ import annotations

import math

import numpy as np


def sizes(K: int, eps: float, b: int) -> tuple[int, int, int, int]:
    """``(K, b, block_size, B)`` as the constructor sets them: ``K`` rounded up to a power of two, ``b`` capped at
    ``log2 K`` and ``ceil(eps log2 e)``, ``block_size = 2^(b-1)`` blocks of ``B = K / block_size`` items."""
    k = 1
    while (1 << k) < K:
        k += 1
    K = 1 << k
    b = min(k, min(b, math.ceil(eps * math.log2(math.e))))
    block_size = 1 << (b - 1)
    return K, b, block_size, K // block_size


def parity(v: int) -> int:
    return bin(v).count("1") & 1


def rr(rng: np.random.Generator, v: int, m: int, eps: float) -> int:
    """``randomized_response.cc``'s ``m``-ary RR: keep w.p. ``e^eps / (e^eps + m - 1)``, else a uniform other."""
    if rng.random() < math.exp(eps) / (math.exp(eps) + m - 1):
        return v
    o = int(rng.integers(0, m - 1))
    return o + (o >= v)


def local_randomizer(rng: np.random.Generator, x: int, K: int, eps: float, b: int) -> int:
    """``RR(2 (x / B) + !parity(r & x % B)) * B + r`` with ``r`` uniform in ``[0, B)``."""
    K, b, _, B = sizes(K, eps, b)
    r = int(rng.integers(0, B))
    return rr(rng, 2 * (x // B) + (1 - parity(r & (x % B))), 1 << b, eps) * B + r


def hadamard_transform(v: list) -> list:
    """``Util::hadamard_transform``: the unnormalised Walsh-Hadamard transform (Sylvester order)."""
    v = list(v)
    h = 1
    while h < len(v):
        for i in range(0, len(v), 2 * h):
            for j in range(i, i + h):
                v[j], v[j + h] = v[j] + v[j + h], v[j] - v[j + h]
        h *= 2
    return v


def estimate_all_freqs(messages, K: int, eps: float, b: int, truncate: bool = True) -> np.ndarray:
    """``estimate_all_freqs``: per coefficient ``r`` and block ``m`` the signed sum ``bit * factor``, a transform
    over the blocks, ``Y[j B + r] += B Emp[r][j]``, a transform over all ``K`` items, ``/ K``: counts ``n p_hat``."""
    K, b, block_size, B = sizes(K, eps, b)
    factor = (math.exp(eps) + (1 << b) - 1) / (math.exp(eps) - 1)
    Emp = [[0] * block_size for _ in range(B)]
    for m in messages:
        m = int(m)
        r, m = m % B, m // B
        bit = 1 if m & 1 else -1
        m //= 2
        acc = Emp[r][m] + bit * factor
        Emp[r][m] = int(acc) if truncate else acc  # C++: int += double truncates toward zero
    Emp = [hadamard_transform(row) for row in Emp]
    Y = [0] * K
    for r in range(B):
        for j in range(block_size):
            Y[j * B + r] += B * Emp[r][j]
    Y = hadamard_transform(Y)
    return np.asarray([1.0 * y / K for y in Y])
