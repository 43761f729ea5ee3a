"""Result files that cannot lose data: literal names, no silent overwrite, atomic writes, checked reads.

Shared by ``ul.save_result`` / ``ul.load_result`` and ``StudyResult.save`` / ``load``:

* ``with_suffix(path, suffix)`` appends the suffix to the name as given (``"study_eps0.5"`` names
  ``study_eps0.5.npz``; ``pathlib``'s ``with_suffix`` would replace ``.5`` and let two studies collide);
* ``write_atomic`` writes into a temporary file beside the target and renames it into place, so a crash or a
  full disk leaves the old file or the new one, never half of either; without ``overwrite=True`` an existing
  file is refused (``FileExistsError``) and a directory always is;
* ``encode`` / ``decode`` carry JSON metadata whose types JSON would change (integer keys, tuples, NaN) as
  tagged values, so a round trip returns the same Python values;
* ``FileFormatError`` (a ``ValueError``) names the file and the field of a file that cannot be read back.
"""

from __future__ import annotations

import math
import numbers
import os
import tempfile
from typing import Any, Callable

import numpy as np


class FileFormatError(ValueError):
    """A result file that is not what its reader expects; the message names the file and the field."""


def check_path(path: Any, name: str = "path") -> str:
    """``os.fspath(path)`` of a ``str`` or ``os.PathLike`` (not bytes, not empty)."""
    if isinstance(path, (bytes, bytearray)) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"Expected {name}={path!r} to be a str or os.PathLike.")
    out = os.fspath(path)
    if not isinstance(out, str) or not out:
        raise ValueError(f"Expected {name}={path!r} to be a non-empty file name.")
    if os.path.isdir(out) or out.endswith(("/", os.sep)):  # a folder, not a name inside it
        raise IsADirectoryError(f"Expected {name}={out!r} to name a file, got a directory (name a file in it, "
                                "e.g. os.path.join(folder, 'result')).")
    return out


def with_suffix(path: str, suffix: str) -> str:
    """``path`` with ``suffix`` appended unless the name already ends with it (never replaced or stripped)."""
    return path if path.endswith(suffix) else path + suffix


def check_writable(path: str, overwrite: bool) -> None:
    """Refuses a directory, a missing parent folder, and (without ``overwrite``) an existing file."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"Expected path={path!r} to name a file, got a directory.")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"Expected the folder {parent!r} of path={path!r} to exist.")
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it.")


def write_atomic(path: str, write: Callable[[Any], None], overwrite: bool) -> None:
    """Calls ``write(f)`` on a temporary binary file beside ``path``, then renames it to ``path``.

    Without ``overwrite`` the rename cannot replace a file that appeared meanwhile: the temporary file is
    hard-linked to ``path`` (which fails if ``path`` exists) where the file system supports links.
    """
    check_writable(path, overwrite)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise FileExistsError(f"{path!r} exists; pass overwrite=True to replace it.") from None
        except OSError:  # no hard links here (some network and FUSE mounts): check, then rename
            check_writable(path, overwrite)
            os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


_TAGS = ("__tuple__", "__dict__", "__float__")


def encode(value: Any, where: str = "metadata") -> Any:
    """JSON data for ``value`` that ``decode`` turns back into an equal value of the same types.

    Plain JSON values pass unchanged; tuples, dicts with non-str keys (or a key that is a tag) and NaN/inf
    become one-key tagged objects. NumPy scalars are stored as the Python number they equal.

    Raises:
      TypeError: naming the field (``metadata['a'][2]``) of a value JSON cannot hold.
    """
    if isinstance(value, np.generic) and np.ndim(value) == 0 and value.dtype.kind in "biuf":
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, list):
        return [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not (len(value) == 1 and next(iter(value)) in _TAGS):
            return {k: encode(v, f"{where}[{k!r}]") for k, v in value.items()}
        return {"__dict__": [[encode(k, f"{where} key {k!r}"), encode(v, f"{where}[{k!r}]")]
                             for k, v in value.items()]}
    raise TypeError(f"Expected {where}={value!r} to be JSON-able (None, bool, int, float, str, list, tuple or "
                    f"dict), got {type(value).__name__}.")


def decode(data: Any, where: str) -> Any:
    """The value ``encode`` stored; ``FileFormatError`` naming ``where`` for a malformed tag."""
    if isinstance(data, list):
        return [decode(v, f"{where}[{i}]") for i, v in enumerate(data)]
    if not isinstance(data, dict):
        return data
    if len(data) == 1 and next(iter(data)) in _TAGS:
        tag, body = next(iter(data.items()))
        if tag == "__float__" and body in ("nan", "inf", "-inf"):
            return float(body)
        if tag == "__tuple__" and isinstance(body, list):
            return tuple(decode(v, f"{where}[{i}]") for i, v in enumerate(body))
        if tag == "__dict__" and isinstance(body, list) and all(isinstance(kv, list) and len(kv) == 2 for kv in body):
            out = {}
            for k, v in body:
                key = decode(k, f"{where} key")
                try:
                    out[key] = decode(v, f"{where}[{key!r}]")
                except TypeError:  # an unhashable key (a list)
                    raise FileFormatError(f"{where}: key {key!r} is not hashable.") from None
            return out
        raise FileFormatError(f"{where}: malformed {tag} entry {body!r}.")
    return {k: decode(v, f"{where}[{k!r}]") for k, v in data.items()}


def exists_or_raise(path: str) -> None:
    """``FileNotFoundError`` naming ``path`` when it is not a file."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"Expected path={path!r} to name a file, got a directory.")
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file: {path!r}.")
