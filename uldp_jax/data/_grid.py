"""Synthetic location proxies: a Manhattan-like 25x25 grid (001/003 Foursquare) and a US grid (004 Gowalla).

The real check-in data cannot be downloaded here; these proxies have the papers' domain sizes, sensitive-set
sizes and number of users, and a realistic shape (a few dense hot spots on a narrow island, most cells nearly
empty). Every proxy is a deterministic function of its arguments (a seeded ``numpy.random.Generator``).
"""

from __future__ import annotations

import numpy as np

from uldp_jax.data._dataset import Dataset, rescale_sensitive_mass

# Manhattan bounding box used by the real-data loader and mirrored by the proxy (about 400 m x 450 m cells).
MANHATTAN_BOX = (40.70, 40.80, -74.02, -73.90)  # lat_min, lat_max, lon_min, lon_max
# 004 section 7: latitudes 25N..50N and longitudes 130W..60W rounded to 0.2 degrees: 125 x 350 = 43,750 cells.
GOWALLA_BOX = (25.0, 50.0, -130.0, -60.0)
GOWALLA_STEP = 0.2

# (lat, lon, relative weight) of the busiest US metro areas, for the Gowalla proxy's hot spots.
_US_CITIES = (
    (40.7, -74.0, 10), (34.05, -118.25, 8), (41.88, -87.63, 6), (29.76, -95.37, 7), (30.27, -97.74, 12),
    (32.78, -96.8, 7), (37.77, -122.42, 7), (47.61, -122.33, 4), (25.76, -80.19, 3), (33.75, -84.39, 4),
    (39.74, -104.99, 3), (42.36, -71.06, 3), (38.9, -77.04, 3), (45.52, -122.68, 2), (33.45, -112.07, 2),
    (36.17, -115.14, 2), (39.95, -75.17, 2), (35.23, -80.84, 1), (44.98, -93.27, 2), (32.72, -117.16, 2),
)


def _gaussian_bumps(rows: int, cols: int, centers: np.ndarray, widths: np.ndarray, weights: np.ndarray):
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    out = np.zeros((rows, cols))
    for (cr, cc), w, a in zip(centers, widths, weights):
        out += a * np.exp(-0.5 * (((r - cr) / w[0]) ** 2 + ((c - cc) / w[1]) ** 2))
    return out


def manhattan_proxy_grid(seed: int = 0, rows: int = 25, cols: int = 25) -> np.ndarray:
    """Unnormalised check-in density on a ``rows x cols`` grid shaped like Manhattan.

    The island is a band of width ~4 cells running from the bottom-left (Battery) to the top-right (Harlem);
    inside it sit 14 Gaussian hot spots (Midtown and Downtown heaviest), with a heavy-tailed background; cells
    off the island (rivers, New Jersey, Queens) get ~1e-4 of the island's density.
    """
    rng = np.random.default_rng(seed)
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    t = (r + c) / (rows + cols - 2)                     # position along the island's axis
    off = (c - r) / np.sqrt(2) - 1.5 + 3.0 * t          # signed distance from the axis (cells)
    island = np.exp(-0.5 * (off / 2.2) ** 4)
    along = rng.uniform(0.05, 0.8, size=14)
    centers = np.stack([along * (rows - 1) - rng.normal(0, 1.0, 14), along * (cols - 1) + rng.normal(0, 1.0, 14)], 1)
    weights = rng.pareto(1.5, 14) + 0.5
    weights[np.argmin(np.abs(along - 0.45))] *= 4       # Midtown
    weights[np.argmin(np.abs(along - 0.15))] *= 2.5     # Downtown / Financial District
    widths = rng.uniform(0.6, 1.8, size=(14, 2))
    dens = _gaussian_bumps(rows, cols, centers, widths, weights) + 0.05 * rng.lognormal(0, 1, (rows, cols))
    return dens * island + 1e-4 * dens.mean()


