"""Experiment registry and runner: configs, CSV (with full configuration and versions), PNG, summary."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import platform
import sys
import time
from typing import Any, Callable

import jax
import numpy as np

from uldp_jax.experiments import _plot


class UsageError(ValueError):
    """A user mistake on the command line (unknown experiment, bad --reps, --data naming an unused dataset)."""


@dataclasses.dataclass(frozen=True)
class Context:
    """What a run needs besides its config: seed, real-data path, progress switch."""

    seed: int = 0
    data: str | None = None
    progress: bool = True

    def key(self, *folds: int) -> jax.Array:
        k = jax.random.key(self.seed)
        for f in folds:
            k = jax.random.fold_in(k, f)
        return k


@dataclasses.dataclass
class Report:
    """An experiment's output: long-format rows, figures, a printable table and notes."""

    rows: list
    figures: dict = dataclasses.field(default_factory=dict)
    table: str = ""
    notes: list = dataclasses.field(default_factory=list)
    dataset: str = ""


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered reproduction.

    Attributes:
      name: CLI name (``"001-fig5"``).
      title: one line.
      full: the paper-sized config (dict of JSON-able values; ``reps`` is the repetition count).
      quick: a seconds-long config for CI.
      run: ``run(config, context) -> Report``.
      takes_data: whether ``--data PATH`` (a real dataset) applies.
      paper_deviations: how the registered ``full`` config itself differs from the paper's n, repetitions or
        grid (e.g. ``"reps: 10 (001: 100)"``), or a function of the run's config returning that list; empty when
        ``full`` is the paper's size.
    """

    name: str
    title: str
    full: dict
    quick: dict
    run: Callable[[dict, Context], Report]
    takes_data: bool = True
    paper_deviations: Any = ()


# Config keys that choose how a run is computed, not its size (paper_deviations judge report_reps).
_SIZE_NEUTRAL = {"path", "report_reps", "rep_batch", "progress"}


def run_size(exp: Experiment, cfg: dict, quick: bool = False) -> tuple[str, list]:
    """``("full" | "reduced" | "quick", deviations)``: a run is "full" only when it is the paper's size, i.e. its
    config is the registered ``full`` one and that has no ``paper_deviations``; ``deviations`` lists every
    difference (config keys that differ from ``full``, then the registered ``paper_deviations``)."""
    def full_value(k):
        if k in exp.full:
            return json.dumps(exp.full[k], sort_keys=True)
        return "each dataset's own n" if k == "n" else "absent"

    def same(k):  # JSON-normalised (tuples read back as lists); n = 0 / None means each dataset's own n
        if k in _SIZE_NEUTRAL:
            return True
        a, b = cfg.get(k), exp.full.get(k)
        if k == "n" and not a and not b:
            return True
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    devs = [f"{k}: {json.dumps(cfg.get(k), sort_keys=True) if k in cfg else 'absent'} (registered full: "
            f"{full_value(k)})" for k in sorted(set(cfg) | set(exp.full)) if not same(k)]
    devs += list(exp.paper_deviations(cfg) if callable(exp.paper_deviations) else exp.paper_deviations)
    if quick:
        return "quick", devs
    return ("full" if not devs else "reduced"), devs


_EXPERIMENTS: dict[str, Experiment] = {}


def register(exp: Experiment) -> Experiment:
    _EXPERIMENTS[exp.name] = exp
    return exp


def experiment_names() -> tuple[str, ...]:
    return tuple(sorted(_EXPERIMENTS))


def get_experiment(name: str) -> Experiment:
    if name not in _EXPERIMENTS:
        raise UsageError(f"Unknown experiment {name!r}; run 'uldp list' to see the {len(_EXPERIMENTS)} experiments.")
    return _EXPERIMENTS[name]


def make_config(exp: Experiment, quick: bool = False, reps: int | None = None, **overrides: Any) -> dict:
    cfg = dict(exp.quick if quick else exp.full)
    if reps is not None:
        if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
            raise UsageError(f"Expected reps={reps!r} to be an integer >= 1.")
        cfg["reps"] = reps
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return cfg


def _versions() -> dict:
    import uldp_jax
    return {"uldp_jax": uldp_jax.__version__, "jax": jax.__version__, "numpy": np.__version__,
            "backend": jax.default_backend(), "python": platform.python_version()}


def write_csv(path: str, rows: list, header: dict) -> None:
    """Long-format CSV; the first lines are ``# key: value`` comments (config, versions, dataset)."""
    cols: list = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="") as fh:
        for k, v in header.items():
            fh.write(f"# {k}: {v if isinstance(v, str) else json.dumps(v, sort_keys=True)}\n")
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def run_experiment(name: str, *, quick: bool = False, reps: int | None = None, data: str | None = None,
                   out: str = "results", seed: int = 0, progress: bool = True, echo: Callable = print,
                   overrides: dict | None = None) -> dict:
    """Runs experiment ``name`` and writes ``<out>/<name>/{results.csv, *.png, run_config.json, summary.md}``.

    ``overrides`` replace config keys (e.g. ``{"datasets": ["foursquare"]}``); the CSV header records the result.

    Returns:
      ``{"csv": path, "figures": [paths], "table": str, "elapsed_s": float}``.
    """
    exp = get_experiment(name)
    if data is not None and not exp.takes_data:
        raise UsageError(f"Experiment {name!r} uses no dataset; drop --data.")
    overrides = dict(overrides or {})
    reps = overrides.pop("reps", None) if reps is None else reps
    cfg = make_config(exp, quick=quick, reps=reps, **overrides)
    ctx = Context(seed=seed, data=data, progress=progress)
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    t0 = time.perf_counter()
    report = exp.run(cfg, ctx)
    elapsed = time.perf_counter() - t0
    mode, deviations = run_size(exp, cfg, quick)
    header = {"experiment": name, "title": exp.title, "mode": mode, "deviations": deviations, "seed": seed,
              "data": data or "synthetic proxy", "dataset": report.dataset, "config": cfg, "versions": _versions(),
              "elapsed_s": round(elapsed, 2)}
    csv_path = os.path.join(folder, "results.csv")
    write_csv(csv_path, report.rows, header)
    with open(os.path.join(folder, "run_config.json"), "w") as fh:
        json.dump(header, fh, indent=2, sort_keys=True, default=str)
    # Results first (CSV, config, summary); figures last, so that a plotting failure loses nothing.
    with open(os.path.join(folder, "summary.md"), "w") as fh:
        fh.write(f"# {name}: {exp.title}\n\n{report.dataset}\n\nElapsed: {elapsed:.1f} s "
                 f"({mode}, backend {jax.default_backend()}).\n\n")
        if report.table:
            fh.write("```\n" + report.table + "\n```\n\n")
        for note in report.notes:
            fh.write(f"- {note}\n")
    figs, skipped = [], []
    for fname, fig in report.figures.items():
        if isinstance(fig, _plot.NoFigure):
            skipped.append(fig.reason)
            continue
        path = os.path.join(folder, f"{fname}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        figs.append(path)
        import matplotlib.pyplot as plt
        plt.close(fig)
    if echo is not None:
        echo(f"== {name}: {exp.title} ({elapsed:.1f} s)")
        if report.dataset:
            echo(report.dataset)
        if report.table:
            echo(report.table)
        for note in report.notes:
            echo(f"* {note}")
        echo(f"wrote {csv_path}" + "".join(f"\nwrote {f}" for f in figs))
    if skipped:
        sys.stderr.write(f"uldp: note: {skipped[0]}\n")
    return {"csv": csv_path, "figures": figs, "table": report.table, "elapsed_s": elapsed, "folder": folder}


def format_table(rows: list, row_keys: tuple, col_key: str, value_key: str = "value", fmt: str = "{:.3g}") -> str:
    """Pivots long rows into a text table: one line per ``row_keys`` combination, one column per ``col_key``."""
    cols = []
    for r in rows:
        if r[col_key] not in cols:
            cols.append(r[col_key])
    table: dict = {}
    for r in rows:
        table.setdefault(tuple(r[k] for k in row_keys), {})[r[col_key]] = r[value_key]
    labels = [" ".join(str(x) for x in k) for k in table]
    w = max([len(x) for x in labels] + [len(" ".join(row_keys))])
    col_labels = [fmt.format(c) if isinstance(c, float) else str(c) for c in cols]
    cw = max(9, *[len(c) for c in col_labels])
    lines = [" ".join(row_keys).ljust(w) + " | " + " ".join(c.rjust(cw) for c in col_labels)]
    lines.append("-" * len(lines[0]))
    for lab, vals in zip(labels, table.values()):
        cells = [fmt.format(vals[c]) if c in vals else "-" for c in cols]
        lines.append(lab.ljust(w) + " | " + " ".join(c.rjust(cw) for c in cells))
    return "\n".join(lines)
