"""Loaders for the papers' real datasets from local files, with the papers' preprocessing.

None of these files can be downloaded here; each loader is tested on a small fabricated file in the real
format. Every loader raises ``DataError`` (a ``ValueError``) with a one-line message when the path does not exist
or the file is not in the expected format.

* Foursquare TIST2015 (001 §6.1, 003 §6.1): ``dataset_TIST2015_Checkins.txt`` (TSV: user, venue, UTC time,
  timezone offset) and ``dataset_TIST2015_POIs.txt`` (TSV: venue, latitude, longitude, category, country).
* US Census 1990 (UCI): ``USCensus1990.data.txt`` (CSV with a header row: caseid, dAge, ...).
* drugs.com reviews (UCI): ``drugsComTrain_raw.tsv`` / ``drugsComTest_raw.tsv`` (TSV with a header row that
  includes ``rating``; review texts are quoted).
* Gowalla (SNAP): ``loc-gowalla_totalCheckins.txt`` (TSV: user, time, latitude, longitude, location id).
"""

from __future__ import annotations

import csv
import os
import sys

import numpy as np

from uldp_jax.data import _census
from uldp_jax.data._dataset import DataError, Dataset
from uldp_jax.data._grid import GOWALLA_BOX, GOWALLA_STEP, MANHATTAN_BOX

FOURSQUARE_CHECKINS = "dataset_TIST2015_Checkins.txt"
FOURSQUARE_POIS = "dataset_TIST2015_POIs.txt"
DRUG_FILES = ("drugsComTrain_raw.tsv", "drugsComTest_raw.tsv")


def _existing(path: str, what: str) -> str:
    path = os.fspath(path)
    if not os.path.exists(path):
        raise DataError(f"{what} data path does not exist: {path}")
    return path