def foursquare_proxy(s: int = 15, n: int = 179_527, sensitive_mass: float = 0.03, seed: int = 0,
                     name: str = "foursquare") -> Dataset:
    """Synthetic proxy of 001's Manhattan Foursquare data: 25x25 grid (d = 625), ``s`` sensitive cells.

    Sensitive cells stand for "regions with a hospital visited by >= 10 users": ``s`` distinct cells drawn
    (seeded) among the busier half of the island, whose total mass is then set to ``sensitive_mass``
    (001 does not report it; 003 reports theta_N = 0.95 for its s = 25 variant, so 0.03 for s = 15).

    Args:
      s: number of sensitive cells (001: 15; 003: 25).
      n: number of users (001: 179,527 = half the Manhattan check-ins; 003: 419,959).
      sensitive_mass: total probability of the sensitive cells (``1 - theta_N``).
      seed: construction seed.
      name: dataset name.
    """
    dens = manhattan_proxy_grid(seed).ravel()
    rng = np.random.default_rng(seed + 1)
    busy = np.flatnonzero(dens >= np.quantile(dens, 0.5))
    sens = rng.choice(busy, size=s, replace=False)
    p = rescale_sensitive_mass(dens / dens.sum(), sens, sensitive_mass)
    desc = (f"Synthetic Manhattan-like 25x25 check-in grid (seed {seed}): 14 Gaussian hot spots on a diagonal "
            f"island band; {s} sensitive cells drawn among the busier half, carrying mass {sensitive_mass}.")
    return Dataset(name, p, tuple(sens.tolist()), n, (25, 25), "synthetic", desc)


def foursquare003_proxy(seed: int = 0) -> Dataset:
    """003's Foursquare setting: d = 625, s = 25 (hospitals, casinos, strip clubs), theta_N = 0.95, n = 419,959."""
    return foursquare_proxy(s=25, n=419_959, sensitive_mass=0.05, seed=seed, name="foursquare25")


def grid_blocks(rows: int, cols: int, m1: int, m2: int) -> np.ndarray:
    """Block id (``int32[rows * cols]``) of each cell when rows are cut into ``m1`` and columns into ``m2``
    nearly equal parts (004 Table 1: latitudes into m1, longitudes into m2 parts)."""
    if not (1 <= m1 <= rows and 1 <= m2 <= cols):
        raise ValueError(f"Expected 1 <= m1={m1} <= {rows} and 1 <= m2={m2} <= {cols}.")
    br = (np.arange(rows) * m1) // rows
    bc = (np.arange(cols) * m2) // cols
    return (br[:, None] * m2 + bc[None, :]).ravel().astype(np.int32)


def gowalla_proxy(seed: int = 0, n: int = 3_671_812, rows: int = 125, cols: int = 350) -> Dataset:
    """Synthetic proxy of 004's Gowalla grid: 0.2-degree cells over 25N-50N x 130W-60W (d = 43,750).

    Check-ins concentrate in 20 metro areas (Gaussian bumps of ~0.3 degrees, weights from city size; Austin,
    Gowalla's home, heaviest) over a faint background (2% of the mass). No sensitive set: 004 uses blocks
    (``grid_blocks``) instead.
    """
    rng = np.random.default_rng(seed)
    lat0, _, lon0, _ = GOWALLA_BOX
    cities = np.asarray(_US_CITIES, np.float64)
    centers = np.stack([(cities[:, 0] - lat0) / GOWALLA_STEP, (cities[:, 1] - lon0) / GOWALLA_STEP], 1)
    widths = rng.uniform(1.0, 2.5, size=(len(cities), 2))
    dens = _gaussian_bumps(rows, cols, centers, widths, cities[:, 2] * rng.uniform(0.7, 1.3, len(cities)))
    dens = dens / dens.sum()
    p = 0.98 * dens + 0.02 * rng.dirichlet(np.full(rows * cols, 0.3)).reshape(rows, cols)
    desc = (f"Synthetic Gowalla-like US grid (seed {seed}): {rows}x{cols} cells of 0.2 degrees, 20 metro hot "
            "spots plus a 2% Dirichlet(0.3) background.")
    return Dataset("gowalla", p.ravel(), (), n, (rows, cols), "synthetic", desc)
