"""Experiment registry and runner: configs, plain CSV, ``run_config.json`` (configuration, versions), PNG, summary."""

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

from uldp_jax import _sizing
from uldp_jax.data import describe_datasets
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
      quick: a CI-sized config (on 2 cores, 2026-11-25: 001-fig5 16 s at load average below 2, 106-143 s at 11-19).
      run: ``run(config, context) -> Report``.
      takes_data: whether ``--data PATH`` (a real dataset) applies.
      paper_deviations: how the registered ``full`` config itself differs from the paper's n, repetitions or
        grid (e.g. ``"reps: 10 (001: 100)"``), or a function of the run's config returning that list; empty when
        ``full`` is the paper's size.
      choices: ``{config key: allowed values}`` checked on ``--set`` (a tuple of values, or a function of one
        value returning ``None`` when it is fine, else what is expected), beside the keys every experiment
        shares (``_SHARED_CHOICES``: methods, sample, path, eps, d).
    """

    name: str
    title: str
    full: dict
    quick: dict
    run: Callable[[dict, Context], Report]
    takes_data: bool = True
    paper_deviations: Any = ()
    choices: dict = dataclasses.field(default_factory=dict)


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


def _kinds(values: list) -> set:
    """The scalar types a config key takes (list elements count; a tuple is a list)."""
    out: set = set()
    for v in values:
        if isinstance(v, (list, tuple)):
            out |= _kinds(list(v)) if v and not isinstance(v[0], (list, tuple, dict)) else {list}
        elif v is not None:
            out.add(type(v))
    return out


def _scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text.strip()


def _check_value(key: str, v: Any, kinds: set) -> Any:
    if isinstance(v, float) and not np.isfinite(v):
        raise UsageError(f"--set {key}: expected a finite number, got {v!r}.")
    if not kinds or type(v) in kinds:
        ok = v
    elif float in kinds and type(v) is int:
        ok = float(v)
    elif int in kinds and type(v) is float and v.is_integer():  # n=1e6
        ok = int(v)
    elif list in kinds and isinstance(v, list):
        ok = v
    else:
        names = " or ".join(sorted("number" if k is float else k.__name__ for k in kinds))
        raise UsageError(f"--set {key}: expected {names}, got {v!r}.")
    if isinstance(ok, (int, float)) and not isinstance(ok, bool):
        if key == "eps" and ok <= 0:
            raise UsageError(f"--set eps: expected values > 0, got {v!r}.")
        if key == "reps" and ok < 1:
            raise UsageError(f"--set reps: expected an integer >= 1, got {v!r}.")
        if ok < 0:
            raise UsageError(f"--set {key}: expected a value >= 0, got {v!r}.")
    return ok


# The largest domain an experiment is asked to simulate from the command line: float[d] distributions and
# per-item statistics, several per setting, must stay far below the machine's memory.
CLI_D_MAX = 2**24


def _shared_choices(key: str) -> Any:
    """The values the library fixes for config keys that mean the same in every experiment (``None``: any)."""
    import uldp_jax

    if key == "methods":
        return tuple(uldp_jax.estimation.method_names())
    if key == "sample":
        return ("iid", "fixed", "population")
    if key == "path":
        return ("auto", "per_user", "counts")
    if key == "eps":
        lo, hi = uldp_jax._validate.EPS_MIN, uldp_jax._validate.EPS_MAX
        return lambda v: None if isinstance(v, str) or lo <= v <= hi else f"a value in [{lo:g}, {hi:g}]"
    if key == "d":
        return lambda v: None if 2 <= v <= CLI_D_MAX else f"an integer in [2, {CLI_D_MAX}] (2^24)"
    if key == "n":
        top = cli_n_max()
        return lambda v: None if isinstance(v, str) or v <= top else (
            f"at most {top:,} users (int32 counts, and a sampled population of int32[2 n] within "
            "sizing().call_memory_bytes)")
    return None


def cli_n_max() -> int:
    """The most users a command-line run may ask for: int32 user counts of the per-user path, and the population a
    fixed or population sample draws (``int32[2 n]``, held at once) within the call-memory budget."""
    return int(min(2**31 - 1, _sizing.sizing().call_memory_bytes // 8))


def _check_choice(exp: Experiment, key: str, value: Any) -> None:
    """Raises ``UsageError`` naming ``key`` and the first value of ``value`` outside the key's choices."""
    for rule in (_shared_choices(key), exp.choices.get(key)):
        if rule is None:
            continue
        for v in value if isinstance(value, list) else [value]:
            if callable(rule):
                want = rule(v)
            else:
                want = None if v in rule else "one of " + ", ".join(map(str, rule))
            if want is not None:
                raise UsageError(f"--set {key}: expected {want}, got {v!r}.")


