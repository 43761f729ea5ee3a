"""001's sweeps (Figs 5-7 and 10-12, the demo) declared as ``ul.study`` calls, under 001's sampling model.

Sampling models (config key ``sample``; every CSV row carries it in its ``sample`` column, ``run_config.json`` in
its config and dataset line):

* ``"population"`` (the default; 001 §6.1): "a frequency distribution of all people as a true distribution p,
  and randomly chose a half of all people as users". Each repetition ``n`` of the population's ``N`` people,
  drawn uniformly without replacement, report; the estimate is scored against the *population's* distribution
  (``ul.study(..., xs=population, sample="population")``). The population: with ``--data`` the records
  themselves (``Dataset.counts``); for a synthetic proxy, ``N`` people whose histogram is ``N p`` rounded by
  largest remainder (so its distribution is ``p`` to within ``1/N`` per item). ``N`` is the config's
  ``population``, or ``2 n`` when that is 0 (a random half, as 001 Figs 5-6; Fig 7 draws 240,000 of the census's
  2,458,285 people).
* ``"iid"`` (a labelled extra): ``n`` users iid from ``p``, scored against ``p``; the estimate then also carries
  the users' sampling error, about sqrt(2) times 001's in TV at ``n = N / 2`` (variance ratio
  ``(N - 1) / (N - n)``).

Each panel is at most three ``ul.study`` calls: the mechanisms whose methods all read the aggregate statistics
(grouped by their methods; exact counts path, ``path="auto"``), then the report-based methods (EM on the exact
per-report likelihood of RAPPOR/uRAP) on ``report_reps`` repetitions. The "no privacy" line is the subset's own
error: a multivariate hypergeometric histogram per repetition (iid model: a multinomial), at least 200 draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _common, _studies
from uldp_jax.studies import _population

SAMPLES = ("population", "iid")


def check_sample(cfg: dict) -> str:
    """The config's sampling model (``"population"`` when absent), checked."""
    sample = cfg.get("sample", "population")
    if sample not in SAMPLES:
        raise ValueError(f"Expected sample={sample!r} in {SAMPLES}.")
    return sample


def population(ds: Any, n: int, size: int = 0) -> np.ndarray:
    """``int32[N]``: the people of ``ds`` (records' histogram, else ``size`` or ``2 n`` people from ``p``)."""
    if ds.counts is not None:
        counts = np.asarray(ds.counts, np.int64)
    else:
        size = int(size) or 2 * int(n)
        raw = ds.p * size
        counts = np.floor(raw).astype(np.int64)
        counts[np.argsort(-(raw - counts), kind="stable")[: size - int(counts.sum())]] += 1
    if counts.sum() < n:
        raise ValueError(f"Expected n={n} <= the population of {ds.name!r} ({int(counts.sum())} people).")
    return np.repeat(np.arange(counts.size, dtype=np.int32), counts)


def model_text(sample: str, n: int, size: int) -> str:
    """One line naming the sampling model (CSV ``sample`` column, summary, run_config's dataset line)."""
    if sample == "iid":
        return f"sampling model: iid (an extra, not 001's): {n} users iid from p, error against p"
    return (f"sampling model: population (001 §6.1): each repetition {n} of the population's {size} people, drawn "
            "without replacement, report; error against the population's distribution")


def _factory(label: str, d: int, sensitive: Any, by_s: bool):
    if by_s and _common.MECHANISMS[label][1]:
        return lambda eps, s: _common.make_mechanism(label, d, tuple(range(s)), eps)
    return lambda eps: _common.make_mechanism(label, d, sensitive, eps)


def _calls(mechs: Sequence[str], d: int, sensitive: Any, methods: Sequence[str], path: Any,
           report_reps: int) -> list:
    """``[(mechanisms, methods, report_based)]``: the study calls of a panel, grouped by methods and path."""
    stats, reports = {}, {}
    for label in mechs:
        probe = _common.make_mechanism(label, d, sensitive, 1.0)
        p = path.get(label, "auto") if isinstance(path, dict) else (path or "auto")
        ms = tuple(m for m in methods if _common._stats_based(m, probe))
        rs = tuple(m for m in methods if m not in ms)
        stats.setdefault((ms, p), []).append(label)
        if rs and report_reps:
            reports.setdefault((rs, "per_user"), []).append(label)
    return ([(ls, ms, p, False) for (ms, p), ls in stats.items() if ms]
            + [(ls, ms, p, True) for (ms, p), ls in reports.items()])


