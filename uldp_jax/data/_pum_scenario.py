"""A synthetic personalized-mechanism scenario shaped like 001 §6.1-6.2 (Foursquare, Manhattan).

001 uses 179527 users on a 25 x 25 grid (``|X| = 625``), 15 hospital regions as ``X_S``, and two semantic tags:
5040 users checked in at home and 19532 at their workplace. Those check-ins are not public here, so this module
draws a look-alike population (seeded by a JAX key):

* host-side NumPy draws from a generator seeded by the key's data (fast: no compilation);
* three densities on the grid, mixtures of Gaussian bumps with random centres: *home* (broad residential
  areas), *workplace* (two tight business districts) and *other* check-ins (hotspots, plus a share of both);
* ``X_S``: ``num_sensitive`` distinct cells drawn from the hotspot density (hospitals);
* every user gets a home cell (home density) and a different workplace cell (workplace density);
  a fraction ``frac_home`` of users (5040 / 179527 by default) checks in at home, ``frac_work``
  (19532 / 179527) at work, the rest at a cell of the *other* density;
* ``personal[i] = [home, workplace]``, with ``-1`` where that cell is already in ``X_S`` (001: a user-specific
  sensitive region is a region of ``X_N``);
* ``poi_prior[k]`` (case II): the empirical distribution of ``num_pois`` venues tagged ``k``, drawn from the
  tag's density blurred by a Gaussian of width ``poi_blur`` and mixed with the *other* density (weight
  ``poi_mix``): close to, not equal to, the users' true ``pi_k`` (which also carries the users' sampling
  noise), like 001's POI distributions.

Everything scales with ``n`` and ``grid``; tests use e.g. ``grid=8, n=20000``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from uldp_jax import _validate
from uldp_jax.pum._mechanism import PUM

TAGS = ("home", "workplace")
FOURSQUARE_N = 179527
FOURSQUARE_HOME = 5040
FOURSQUARE_WORK = 19532


@dataclasses.dataclass(frozen=True)
class PUMScenario:
    """A synthetic population for the PUM (host-side NumPy arrays).

    Attributes:
      xs: int32 ``[n]``: each user's check-in cell (row-major over the ``grid x grid`` map).
      personal: int32 ``[n, 2]``: each user's home and workplace cell (``-1`` when in ``X_S``).
      sensitive: sorted tuple ``X_S``.
      grid: side of the map; ``d = grid ** 2``.
      poi_prior: float64 ``[2, d]``: case (II) bot distributions (home, workplace).
      densities: float64 ``[3, d]``: the generating home, workplace and other-check-in densities.
      tags: the tag names, in bot order.
    """

    xs: np.ndarray
    personal: np.ndarray
    sensitive: tuple
    grid: int
    poi_prior: np.ndarray
    densities: np.ndarray
    tags: tuple = TAGS

    @property
    def d(self) -> int:
        return self.grid * self.grid

    @property
    def n(self) -> int:
        return int(self.xs.shape[0])

    def mech(self, eps: Any, base: Any = "urr") -> Any:
        """The PUM of this scenario (``num_tags = 2``)."""
        return PUM(self.d, self.sensitive, len(self.tags), eps, base=base)


def _bumps(rng: np.random.Generator, grid: int, num: int, sigma: float, uniform: float) -> np.ndarray:
    """A density on the grid: ``num`` Gaussian bumps with random centres and weights, plus a uniform floor."""
    centres = rng.uniform(0.1, 0.9, (num, 2))
    weights = rng.dirichlet(np.full(num, 2.0))
    ax = (np.arange(grid) + 0.5) / grid
    cells = np.stack(np.meshgrid(ax, ax, indexing="ij"), -1).reshape(-1, 2)
    dist2 = np.sum((cells[:, None, :] - centres[None]) ** 2, -1)
    dens = np.exp(-dist2 / (2 * sigma**2)) @ weights
    dens = dens / dens.sum()
    return (1 - uniform) * dens + uniform / dens.shape[0]


def _blur_matrix(grid: int, width: float) -> np.ndarray:
    """Column-stochastic ``[d, d]`` Gaussian blur on the grid (``width`` in map units; 0 = identity)."""
    ax = (np.arange(grid) + 0.5) / grid
    cells = np.stack(np.meshgrid(ax, ax, indexing="ij"), -1).reshape(-1, 2)
    if width <= 0:
        return np.eye(grid * grid)
    dist2 = np.sum((cells[:, None, :] - cells[None]) ** 2, -1)
    k = np.exp(-dist2 / (2 * width**2))
    return k / k.sum(axis=0, keepdims=True)


def _draw(rng: np.random.Generator, density: np.ndarray, n: int) -> np.ndarray:
    """``n`` iid cells from ``density`` by inverse CDF (O(n + d) memory)."""
    cdf = np.cumsum(density)
    u = rng.uniform(0.0, cdf[-1], n)
    return np.clip(np.searchsorted(cdf, u, side="right"), 0, density.shape[0] - 1)


def pum_scenario(key: jax.Array, *, grid: int = 25, n: int = FOURSQUARE_N, num_sensitive: int = 15,
                 frac_home: float = FOURSQUARE_HOME / FOURSQUARE_N, frac_work: float = FOURSQUARE_WORK / FOURSQUARE_N,
                 num_pois: int = 20000, poi_blur: float = 0.04, poi_mix: float = 0.1) -> PUMScenario:
    """Draws a synthetic personalized scenario (defaults: 001's sizes, 179527 users on a 25 x 25 grid).

    Args:
      key: PRNG key; the same key gives the same scenario.
      grid: map side (``d = grid ** 2 >= 4``).
      n: number of users.
      num_sensitive: ``|X_S|`` (hospital cells), in ``[0, d - 2]``.
      frac_home: share of users checking in at home (001: 5040 / 179527).
      frac_work: share checking in at their workplace (001: 19532 / 179527).
      num_pois: venues per tag behind ``poi_prior``.
      poi_blur: width (map units; the map is the unit square) of the Gaussian blur of the tag's density that
        venues follow.
      poi_mix: weight of the *other* density in the venues' density, in ``[0, 1]``.

    Returns:
      ``PUMScenario``.
    """
    _validate.check_key(key)
    grid = _validate.check_int("grid", grid, minimum=2)
    d = grid * grid
    n = _validate.check_int("n", n, minimum=1)
    num_sensitive = _validate.check_int("num_sensitive", num_sensitive, minimum=0, maximum=d - 2)
    num_pois = _validate.check_int("num_pois", num_pois, minimum=1)
    if not float(poi_blur) >= 0.0:
        raise ValueError(f"Expected poi_blur={poi_blur} >= 0.")
    for name, v in (("frac_home", frac_home), ("frac_work", frac_work), ("poi_mix", poi_mix)):
        if not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"Expected {name}={v} in [0, 1].")
    if frac_home + frac_work > 1.0:
        raise ValueError(f"Expected frac_home + frac_work = {frac_home + frac_work} <= 1.")
    # Host-side generation (fast, no compilation), seeded only by the caller's key.
    raw = jax.random.key_data(key) if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key
    rng = np.random.default_rng(np.asarray(raw, np.uint32).ravel().tolist())
    home = _bumps(rng, grid, 5, 0.18, 0.10)
    work = _bumps(rng, grid, 3, 0.10, 0.02)
    hot = _bumps(rng, grid, 8, 0.05, 0.10)
    other = 0.3 * hot + 0.4 * work + 0.3 * home
    sens = rng.choice(d, num_sensitive, replace=False, p=hot / hot.sum())
    h = _draw(rng, home, n)
    w = _draw(rng, work, n)
    w = np.where(w == h, _draw(rng, work, n), w)
    w = np.where(w == h, (w + 1) % d, w)
    n_home = int(round(frac_home * n))
    n_work = min(int(round(frac_work * n)), n - n_home)
    idx = np.arange(n)
    xs = np.where(idx < n_home, h, np.where(idx < n_home + n_work, w, _draw(rng, other, n)))
    perm = rng.permutation(n)
    xs, h, w = xs[perm], h[perm], w[perm]
    in_s = np.zeros(d, bool)
    in_s[sens] = True
    personal = np.stack([np.where(in_s[h], -1, h), np.where(in_s[w], -1, w)], axis=1)
    priors = []
    blur = _blur_matrix(grid, poi_blur)
    for dens in (home, work):  # two tags
        venues = _draw(rng, (1 - poi_mix) * (blur @ dens) + poi_mix * other, num_pois)
        priors.append(np.bincount(venues, minlength=d) / num_pois)
    return PUMScenario(
        xs=np.asarray(xs, np.int32),
        personal=np.asarray(personal, np.int32),
        sensitive=tuple(sorted(int(v) for v in np.asarray(sens))),
        grid=grid,
        poi_prior=np.stack(priors).astype(np.float64),
        densities=np.stack([home, work, other]).astype(np.float64),
    )