def _half(total: int) -> int:
    """001 §6.1: a random half of the people are the users (the rest only define the true distribution)."""
    return max(1, total // 2)


def _cell(v: np.ndarray, lo: float, hi: float, num: int) -> np.ndarray:
    return np.clip(np.floor((v - lo) / (hi - lo) * num), 0, num - 1).astype(np.int64)


def load_foursquare(path: str, categories=("Hospital",), min_users: int = 10, box=MANHATTAN_BOX,
                    grid=(25, 25), name: str = "foursquare") -> Dataset:
    """Manhattan check-ins on a 25x25 grid; sensitive cells hold a venue of ``categories`` visited by
    ``>= min_users`` distinct users (001: hospitals -> |X_S| = 15; 003: hospitals, casinos, strip clubs -> 25).

    Args:
      path: directory holding both TIST2015 files, or the check-ins file (the POI file must sit beside it).
      categories: venue-category substrings (case-insensitive) that make a venue sensitive.
      min_users: minimum number of distinct users of a sensitive venue.
      box: ``(lat_min, lat_max, lon_min, lon_max)`` (default: Manhattan, ~400 m x 450 m cells).
      grid: ``(rows, cols)``; rows cut latitude, columns longitude.

    Returns:
      A ``Dataset`` whose ``extra`` holds per-check-in ``checkin_cells`` (int32), ``checkin_tags``
      (int8: 0 other, 1 home, 2 workplace; for 001's personalized study) and ``checkin_users``.
    """
    path = _existing(path, "Foursquare")
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    chk = os.path.join(path, FOURSQUARE_CHECKINS) if os.path.isdir(path) else path
    pois = os.path.join(folder, FOURSQUARE_POIS)
    for f in (chk, pois):
        if not os.path.isfile(f):
            raise DataError(f"Foursquare data needs {os.path.basename(f)} in {folder or '.'}")
    lat0, lat1, lon0, lon1 = box
    venues = {}
    cats = tuple(c.lower() for c in categories)
    with open(pois, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 4:
                raise DataError(f"{pois}:{lineno}: expected >= 4 tab-separated POI fields, got {len(parts)}")
            try:
                lat, lon = float(parts[1]), float(parts[2])
            except ValueError:
                raise DataError(f"{pois}:{lineno}: latitude/longitude are not numbers") from None
            if lat0 <= lat < lat1 and lon0 <= lon < lon1:
                cat = parts[3].lower()
                tag = 1 if cat.startswith("home") else 2 if cat in ("office", "coworking space") else 0
                r = min(int((lat - lat0) / (lat1 - lat0) * grid[0]), grid[0] - 1)
                c = min(int((lon - lon0) / (lon1 - lon0) * grid[1]), grid[1] - 1)
                venues[parts[0]] = (int(r * grid[1] + c), any(k in cat for k in cats), tag)
    cells, tags, users, sens_users = [], [], [], {}
    with open(chk, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3:
                raise DataError(f"{chk}:{lineno}: expected >= 3 tab-separated check-in fields, got {len(parts)}")
            v = venues.get(parts[1])
            if v is None:
                continue
            cells.append(v[0])
            tags.append(v[2])
            users.append(parts[0])
            if v[1]:
                sens_users.setdefault((v[0], parts[1]), set()).add(parts[0])
    if not cells:
        raise DataError(f"No Foursquare check-ins inside the box {box} in {chk}")
    d = grid[0] * grid[1]
    cells = np.asarray(cells, np.int32)
    counts = np.bincount(cells, minlength=d)
    sens = sorted({cell for (cell, _), u in sens_users.items() if len(u) >= min_users})
    _, user_ids = np.unique(np.asarray(users), return_inverse=True)
    desc = (f"Foursquare TIST2015 check-ins in box {box} on a {grid[0]}x{grid[1]} grid; sensitive cells hold a "
            f"venue of {list(categories)} visited by >= {min_users} users.")
    extra = {"checkin_cells": cells, "checkin_tags": np.asarray(tags, np.int8),
             "checkin_users": user_ids.astype(np.int32)}
    return Dataset(name, counts / counts.sum(), tuple(sens), _half(cells.size), tuple(grid), "real", desc,
                   counts=counts, extra=extra)


def load_census(path: str, num_military: int = 0, disability: bool = False) -> Dataset:
    """US Census 1990 categories: age x income x marital x sex (d = 400, |X_S| = 76, 001), optionally with
    ``num_military`` military-period flags (001 Fig 7) or the disability attribute (003: d = 1200, s = 424).

    Args:
      path: ``USCensus1990.data.txt`` (CSV with header).
      num_military: 0..5 non-sensitive binary attributes appended in 001's order.
      disability: append ``iDisabl1`` (3 codes) with 003's sensitive set instead.
    """
    path = _existing(path, "US Census")
    if os.path.isdir(path):
        path = os.path.join(path, "USCensus1990.data.txt")
        _existing(path, "US Census")
    names = list(_census.BASE_ATTRIBUTES) + list(_census.MILITARY_ATTRIBUTES[:num_military])
    cards = list(_census.BASE_CARDINALITIES) + [2] * num_military
    if disability:
        names.append(_census.DISABILITY_ATTRIBUTE)
        cards.append(3)
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = fh.readline().strip().split(",")
        missing = [a for a in names if a not in header]
        if missing:
            raise DataError(f"{path}: not a USCensus1990 CSV (header lacks {', '.join(missing)})")
        cols = [header.index(a) for a in names]
        try:
            rows = np.loadtxt(fh, delimiter=",", usecols=cols, dtype=np.int64, ndmin=2)
        except ValueError as e:
            raise DataError(f"{path}: malformed census row ({str(e).splitlines()[0]})") from None
    if rows.shape[0] == 0:
        raise DataError(f"{path}: no census records")
    for j, (a, k) in enumerate(zip(names, cards)):
        if rows[:, j].min() < 0 or rows[:, j].max() >= k:
            raise DataError(f"{path}: attribute {a} has codes outside [0, {k})")
    items = np.ravel_multi_index(tuple(rows.T), tuple(cards))
    counts = np.bincount(items, minlength=int(np.prod(cards)))
    sens = _census.census003_sensitive() if disability else _census.census_sensitive(num_military)
    name = "census1200" if disability else ("census" if num_military == 0 else f"census{4 + num_military}")
    desc = f"US Census 1990 ({rows.shape[0]} people) over {', '.join(names)}."
    return Dataset(name, counts / counts.sum(), tuple(sens.tolist()), _half(rows.shape[0]), tuple(cards), "real",
                   desc, counts=counts, extra={"attributes": tuple(names)})


def load_drugs(path: str, sensitive_ratings=(1, 2, 3)) -> Dataset:
    """drugs.com review ratings 1..10 (003: d = 10, sensitive = low ratings, s = 3; all users).

    Args:
      path: a ``drugsCom*_raw.tsv`` file, or a directory holding the train and test files (both are read).
    """
    path = _existing(path, "Drug review")
    files = [os.path.join(path, f) for f in DRUG_FILES if os.path.isfile(os.path.join(path, f))] \
        if os.path.isdir(path) else [path]
    if not files:
        raise DataError(f"No {' or '.join(DRUG_FILES)} in {path}")
    ratings = []
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    for f in files:
        with open(f, encoding="utf-8", errors="replace", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t")
            header = next(reader, None)
            if not header or "rating" not in header:
                raise DataError(f"{f}: not a drugs.com review TSV (no 'rating' column in the header)")
            j = header.index("rating")
            for lineno, row in enumerate(reader, 2):
                try:
                    r = int(round(float(row[j])))
                except (ValueError, IndexError):
                    raise DataError(f"{f}: row {lineno}: rating is missing or not a number") from None
                if not 1 <= r <= 10:
                    raise DataError(f"{f}: row {lineno}: rating {r} outside 1..10")
                ratings.append(r - 1)
    if not ratings:
        raise DataError(f"{path}: no reviews")
    counts = np.bincount(np.asarray(ratings), minlength=10)
    sens = tuple(r - 1 for r in sensitive_ratings)
    return Dataset("drug", counts / counts.sum(), sens, len(ratings), (10,), "real",
                   f"drugs.com ratings of {len(ratings)} reviews; sensitive ratings {list(sensitive_ratings)}.",
                   counts=counts)


def load_gowalla(path: str, box=GOWALLA_BOX, step: float = GOWALLA_STEP) -> Dataset:
    """Gowalla check-ins within 25N-50N, 130W-60W on a 0.2-degree grid (004 §7: d = 125 x 350 = 43,750)."""
    path = _existing(path, "Gowalla")
    if os.path.isdir(path):
        path = os.path.join(path, "loc-gowalla_totalCheckins.txt")
        _existing(path, "Gowalla")
    try:
        arr = np.loadtxt(path, usecols=(2, 3), dtype=np.float64, ndmin=2)
    except (ValueError, IndexError) as e:
        raise DataError(f"{path}: not a Gowalla check-in file ({str(e).splitlines()[0]})") from None
    lat0, lat1, lon0, lon1 = box
    rows, cols = int(round((lat1 - lat0) / step)), int(round((lon1 - lon0) / step))
    keep = (arr[:, 0] >= lat0) & (arr[:, 0] < lat1) & (arr[:, 1] >= lon0) & (arr[:, 1] < lon1)
    if not keep.any():
        raise DataError(f"{path}: no check-ins inside {box}")
    r = _cell(arr[keep, 0], lat0, lat1, rows)
    c = _cell(arr[keep, 1], lon0, lon1, cols)
    counts = np.bincount(r * cols + c, minlength=rows * cols)
    return Dataset("gowalla", counts / counts.sum(), (), int(keep.sum()), (rows, cols), "real",
                   f"Gowalla check-ins in {box} on a {step}-degree grid.", counts=counts)
