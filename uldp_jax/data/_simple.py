"""Small synthetic distributions: 003's Drug and Normal settings, 004's Zipf / geometric / uniform."""

from __future__ import annotations

import math

import numpy as np

from uldp_jax.data._dataset import Dataset

# drugs.com rating shares (ratings 1..10), close to the UCI Drug Review data; ratings 1-3 carry 0.217.
DRUG_RATING_SHARES = np.array([0.134, 0.043, 0.040, 0.031, 0.050, 0.040, 0.058, 0.117, 0.171, 0.316])


def drug_proxy(n: int = 215_063) -> Dataset:
    """003's Drug setting: ratings 1..10 (item = rating - 1), sensitive = low ratings {1, 2, 3} (s = 3),
    theta_N = 0.78 (as 003 reports). Deterministic."""
    desc = "Rating shares of drugs.com reviews (ratings 1..10); sensitive = ratings 1-3."
    return Dataset("drug", DRUG_RATING_SHARES / DRUG_RATING_SHARES.sum(), (0, 1, 2), n, (10,), "synthetic", desc)


def normal_proxy(seed: int = 0, d: int = 1000, s: int = 230, n: int = 99_732, sd: float = 100.0) -> Dataset:
    """003's Normal setting: a discretised N(d/2, sd^2) over ``d`` items, ``s`` sensitive items drawn uniformly
    (seeded), so theta_N is about 1 - s/d (003: 0.77)."""
    x = np.arange(d)
    p = np.exp(-0.5 * ((x - (d - 1) / 2) / sd) ** 2)
    rng = np.random.default_rng(seed)
    sens = rng.choice(d, size=s, replace=False)
    desc = (f"Discretised normal (mean {(d - 1) / 2}, sd {sd}) over {d} items; {s} sensitive items drawn with "
            f"seed {seed}.")
    return Dataset("normal", p / p.sum(), tuple(sens.tolist()), n, (d,), "synthetic", desc)


def geometric(k: int = 1000, lam: float = 0.01, permute_seed: int | None = None) -> Dataset:
    """004's Geo(lambda): ``p(i) ~ (1 - lambda)^i lambda``; with ``permute_seed`` the masses are shuffled over
    the items (004's Geo(lambda)*, heavy items spread over many blocks)."""
    if not 0 < lam < 1:
        raise ValueError(f"Expected lam={lam} in (0, 1).")
    p = lam * (1 - lam) ** np.arange(k, dtype=np.float64)
    name = f"geo({lam})"
    if permute_seed is not None:
        p = p[np.random.default_rng(permute_seed).permutation(k)]
        name += "*"
    return Dataset(name, p / p.sum(), (), 1000, (k,), "synthetic", f"Geometric({lam}) over {k} items.")


def zipf(k: int = 1000, lam: float = 1.0) -> Dataset:
    """004's Zipf(lambda): ``p(i) ~ (i + 1)^(-lambda)``."""
    p = (np.arange(k, dtype=np.float64) + 1) ** (-lam)
    return Dataset(f"zipf({lam})", p / p.sum(), (), 1000, (k,), "synthetic", f"Zipf({lam}) over {k} items.")


def uniform(k: int = 1000) -> Dataset:
    """The uniform distribution over ``k`` items."""
    return Dataset("uniform", np.full(k, 1.0 / k), (), 1000, (k,), "synthetic", f"Uniform over {k} items.")


def index_blocks(k: int, m: int) -> np.ndarray:
    """004's block partition by index: ``m`` consecutive blocks of ``k / m`` items (``int32[k]`` block ids)."""
    if not 1 <= m <= k:
        raise ValueError(f"Expected 1 <= m={m} <= k={k}.")
    return ((np.arange(k) * m) // k).astype(np.int32)


def random_sensitive(d: int, s: int, seed: int) -> tuple[int, ...]:
    """``s`` distinct items drawn uniformly from ``[0, d)`` (001 Fig 6 draws ``X_S`` this way)."""
    if not 0 <= s <= d:
        raise ValueError(f"Expected s={s} in [0, d={d}].")
    return tuple(sorted(np.random.default_rng(seed).choice(d, size=s, replace=False).tolist()))


def log_grid(lo: float, hi: float, num: int) -> np.ndarray:
    """``num`` values from ``lo`` to ``hi``, evenly spaced in log scale (the papers' epsilon axes)."""
    return np.exp(np.linspace(math.log(lo), math.log(hi), num))
