"""The ``Dataset`` record shared by the synthetic proxies and the real-data loaders."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


class DataError(ValueError):
    """A data file is missing, unreadable or not in the expected format (a user mistake, not a bug)."""


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A true distribution over ``d`` items, its sensitive items and the number of users of a study.

    Host-only configuration (NumPy, float64): experiments draw users from ``p`` (001's iid model) or take the
    fixed histogram ``counts``.

    Attributes:
      name: short name (``"foursquare"``, ``"census"``, ...).
      p: ``float64[d]`` true distribution (sums to 1).
      sensitive: sorted tuple of sensitive item indices ``X_S`` (may be empty for LDP-only studies).
      n: number of users the paper's study perturbs.
      shape: the item layout: ``(rows, cols)`` for grids, attribute cardinalities for census-like data,
        ``(d,)`` otherwise. Item ``x`` is ``np.unravel_index(x, shape)``.
      source: ``"synthetic"`` (a documented proxy) or ``"real"`` (loaded from a local file).
      description: how the data were built (one paragraph).
      counts: ``int64[d]`` population histogram when the data come from records (``None`` for proxies).
      extra: other named arrays (e.g. ``{"blocks": int32[d]}`` block ids, attribute names).
    """

    name: str
    p: np.ndarray
    sensitive: tuple
    n: int
    shape: tuple
    source: str
    description: str
    counts: Any = None
    extra: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        p = np.asarray(self.p, dtype=np.float64)
        if p.ndim != 1 or p.size < 2 or np.any(p < 0) or not np.isclose(p.sum(), 1.0, atol=1e-9):
            raise ValueError(f"Expected p of dataset {self.name!r} to be a distribution over >= 2 items.")
        object.__setattr__(self, "p", p / p.sum())
        sens = tuple(sorted(int(i) for i in self.sensitive))
        if sens and (sens[0] < 0 or sens[-1] >= p.size or len(set(sens)) != len(sens)):
            raise ValueError(f"Expected sensitive items of dataset {self.name!r} to be distinct, in [0, {p.size}).")
        object.__setattr__(self, "sensitive", sens)
        if int(np.prod(self.shape)) != p.size:
            raise ValueError(f"Expected shape={self.shape} of dataset {self.name!r} to have {p.size} cells.")
        if not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise ValueError(f"Expected n={self.n!r} >= 1 for dataset {self.name!r}.")
        object.__setattr__(self, "n", int(self.n))

    @property
    def d(self) -> int:
        return int(self.p.size)

    @property
    def s(self) -> int:
        return len(self.sensitive)

    @property
    def theta_n(self) -> float:
        """True mass of the non-sensitive items (003's theta)."""
        mask = np.ones(self.d, bool)
        mask[list(self.sensitive)] = False
        return float(self.p[mask].sum())

    def with_sensitive(self, sensitive: Any, name: str | None = None) -> "Dataset":
        """The same distribution with another sensitive set (e.g. 001 Fig 6's random ``X_S``)."""
        return dataclasses.replace(self, sensitive=tuple(int(i) for i in sensitive), name=name or self.name)

    def with_n(self, n: int) -> "Dataset":
        return dataclasses.replace(self, n=int(n))

    def summary(self) -> str:
        return (f"{self.name} ({self.source}): d={self.d}, s={self.s}, n={self.n}, "
                f"theta_N={self.theta_n:.3f}")


def rescale_sensitive_mass(p: np.ndarray, sensitive: Any, mass: float) -> np.ndarray:
    """Rescales ``p`` so the sensitive items carry ``mass`` in total, keeping shapes within each part."""
    p = np.asarray(p, np.float64)
    mask = np.zeros(p.size, bool)
    mask[list(sensitive)] = True
    out = p.copy()
    out[mask] *= mass / p[mask].sum()
    out[~mask] *= (1.0 - mass) / p[~mask].sum()
    return out / out.sum()
