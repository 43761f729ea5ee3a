"""``StudyResult.save`` / ``load``: a study as ``<path>.json`` (configuration, versions, rows) and ``<path>.npz``
(``values``), written atomically and read back only after every field is checked.

Names are taken literally: the suffixes are appended to the name given (``"study_eps0.5"`` writes
``study_eps0.5.json`` and ``study_eps0.5.npz``); a name that already ends in ``.json`` or ``.npz`` names the pair
by one of its members. An existing file of the pair is refused unless ``overwrite=True``. Each file goes to a
temporary name first and is renamed into place; the JSON records the SHA-256 of ``values``, so a pair that does
not belong together (an interrupted save, a file copied from another study) is refused on load.

Rows store NaN as ``null`` (plain JSON) and +-inf as ``{"__float__": "inf"}``; the configuration and timing are
stored with ``uldp_jax._files.encode``, so tuples, integer keys and NaN come back with their types.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import zipfile
import zlib
from typing import Any

import numpy as np

from uldp_jax import _files
from uldp_jax._files import FileFormatError

FORMAT = "uldp_jax.StudyResult/2"
FORMATS = ("uldp_jax.StudyResult/1", FORMAT)  # /1: no values_sha256, configuration as plain JSON
FLOATS = ("mean", "se", "theory", "z", "compile_s", "run_s")
_STRS = ("mechanism", "sample", "method", "metric")
_INTS = ("n", "reps")
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)


def pair(path: Any) -> tuple[str, str]:
    """``(json_path, npz_path)`` named by ``path`` (suffixes appended, never replaced)."""
    base = _files.check_path(path)
    for suffix in (".json", ".npz"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    return base + ".json", base + ".npz"


def _digest(values: np.ndarray) -> str:
    a = np.ascontiguousarray(values, np.float64)
    return hashlib.sha256(repr(a.shape).encode() + a.tobytes()).hexdigest()


def _row_float(v: float) -> Any:
    if math.isnan(v):
        return None
    return v if math.isfinite(v) else {"__float__": repr(v)}


def save(res: Any, path: Any, overwrite: Any) -> None:
    """Writes ``res`` (a ``StudyResult``) as the pair named by ``path``."""
    if not isinstance(overwrite, (bool, np.bool_)):
        raise TypeError(f"Expected overwrite={overwrite!r} to be True or False.")
    jpath, npath = pair(path)
    for p in (jpath, npath):  # refuse before writing either file
        _files.check_writable(p, bool(overwrite))
    values = np.asarray(res.values, np.float64)
    rows = [{k: (_row_float(float(v)) if k in FLOATS and v is not None else v) for k, v in r.items()}
            for r in res.rows()]
    doc = {"format": FORMAT, "uldp_jax_version": res.version, "jax_version": res.jax_version,
           "config": _files.encode(res.config, "config"), "timing": _files.encode(res.timing, "timing"),
           "columns": res.columns, "values_shape": list(values.shape), "values_sha256": _digest(values),
           "rows": rows}
    text = json.dumps(doc, indent=1, allow_nan=False).encode()
    _files.write_atomic(npath, lambda f: np.savez(f, values=values), bool(overwrite))
    _files.write_atomic(jpath, lambda f: f.write(text), bool(overwrite))


def _read_json(jpath: str) -> dict:
    where = repr(jpath)
    _files.exists_or_raise(jpath)
    try:
        with open(jpath, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise FileFormatError(f"{where} is not valid JSON ({e}).") from None
    if not isinstance(doc, dict) or doc.get("format") not in FORMATS:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise FileFormatError(f"Expected {where} to hold a saved StudyResult (field 'format' in {FORMATS}), "
                              f"got {got!r}.")
    required = ("uldp_jax_version", "jax_version", "config", "timing", "columns", "rows")
    if doc["format"] == FORMAT:
        required += ("values_shape", "values_sha256")
    for field in required:
        if field not in doc:
            raise FileFormatError(f"{where}: field {field!r} is missing.")
    for field in ("uldp_jax_version", "jax_version"):
        if not isinstance(doc[field], str):
            raise FileFormatError(f"{where}: field {field!r} must be a str, got {doc[field]!r}.")
    if doc["format"] == FORMAT:
        doc["config"] = _files.decode(doc["config"], f"{where}: field 'config'")
        doc["timing"] = _files.decode(doc["timing"], f"{where}: field 'timing'")
    for field in ("config", "timing"):
        if not isinstance(doc[field], dict):
            raise FileFormatError(f"{where}: field {field!r} must be an object, got {type(doc[field]).__name__}.")
    return doc


def _check_float(where: str, v: Any) -> float:
    if v is None:
        return math.nan
    if isinstance(v, dict) and list(v) == ["__float__"] and v["__float__"] in ("inf", "-inf", "nan"):
        return float(v["__float__"])
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise FileFormatError(f"{where} must be a number (null for NaN), got {v!r}.")
    return float(v)


def _check_rows(where: str, doc: dict) -> list[dict]:
    columns, rows = doc["columns"], doc["rows"]
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns) or len(set(columns)) != len(columns):
        raise FileFormatError(f"{where}: field 'columns' must be a list of distinct names, got {columns!r}.")
    if not isinstance(rows, list):
        raise FileFormatError(f"{where}: field 'rows' must be a list, got {type(rows).__name__}.")
    if rows:
        missing = [c for c in _STRS + _INTS + FLOATS if c not in columns]
        if missing:
            raise FileFormatError(f"{where}: field 'columns' lacks {missing[0]!r} (columns {columns}).")
    grids = doc["config"].get("grids")
    grid_names = list(grids) if isinstance(grids, dict) else []
    out = []
    for i, r in enumerate(rows):
        at = f"{where}: rows[{i}]"
        if not isinstance(r, dict):
            raise FileFormatError(f"{at} must be an object, got {type(r).__name__}.")
        if list(r) != columns:
            gone = [c for c in columns if c not in r]
            more = [c for c in r if c not in columns]
            what = (f"lacks field {gone[0]!r}" if gone else f"has field {more[0]!r} not in 'columns'" if more
                    else "lists its fields in another order than 'columns'")
            raise FileFormatError(f"{at} {what}.")
        row = {}
        for k, v in r.items():
            if k in FLOATS:
                row[k] = _check_float(f"{at} field {k!r}", v)
                continue
            if k in _STRS and not isinstance(v, str):
                raise FileFormatError(f"{at} field {k!r} must be a str, got {v!r}.")
            if k in _INTS and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise FileFormatError(f"{at} field {k!r} must be an int >= 1, got {v!r}.")
            if k in grid_names and v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
                raise FileFormatError(f"{at} field {k!r} (a grid parameter) must be a number or null, got {v!r}.")
            if not (v is None or isinstance(v, (str, int, float))):
                raise FileFormatError(f"{at} field {k!r} must be a table value (str, number or null), got {v!r}.")
            row[k] = v
        out.append(row)
    return out


def _read_values(npath: str) -> np.ndarray:
    where = repr(npath)
    _files.exists_or_raise(npath)
    try:
        z = np.load(npath, allow_pickle=False)
    except _READ_ERRORS as e:
        raise FileFormatError(f"{where} is not a readable .npz file ({type(e).__name__}: {e}).") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise FileFormatError(f"{where} is a single .npy array, not the .npz file of a saved StudyResult.")
    with z:
        if z.files != ["values"]:
            extra = [f for f in z.files if f != "values"]
            raise FileFormatError(f"{where}: field {extra[0] if extra else 'values'!r} "
                                  f"{'is not a saved field (only values)' if extra else 'is missing'}.")
        try:
            values = z["values"]
        except _READ_ERRORS as e:
            raise FileFormatError(f"{where}: field 'values' cannot be read ({type(e).__name__}: {e}).") from None
    if values.dtype != np.float64 or values.ndim != 2:
        raise FileFormatError(f"{where}: field 'values' must be float64[rows, reps], got dtype {values.dtype} "
                              f"and shape {values.shape}.")
    return values


def load(path: Any) -> dict:
    """The checked contents of the pair named by ``path``: keyword arguments of ``StudyResult``."""
    jpath, npath = pair(path)
    doc = _read_json(jpath)
    rows = _check_rows(repr(jpath), doc)
    values = _read_values(npath)
    where = f"{jpath!r} and {npath!r}"
    if values.shape[0] != len(rows):
        raise FileFormatError(f"{where}: field 'values' has {values.shape[0]} rows, field 'rows' {len(rows)}.")
    reps = [r["reps"] for r in rows if r["reps"] != values.shape[1]]
    if reps:
        raise FileFormatError(f"{where}: field 'values' has {values.shape[1]} repetitions per row, a row says "
                              f"reps={reps[0]}.")
    if doc["format"] == FORMAT and (doc["values_shape"] != list(values.shape)
                                    or doc["values_sha256"] != _digest(values)):
        raise FileFormatError(f"{where} do not belong together: field 'values_sha256' of the JSON does not match "
                              "the values in the .npz (an interrupted save, or a file from another study).")
    return dict(rows=rows, values=values, config=doc["config"], timing=doc["timing"],
                version=doc["uldp_jax_version"], jax_version=doc["jax_version"])
