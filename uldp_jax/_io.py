"""Saving and loading simulation results: one ``.npz`` file (arrays) with a JSON description inside; no pickle.

    res = ul.simulate(key, mech, p=p, n=10**5, reps=10)
    ul.save_result("run.npz", res, metadata={"mechanism": repr(mech), "eps": 1.0})
    res2, meta = ul.load_result("run.npz")

The file opens with ``numpy.load(path)`` alone (``allow_pickle`` stays False): the arrays are named
``estimates_<i>``, ``stats``, ``target``, and ``__meta__`` holds the JSON text (format version, method names in
order, ``n``, the caller's metadata).
"""

from __future__ import annotations

import json
import os
import numpy as np

from uldp_jax.engine import SimResult

FORMAT = "uldp_jax.SimResult/1"


def save_result(path: str | os.PathLike, result: SimResult, metadata: dict | None = None) -> str:
    """Writes ``result`` (and JSON-able ``metadata``) to ``path``, a ``.npz`` file readable without pickle.

    Args:
      path: destination; ``.npz`` is appended when missing (as ``numpy.savez`` does).
      result: a ``SimResult`` from ``ul.simulate``.
      metadata: optional JSON-able dict stored beside the arrays (mechanism, eps, seed, ...).

    Returns:
      The path written.

    Raises:
      TypeError: ``result`` is not a ``SimResult`` or ``metadata`` is not a JSON-able dict.
    """
    if not isinstance(result, SimResult):
        raise TypeError(f"Expected result to be a SimResult, got {type(result).__name__}.")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError(f"Expected metadata to be a dict or None, got {type(metadata).__name__}.")
    methods = list(result.estimates)
    try:
        meta = json.dumps({"format": FORMAT, "methods": methods, "n": int(result.n), "metadata": metadata or {}},
                          sort_keys=True)
    except TypeError as e:
        raise TypeError(f"Expected metadata to be JSON-able: {e}") from None
    arrays = {f"estimates_{i}": np.asarray(result.estimates[m]) for i, m in enumerate(methods)}
    arrays.update(stats=np.asarray(result.stats), target=np.asarray(result.target), __meta__=np.array(meta))
    path = os.fspath(path)
    if not path.endswith(".npz"):
        path += ".npz"
    np.savez_compressed(path, **arrays)
    return path


def load_result(path: str | os.PathLike) -> tuple[SimResult, dict]:
    """Reads a file written by ``save_result``.

    Args:
      path: the ``.npz`` file.

    Returns:
      ``(result, metadata)``: a ``SimResult`` with NumPy arrays (same dtypes and shapes as saved) and the
      metadata dict given to ``save_result`` (empty if none).

    Raises:
      ValueError: the file is not a saved ``SimResult``.
    """
    with np.load(os.fspath(path), allow_pickle=False) as z:
        if "__meta__" not in z.files:
            raise ValueError(f"Expected path={os.fspath(path)!r} to be written by save_result (no __meta__ entry).")
        meta = json.loads(str(z["__meta__"]))
        if meta.get("format") != FORMAT:
            raise ValueError(f"Expected format {FORMAT!r} in {os.fspath(path)!r}, got {meta.get('format')!r}.")
        estimates = {m: z[f"estimates_{i}"] for i, m in enumerate(meta["methods"])}
        result = SimResult(estimates=estimates, stats=z["stats"], target=z["target"], n=int(meta["n"]))
    return result, meta["metadata"]