def parse_set(exp: Experiment, items: list) -> dict:
    """Parses ``--set key=value[,value...]`` options into config overrides for ``exp``, validated.

    ``value`` is JSON (``2``, ``0.5``, ``"all"``, ``["foursquare"]``, ``{"uRAP": "auto"}``) or a comma-separated
    list of JSON scalars or bare words (``eps=0.1,1,6``, ``datasets=foursquare,census``). A key must be in the
    experiment's registered configuration; a list-valued key takes one or more values, a scalar key exactly one;
    each value must have the registered type (an integer where the registered value is one; numbers for eps,
    which must be > 0; no negative sizes; ``reps >= 1``); dataset names must be registered datasets; method,
    sample-model and path names, eps and d must be the library's (``_shared_choices``), and experiment-specific
    keys must be in ``exp.choices``.

    Raises:
      UsageError: naming the option, the key and the offending value.
    """
    registered: dict = {}
    for cfg in (exp.full, exp.quick):
        for k, v in cfg.items():
            registered.setdefault(k, []).append(v)
    out: dict = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key or not text.strip():
            raise UsageError(f"--set {item!r}: expected KEY=VALUE[,VALUE...], e.g. --set eps=0.1,1,6.")
        if key not in registered:
            raise UsageError(f"--set {key}: {exp.name} has no config key {key!r}; its keys: "
                             f"{', '.join(sorted(registered))}.")
        try:
            value = json.loads(text)
        except ValueError:
            value = [_scalar(part) for part in text.split(",")]
            value = value[0] if len(value) == 1 else value
        is_list = any(isinstance(v, (list, tuple)) for v in registered[key])
        kinds = _kinds(registered[key])
        if is_list:
            values = value if isinstance(value, list) else [value]
            if not values:
                raise UsageError(f"--set {key}: expected at least one value.")
            value = [_check_value(key, v, kinds) for v in values]
        elif isinstance(value, list) and not any(isinstance(v, list) for v in registered[key]):
            raise UsageError(f"--set {key}: expected one value, got {len(value)}: {text!r}.")
        else:
            value = _check_value(key, value, kinds)
        _check_choice(exp, key, value)
        if key == "datasets":
            unknown = [v for v in value if v not in describe_datasets()]
            if unknown:
                raise UsageError(f"--set datasets: unknown dataset {unknown[0]!r}; run 'uldp list' to see them.")
        out[key] = value
    return out


def _versions() -> dict:
    import uldp_jax
    return {"uldp_jax": uldp_jax.__version__, "jax": jax.__version__, "numpy": np.__version__,
            "backend": jax.default_backend(), "python": platform.python_version()}


def write_csv(path: str, rows: list) -> None:
    """Plain long-format CSV: the header row first, no comment lines (``pandas.read_csv(path)`` reads it as is).

    The run's configuration, versions and dataset go in the ``run_config.json`` sidecar beside it.
    """
    cols: list = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def _load_average() -> float | None:
    """The 1-minute load average (``None`` where the platform has none)."""
    return round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None


def _load_text(load: list) -> str:
    return "load average unknown" if None in load else f"load average {load[0]:g}-{load[1]:g}"


def run_experiment(name: str, *, quick: bool = False, reps: int | None = None, data: str | None = None,
                   out: str = "results", seed: int = 0, progress: bool = True, echo: Callable = print,
                   overrides: dict | None = None) -> dict:
    """Runs experiment ``name`` and writes ``<out>/<name>/{results.csv, *.png, run_config.json, summary.md}``.

    ``results.csv`` is a plain CSV (header row first, no comments); ``run_config.json`` records the experiment,
    its size label and deviations, seed, data, the full configuration, library versions and the elapsed time.
    ``overrides`` replace config keys (e.g. ``{"datasets": ["foursquare"]}``); ``run_config.json`` records the
    result.

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
    load0, t0 = _load_average(), time.perf_counter()
    report = exp.run(cfg, ctx)
    elapsed = time.perf_counter() - t0
    load = [load0, _load_average()]  # the machine's 1-minute load average before and after: times depend on it
    mode, deviations = run_size(exp, cfg, quick)
    header = {"experiment": name, "title": exp.title, "mode": mode, "deviations": deviations, "seed": seed,
              "data": data or "synthetic proxy", "dataset": report.dataset, "config": cfg, "versions": _versions(),
              "elapsed_s": round(elapsed, 2), "cores": os.cpu_count(), "load_average": load}
    csv_path = os.path.join(folder, "results.csv")
    write_csv(csv_path, report.rows)
    with open(os.path.join(folder, "run_config.json"), "w") as fh:
        json.dump(header, fh, indent=2, sort_keys=True, default=str)
    # Results first (CSV, config, summary); figures last, so that a plotting failure loses nothing.
    with open(os.path.join(folder, "summary.md"), "w") as fh:
        fh.write(f"# {name}: {exp.title}\n\n{report.dataset}\n\nElapsed: {elapsed:.1f} s "
                 f"({mode}, backend {jax.default_backend()}, {os.cpu_count()} cores, {_load_text(load)}).\n\n")
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
        echo(f"== {name}: {exp.title} ({elapsed:.1f} s on {os.cpu_count()} cores, {_load_text(load)})")
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