def curves(key: jax.Array, mechs: Sequence[str], d: int, sensitive: Any, eps: Sequence[float], n: int,
           cfg: dict, xs: Any = None, p: Any = None, s_values: Sequence[int] | None = None) -> list:
    """The ``ul.study`` rows of every mechanism x eps (x ``s_values``, X_S = {0..s-1}) x method of one panel.

    Args:
      key: PRNG key; study call ``i`` uses ``fold_in(key, i)``.
      mechs: mechanism labels (``_common.MECHANISMS``).
      d, sensitive: domain size and X_S (ignored by the ``s`` factories when ``s_values`` is given).
      eps: the eps grid.
      n: users per repetition.
      cfg: the experiment config (``methods``, ``metric`` (one name or a list: every metric scores the same
        estimates), ``reps``, ``report_reps``, ``path``).
      xs: the population (population model), or
      p: the distribution (iid model).
      s_values: a grid of |X_S| (001 Fig 6), taken by the mechanisms that have a sensitive set.

    Returns:
      ``StudyResult.rows()`` of every call, concatenated; the method column holds registry names.
    """
    rr = report_reps(cfg)
    methods = _common.available_methods(cfg["methods"])
    metric = metrics(cfg)
    data = dict(p=p) if xs is None else dict(xs=xs, sample="population")
    rows = []
    for i, (labels, ms, path, by_reports) in enumerate(_calls(mechs, d, sensitive, methods, cfg.get("path"), rr)):
        factories = {lb: _factory(lb, d, sensitive, s_values is not None) for lb in labels}
        grids = dict(eps=list(eps))
        if s_values is not None and any(_common.MECHANISMS[lb][1] for lb in labels):
            grids["s"] = list(s_values)
        res = ul.study(jax.random.fold_in(key, i), factories, n=[n], reps=rr if by_reports else cfg["reps"],
                       methods=ms, metrics=_studies.study_metrics(metric), simulate_options={"path": path}, **data,
                       **grids)
        rows += res.rows()
    return rows


def metrics(cfg: dict) -> list:
    """The config's metrics as a list: ``metric`` is one name (``"tv"``) or several (``["tv", "l2sq"]``: 001 Figs
    5-7 and their MSE twins 10-12 from one run, each metric scoring the same estimates)."""
    m = cfg["metric"]
    out = [m] if isinstance(m, str) else list(m)
    if not out or len(set(out)) != len(out):
        raise ValueError(f"Expected metric to be a name or a list of distinct names, got {m!r}.")
    return out


def report_reps(cfg: dict) -> int:
    """Repetitions of the report-based methods (EM for RAPPOR/uRAP): ``report_reps`` = "all" (every repetition,
    as 001) or a number (capped at ``reps``)."""
    r = cfg.get("report_reps", 0) or 0
    return int(cfg.get("reps", 1)) if r == "all" else min(int(r), int(cfg.get("reps", 1)))


def _error(est: np.ndarray, target: np.ndarray, metric: str) -> np.ndarray:
    err = est - target
    if metric == "tv":
        return 0.5 * np.abs(err).sum(-1)
    if metric == "l1":
        return np.abs(err).sum(-1)
    return (err**2).sum(-1) if metric == "l2sq" else (err**2).mean(-1)


def nonprivate(key: jax.Array, n: int, reps: int, metric: str, counts: Any = None, p: Any = None,
               min_reps: int = 200) -> tuple[float, float, int]:
    """``(mean, se, draws)`` of 001's "no privacy" error: the raw histogram of the ``n`` reporting users.

    Population model: the subset's histogram is multivariate hypergeometric (exact; NumPy seeded by ``key``);
    iid model: multinomial. At least ``min_reps`` draws (cheap), so the line is not noisier than the curves.

    Args:
      counts: ``int[d]`` the population's histogram (population model), or
      p: ``float[d]`` the distribution (iid model).
    """
    reps = max(int(reps), min_reps)
    rng = _population.generator(key)
    if counts is None:
        target = np.asarray(p, np.float64)
        hist = rng.multinomial(n, target / target.sum(), size=reps)
    else:
        counts = np.asarray(counts, np.int64)
        target = counts / counts.sum()
        hist = rng.multivariate_hypergeometric(counts, n, size=reps)
    err = _error(hist / n, target, metric)
    return float(err.mean()), float(err.std(ddof=1) / math.sqrt(reps)), reps


def row(r: dict, metric: str, **extra: Any) -> dict:
    """A study row as an experiment CSV row (001's columns first; ``value`` = the mean, ``method`` its label;
    a NaN standard error or theory, e.g. one repetition or a method without theory, written empty)."""
    def num(v):
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    return dict(**{k: v for k, v in extra.items() if k in ("dataset", "attributes")},
                mechanism=r["mechanism"], method=_common.METHOD_LABELS.get(r["method"], r["method"]), eps=r["eps"],
                metric=metric, value=float(r["mean"]), se=num(r["se"]), reps=int(r["reps"]),
                **{k: v for k, v in extra.items() if k not in ("dataset", "attributes")},
                theory=num(r["theory"]), z=num(r["z"]), sample=r["sample"])
