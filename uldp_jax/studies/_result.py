"""``StudyResult``: a study's tidy table (one row per mechanism x point x n x method x metric) and its outputs.

Rows hold ``mechanism``, the swept parameters (``eps``, ...; empty where a mechanism does not take one), ``n``,
``sample`` (the sampling model), ``method``, ``metric``, ``mean``, ``se`` (standard error of the mean over
repetitions), ``theory`` (``studies._metrics``; NaN where the library has none), ``z = (mean - theory) / se``,
``reps``, and ``compile_s`` / ``run_s``: the seconds of the engine call behind the row (compilation, the rest)
split evenly over that call's grid points, so summing them over the rows of one method and metric gives the
study's totals. ``values`` keeps every repetition's metric value (``float64[rows, reps]``).

``save(path)`` writes ``<path>.json`` (configuration, library and JAX versions, rows) and ``<path>.npz``
(``values``); ``load`` reads them back after checking every field (``studies._result_files``). Factories are
kept as ``module:qualname`` and source text, to read and to pass again to ``study_arguments``, never executed from a
file (metric callables by name only).
"""

from __future__ import annotations

import csv
import pathlib
from typing import Any

import jax
import numpy as np

from uldp_jax._version import __version__
from uldp_jax.studies import _plot, _rerun, _result_files


class StudyResult:
    """The result of ``ul.study``.

    Attributes:
      config: the study's configuration (JSON-able: grids, n, reps, methods and the per-mechanism, per-n
        table ``methods_by_mechanism``, metrics, sampling model, key data, ``p`` (per ``d`` for a domain sweep) or
        the population's size and SHA-256, each factory's ``module:qualname`` and source text, and
        ``theory_errors``: why a mechanism has no theory column).
      timing: ``{"wall_s", "compile_s", "compile_requests", "cache_hits"}`` of the whole study: seconds, XLA
        compile requests (JAX's "stage" programs excluded) and how many of them JAX's persistent compilation
        cache served (the rest were compiled; ``compile_s`` counts tracing, lowering and compile-or-load).
      values: ``float64[rows, reps]`` every repetition's metric value, row by row.
      version: the ``uldp_jax`` version that ran the study.
    """

    def __init__(self, rows: list, values: np.ndarray, config: dict, timing: dict, version: str = __version__,
                 jax_version: str = jax.__version__):
        self._rows = [dict(r) for r in rows]
        self.values = np.asarray(values, np.float64)
        self.config = config
        self.timing = dict(timing)
        self.version = version
        self.jax_version = jax_version

    def __repr__(self) -> str:
        return (f"StudyResult({len(self._rows)} rows, mechanisms={self.config.get('mechanisms')}, "
                f"n={self.config.get('n')}, reps={self.config.get('reps')}, sample={self.config.get('sample')!r})")

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def columns(self) -> list[str]:
        """Column names, in order."""
        return list(self._rows[0]) if self._rows else []

    def rows(self) -> list[dict]:
        """The table: a list of dicts (copies), one per mechanism x point x n x method x metric."""
        return [dict(r) for r in self._rows]

    def to_csv(self, path: Any) -> None:
        """Writes the table as plain CSV (header row first; NaN as ``nan``, a missing parameter empty):
        ``pandas.read_csv(path)`` and ``csv.DictReader`` read it with no arguments."""
        if not isinstance(path, (str, pathlib.Path)):
            raise TypeError(f"Expected path={path!r} to be a str or pathlib.Path.")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns)
            w.writeheader()
            for r in self._rows:
                w.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in r.items()})

    def to_pandas(self) -> Any:
        """The table as a ``pandas.DataFrame``.

        Raises:
          ImportError: when pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("StudyResult.to_pandas needs pandas (pip install pandas); rows() and to_csv() "
                              "work without it.") from e
        return pd.DataFrame(self.rows(), columns=self.columns)

    def save(self, path: Any, *, overwrite: bool = False) -> None:
        """Writes ``<path>.json`` (configuration, versions, rows) and ``<path>.npz`` (per-repetition values).

        The suffixes are appended to the name as given (``"study_eps0.5"`` writes ``study_eps0.5.json``); a name
        ending in ``.json`` or ``.npz`` names the pair by that member. Each file is written to a temporary name
        and renamed into place.

        Raises:
          FileExistsError: either file exists and ``overwrite`` is False (nothing is written).
          IsADirectoryError: either name is a directory.
        """
        _result_files.save(self, path, overwrite)

    @classmethod
    def load(cls, path: Any) -> "StudyResult":
        """Reads a result written by ``save`` (``path`` as given to ``save``, or either file of the pair).

        Raises:
          FileNotFoundError: a file of the pair is missing.
          ValueError: (``uldp_jax._files.FileFormatError``) a file is not part of a saved study: the message names
            the file and the field (a row without ``mean``, a string where a number belongs, values of another
            shape than the rows, broken JSON or zip, a pair that does not belong together).
        """
        return cls(**_result_files.load(path))

    def study_arguments(self, factories: dict, **changes: Any) -> dict:
        """The arguments of ``ul.study`` that run this study again, or extended by ``changes``:
        ``ul.study(**res.study_arguments(factories))`` gives this result's rows.

        The key, grids, ``n``, ``reps``, methods (table), built-in metrics and ``p`` come from ``config``; the
        factories are passed again (a file keeps their source text in ``config["factories"]``, never run).
        ``changes`` override ``ul.study`` arguments: ``n=[...]``, ``reps=...``, ``eps=[...]``, ``key=...``,
        ``xs=...`` (required for the fixed and population models), callable ``metrics=``.

        Raises:
          ValueError: what the file does not keep and ``changes`` must supply (``studies._rerun``).
        """
        key, mechanisms, kw = _rerun.study_arguments(self.config, factories, changes)
        return dict(key=key, mechanisms=mechanisms, **kw)

    def plot(self, metric: str | None = None, *, methods: Any = None, ax: Any = None, logy: bool = True,
             theory: bool = True, x: str | None = None) -> Any:
        """Error against a swept parameter (eps), one panel per n, with +-1 SE bands: colour = mechanism, line
        style = method, marker = the value of each other swept parameter (one line per value: an eps x theta grid
        never mixes theta values), legend outside the panels (``studies._plot``).

        Args:
          metric: the metric to draw (default: the first one).
          methods: the methods to draw (default: all).
          ax: a sequence of matplotlib axes, one per n (default: a new figure).
          logy: log-scaled error axis.
          theory: draw each line's theory value (a wide translucent line in its colour) where it has one.
          x: the swept parameter on the x axis (default ``"eps"``, else the first grid).

        Returns:
          The matplotlib figure.

        Raises:
          ImportError: when matplotlib is not installed.
          ValueError: ``x`` not a swept parameter, or an unknown metric or method.
        """
        return _plot.plot(self, metric=metric, methods=methods, ax=ax, logy=logy, theory=theory, x=x)
