"""A port of pure-LDP 1.2.0's Apple count mean sketch (``frequency_oracles/apple_cms``: ``CMSClient``,
``CMSServer``), line for line, with two changes that keep the arithmetic: the hash functions are passed in (pure-LDP
draws xxhash functions of ``str(data)``; the tests pass the mechanism's own ``h_i``), and the client's randomness
is a NumPy ``Generator`` argument instead of the global ``random``/``np.random`` state. pure-LDP is in the
``bench`` extra, not the ``test`` one, so the tests run on this port and check it against pure-LDP where it is
installed (``test_port_is_pure_ldp``)."""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import hadamard


def constants(eps: float, is_hadamard: bool) -> tuple[float, float]:
    """``(prob, c)``: the client's flip probability and the server's scale (``update_params`` of both)."""
    if is_hadamard:
        return 1 / (1 + math.pow(math.e, eps)), (math.pow(math.e, eps) + 1) / (math.pow(math.e, eps) - 1)
    return (1 / (1 + math.pow(math.e, eps / 2)),
            (math.pow(math.e, eps / 2) + 1) / (math.pow(math.e, eps / 2) - 1))


def privatise(rng: np.random.Generator, x: int, eps: float, hash_funcs, m: int, is_hadamard: bool):
    """``CMSClient.privatise``: CMS returns ``(v, j)``, HCMS ``(b * w_l, j, l)``."""
    prob, _ = constants(eps, is_hadamard)
    k = len(hash_funcs)
    j = int(rng.integers(0, k))  # random.randint(0, k-1)
    if not is_hadamard:
        v = np.full(m, -1)
        v[hash_funcs[j](x)] = 1
        v[rng.random(m) < prob] *= -1  # "flip" bits with prob
        return v, j
    b = -1 if rng.random() < prob else 1  # random.choices([-1, 1], weights=[prob, 1 - prob])
    w = hadamard(m)[:, hash_funcs[j](x)]
    l = int(rng.integers(0, m))  # random.randint(0, m-1)
    return b * w[l], j, l


class Server:
    """``CMSServer``: ``aggregate`` builds ``sketch_matrix``; ``estimate(x)`` is the count estimate."""

    def __init__(self, eps: float, hash_funcs, m: int, is_hadamard: bool):
        self.k, self.m, self.is_hadamard, self.hash_funcs = len(hash_funcs), m, is_hadamard, hash_funcs
        _, self.c = constants(eps, is_hadamard)
        self.sketch_matrix = np.zeros((self.k, m))
        self.ones = np.ones(m)
        self.n = 0

    def aggregate(self, data) -> None:
        if self.is_hadamard:
            bit_value, j, l = data
            self.sketch_matrix[j][l] = self.sketch_matrix[j][l] + self.k * self.c * bit_value
        else:
            item, hash_index = data
            self.sketch_matrix[hash_index] = self.sketch_matrix[hash_index] + self.k * (
                (self.c / 2) * item + 0.5 * self.ones)
        self.n += 1

    def estimate(self, x: int) -> float:
        sketch = self.sketch_matrix if not self.is_hadamard else np.matmul(self.sketch_matrix,
                                                                           np.transpose(hadamard(self.m)))
        k, m = sketch.shape
        freq_sum = 0
        for i in range(0, k):
            freq_sum += sketch[i][self.hash_funcs[i](x)]
        return (m / (m - 1)) * ((1 / k) * freq_sum - (self.n / m))


class NoneShapeNumpy:
    """NumPy as pure-LDP 1.2.0's ``FreqOracleServer`` needs it: a sketch server passes ``d=None`` and the base class
    calls ``np.zeros(None)``, which NumPy 2 refuses ("Use () not None as shape arguments"); here it is an empty
    array, as NumPy 1 gave. Patch it over ``pure_ldp.core._freq_oracle_server.np``."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def zeros(shape, *args, **kwargs):
        return np.zeros(0 if shape is None else shape, *args, **kwargs)
