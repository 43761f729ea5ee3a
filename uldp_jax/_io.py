"""Saving and loading simulation results: one ``.npz`` file (arrays) with a JSON description inside; no pickle.

    res = ul.simulate(key, mech, p=p, n=10**5, reps=10)
    ul.save_result("run.npz", res, metadata={"mechanism": repr(mech), "eps": 1.0})
    res2, meta = ul.load_result("run.npz")

The file opens with ``numpy.load(path)`` alone (``allow_pickle`` stays False): the arrays are named
``estimates_<i>``, ``stats``, ``target``, and ``__meta__`` holds the JSON text (format version, method names in
order, ``n``, the caller's metadata). Metadata values JSON would change (integer keys, tuples, NaN) are stored
tagged (``uldp_jax._files.encode``), so they come back with their types. Files are written atomically and never
overwritten unless asked; reading checks every field and names the file and the field it cannot use.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from typing import Any

import numpy as np

from uldp_jax import _files
from uldp_jax._files import FileFormatError
from uldp_jax.engine import SimResult

FORMAT = "uldp_jax.SimResult/2"
FORMATS = ("uldp_jax.SimResult/1", FORMAT)  # /1: metadata as plain JSON (no tags)
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)


def _check_arrays(where: str, methods: list, arrays: dict) -> None:
    """Shapes and dtypes of a ``SimResult``'s arrays: estimates ``float[(g,) r, d]`` (one shape for every
    method), stats ``int/float[(g,) r, m]`` and target ``float[d]``."""
    shape = None
    for i, m in enumerate(methods):
        name = f"estimates_{i}"
        a = arrays[name]
        if a.dtype.kind != "f" or a.ndim not in (2, 3):
            raise FileFormatError(f"{where}: field {name} (method {m!r}) must be a float array of rank 2 or 3 "
                                  f"([(g,) reps, d]), got dtype {a.dtype} and shape {a.shape}.")
        if shape is not None and a.shape != shape:
            raise FileFormatError(f"{where}: field {name} (method {m!r}) has shape {a.shape}, the other methods "
                                  f"{shape}.")
        shape = a.shape
    stats, target = arrays["stats"], arrays["target"]
    if stats.dtype.kind not in "iuf" or (shape is not None and (stats.ndim != len(shape) or
                                                                 stats.shape[:-1] != shape[:-1])):
        raise FileFormatError(f"{where}: field stats must be a numeric array [(g,) reps, m] matching the estimates "
                              f"{shape}, got dtype {stats.dtype} and shape {stats.shape}.")
    if target.dtype.kind != "f" or target.ndim != 1 or (shape is not None and target.shape[0] != shape[-1]):
        raise FileFormatError(f"{where}: field target must be a float array [d] (d={None if shape is None else shape[-1]}"
                              f" from the estimates), got dtype {target.dtype} and shape {target.shape}.")


def save_result(path: str | os.PathLike, result: SimResult, metadata: dict | None = None, *,
                overwrite: bool = False) -> str:
    """Writes ``result`` (and JSON-able ``metadata``) to ``path``, a ``.npz`` file readable without pickle.

    The file is written to a temporary name beside ``path`` and renamed into place, so an interrupted save
    leaves no partial file.

    Args:
      path: destination; ``.npz`` is appended when the name does not end with it (``"run_eps0.5"`` writes
        ``run_eps0.5.npz``).
      result: a ``SimResult`` from ``ul.simulate``.
      metadata: optional dict of JSON-like values (None, bool, int, float, str, lists, tuples, dicts with
        any of these as keys; NumPy scalars are stored as Python numbers) stored beside the arrays.
      overwrite: replace an existing file (default: refuse it).

    Returns:
      The path written.

    Raises:
      TypeError: ``result`` is not a ``SimResult``, ``metadata`` is not a dict of JSON-like values, or
        ``path`` is not a str/PathLike.
      FileExistsError: ``path`` exists and ``overwrite`` is False.
      IsADirectoryError: ``path`` is a directory.
    """
    if not isinstance(result, SimResult):
        raise TypeError(f"Expected result to be a SimResult, got {type(result).__name__}.")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"Expected metadata to be a dict or None, got {type(metadata).__name__}.")
    overwrite = _check_flag(overwrite)
    path = _files.with_suffix(_files.check_path(path), ".npz")
    methods = list(result.estimates)
    if not all(isinstance(m, str) for m in methods):
        raise TypeError(f"Expected the method names of result.estimates to be str, got {methods!r}.")
    n = result.n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"Expected result.n={n!r} to be an int.")
    meta = json.dumps({"format": FORMAT, "methods": methods, "n": int(n),
                       "metadata": _files.encode(metadata or {}, "metadata")}, allow_nan=False)
    arrays = {f"estimates_{i}": np.asarray(result.estimates[m]) for i, m in enumerate(methods)}
    arrays.update(stats=np.asarray(result.stats), target=np.asarray(result.target))
    try:
        _check_arrays("result", methods, arrays)
    except FileFormatError as e:
        raise ValueError(f"Expected a SimResult as ul.simulate returns it: {e}") from None
    arrays["__meta__"] = np.array(meta)
    _files.write_atomic(path, lambda f: np.savez_compressed(f, **arrays), overwrite)
    return path


def _check_flag(overwrite: Any) -> bool:
    if not isinstance(overwrite, (bool, np.bool_)):
        raise TypeError(f"Expected overwrite={overwrite!r} to be True or False.")
    return bool(overwrite)


def _read_meta(where: str, z: Any) -> dict:
    if "__meta__" not in z.files:
        raise FileFormatError(f"Expected {where} to be written by save_result (no __meta__ entry).")
    try:
        raw = z["__meta__"]
    except _READ_ERRORS as e:
        raise FileFormatError(f"{where}: field __meta__ cannot be read ({type(e).__name__}: {e}).") from None
    if raw.ndim != 0 or raw.dtype.kind != "U":
        raise FileFormatError(f"{where}: field __meta__ must hold JSON text, got dtype {raw.dtype}, shape {raw.shape}.")
    try:
        meta = json.loads(str(raw))
    except ValueError as e:
        raise FileFormatError(f"{where}: field __meta__ is not valid JSON ({e}).") from None
    if not isinstance(meta, dict):
        raise FileFormatError(f"{where}: field __meta__ must be a JSON object, got {type(meta).__name__}.")
    if meta.get("format") not in FORMATS:
        raise FileFormatError(f"{where}: field __meta__['format'] must be one of {FORMATS}, got "
                              f"{meta.get('format')!r}.")
    for field in ("methods", "n", "metadata"):
        if field not in meta:
            raise FileFormatError(f"{where}: field __meta__[{field!r}] is missing.")
    methods, n = meta["methods"], meta["n"]
    if (not isinstance(methods, list) or not all(isinstance(m, str) and m for m in methods)
            or len(set(methods)) != len(methods)):
        raise FileFormatError(f"{where}: field __meta__['methods'] must be a list of distinct method names, "
                              f"got {methods!r}.")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise FileFormatError(f"{where}: field __meta__['n'] must be an int >= 1, got {n!r}.")
    metadata = meta["metadata"]
    if meta["format"] == FORMAT:
        metadata = _files.decode(metadata, f"{where}: field __meta__['metadata']")
    if not isinstance(metadata, dict):
        raise FileFormatError(f"{where}: field __meta__['metadata'] must be a dict, got {type(metadata).__name__}.")
    meta["metadata"] = metadata
    return meta


def load_result(path: str | os.PathLike) -> tuple[SimResult, dict]:
    """Reads a file written by ``save_result``.

    Args:
      path: the ``.npz`` file (the name as written: ``save_result``'s return value).

    Returns:
      ``(result, metadata)``: a ``SimResult`` with NumPy arrays (same dtypes and shapes as saved) and the
      metadata dict given to ``save_result`` (empty if none), with the same types (integer keys, tuples, NaN).

    Raises:
      FileNotFoundError: no such file.
      ValueError: (``uldp_jax._files.FileFormatError``) the file is not a readable saved ``SimResult``: the
        message names the file and the field (a missing or extra array, a wrong dtype or shape, broken JSON).
    """
    path = _files.check_path(path)
    _files.exists_or_raise(path)
    where = repr(path)
    try:
        z = np.load(path, allow_pickle=False)
    except _READ_ERRORS as e:
        raise FileFormatError(f"{where} is not a readable .npz file written by save_result ({e}).") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise FileFormatError(f"{where} is a single .npy array, not a .npz file written by save_result.")
    with z:
        try:
            meta = _read_meta(where, z)
            methods = meta["methods"]
            expected = [f"estimates_{i}" for i in range(len(methods))] + ["stats", "target", "__meta__"]
            missing = [f for f in expected if f not in z.files]
            extra = [f for f in z.files if f not in expected]
            if missing:
                raise FileFormatError(f"{where}: field {missing[0]} is missing (methods {methods}).")
            if extra:
                raise FileFormatError(f"{where}: field {extra[0]} is not one of the saved fields {expected} "
                                      f"(methods {methods} in __meta__); refusing to drop it.")
            arrays = {}
            for f in expected[:-1]:
                try:
                    arrays[f] = z[f]
                except _READ_ERRORS as e:
                    raise FileFormatError(f"{where}: field {f} cannot be read ({type(e).__name__}: {e}).") from None
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
            raise FileFormatError(f"{where} is a damaged .npz file ({type(e).__name__}: {e}).") from None
    _check_arrays(where, methods, arrays)
    estimates = {m: arrays[f"estimates_{i}"] for i, m in enumerate(methods)}
    result = SimResult(estimates=estimates, stats=arrays["stats"], target=arrays["target"], n=meta["n"])
    return result, meta["metadata"]
