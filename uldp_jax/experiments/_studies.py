"""Paper sweeps declared as ``ul.study`` calls: the experiments' metric names as study metrics, study rows as
experiment rows.

A paper experiment that is a sweep (003's simulated figures, 004 Fig 2) builds its mechanisms as factories of the
swept parameters and calls ``ul.study`` once per dataset (or distribution); this module turns the study's tidy
rows into the experiment's long-format rows (``value`` = the mean over repetitions, ``se`` its standard error,
``theory`` and ``z`` from the study where the library has a closed form).
"""

from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from uldp_jax.experiments import _common

# Experiment metric names that ``ul.study`` computes itself (same formula, float64).
_BUILTIN = {"mse": "mse", "tv": "tv", "l1": "l1", "l2sq": "l2"}


def _as_study_metric(fn: Callable) -> Callable:
    def metric(est: np.ndarray, target: np.ndarray) -> np.ndarray:
        return np.asarray(fn(jnp.asarray(est), jnp.asarray(target, jnp.float32)), np.float64)
    return metric


def study_metrics(names: list) -> dict:
    """``{experiment metric name: study metric}`` for ``ul.study(metrics=...)``: a built-in study metric where the
    formula is the same (``mse``, ``tv``, ``l1``, ``l2sq`` = the study's ``l2``), else the experiment's function
    (``_common.METRICS``: ``mae``, ``f1@30``, ``ndcg@30``) applied to the estimates.

    Raises:
      ValueError: for a name that is in neither.
    """
    out = {}
    for name in names:
        if name in _BUILTIN:
            out[name] = _BUILTIN[name]
        elif name in _common.METRICS:
            out[name] = _as_study_metric(_common.METRICS[name])
        else:
            raise ValueError(f"Unknown metric {name!r}; available: {sorted(_common.METRICS)}.")
    return out


def rows(res: Any, keep: tuple = ("eps",), **extra: Any) -> list:
    """The experiment rows of a ``StudyResult``: ``mechanism``, the parameters named in ``keep``, ``method``,
    ``metric``, ``value`` (mean), ``se``, ``theory``, ``z``, ``reps``, ``n``, ``sample`` and ``extra`` columns."""
    out = []
    for r in res.rows():
        row = dict(extra)
        row.update(mechanism=r["mechanism"], **{k: r[k] for k in keep}, method=r["method"], metric=r["metric"],
                   value=float(r["mean"]), se=float(r["se"]), theory=float(r["theory"]), z=float(r["z"]),
                   reps=int(r["reps"]), n=int(r["n"]), sample=r["sample"])
        out.append(row)
    return out
