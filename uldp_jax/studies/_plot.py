"""``StudyResult.plot``: error against eps, one panel per n, one line per mechanism x method, SE bands."""

from __future__ import annotations

from typing import Any

import numpy as np


def _lines(rows: list, metric: str, methods: Any, n: int) -> dict:
    lines: dict = {}
    for r in rows:
        if r["metric"] == metric and r["n"] == n and r["method"] in methods:
            lines.setdefault((r["mechanism"], r["method"]), []).append((r["eps"], r["mean"], r["se"]))
    return {k: sorted(v) for k, v in lines.items()}


def plot(result: Any, metric: str | None = None, methods: Any = None, ax: Any = None, logy: bool = True) -> Any:
    """See ``StudyResult.plot``."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("StudyResult.plot needs matplotlib (pip install matplotlib, or 'uldp_jax[plot]'); "
                          "the table (rows(), to_csv) needs nothing.") from e
    rows = result.rows()
    cfg = result.config
    if "eps" not in cfg.get("grids", {}):
        raise ValueError("StudyResult.plot draws error against eps: the study has no eps grid.")
    metrics = list(cfg["metrics"])
    metric = metrics[0] if metric is None else metric
    if metric not in metrics:
        raise ValueError(f"Expected metric={metric!r} in {metrics}.")
    methods = tuple(cfg["methods"]) if methods is None else ((methods,) if isinstance(methods, str) else tuple(methods))
    bad = [m for m in methods if m not in cfg["methods"]]
    if bad:
        raise ValueError(f"Expected methods in {cfg['methods']}, got {bad[0]!r}.")
    ns = cfg["n"]
    if ax is None:
        fig, axes = plt.subplots(1, len(ns), figsize=(4.2 * len(ns), 3.4), squeeze=False, sharey=True)
        axes = list(axes[0])
    else:
        axes = list(np.atleast_1d(ax))
        if len(axes) != len(ns):
            raise ValueError(f"Expected ax to hold one axes per n ({len(ns)}), got {len(axes)}.")
        fig = axes[0].figure
    for a, n in zip(axes, ns):
        for (mech, method), pts in _lines(rows, metric, methods, n).items():
            eps, mean, se = (np.asarray(c, np.float64) for c in zip(*pts))
            (line,) = a.plot(eps, mean, marker="o", ms=3, label=f"{mech} ({method})")
            band = np.nan_to_num(se)
            a.fill_between(eps, mean - band, mean + band, color=line.get_color(), alpha=0.2, lw=0)
        a.set_xlabel("eps")
        a.set_title(f"n = {n}")
        if logy:
            a.set_yscale("log")
    axes[0].set_ylabel(f"{metric} (mean +- 1 SE)")
    axes[-1].legend(fontsize="small", loc="best")
    fig.tight_layout()
    return fig
