"""Resolving an experiment's datasets: synthetic proxies by default, real files with ``--data``."""

from __future__ import annotations

import os

from uldp_jax import data as _data
from uldp_jax.experiments._runner import UsageError


def parse_data_arg(data: str | None, names: list) -> dict:
    """``--data PATH`` applies to the experiment's first dataset; ``--data name=PATH[,name=PATH]`` to named ones."""
    if data is None:
        return {}
    out = {}
    parts = data.split(",") if "=" in data else [data]
    for part in parts:
        if "=" in part:
            name, path = part.split("=", 1)
            if name not in names:
                raise UsageError(f"--data names dataset {name!r}, but this experiment uses {', '.join(names)}.")
        else:
            name, path = names[0], part
        if not os.path.exists(path):
            raise _data.DataError(f"data path does not exist: {path}")
        out[name] = path
    return out


def resolve(names: list, data: str | None, n: int | None = None) -> list:
    """The ``Dataset`` objects for ``names`` (real data where ``data`` points at a file), with ``n`` users when
    given (else each dataset's own n)."""
    paths = parse_data_arg(data, list(names))
    out = [_data.get_dataset(name, paths.get(name)) for name in names]
    return [ds.with_n(n) for ds in out] if n else out
