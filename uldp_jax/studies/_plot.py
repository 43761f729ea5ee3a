"""``StudyResult.plot``: error against a swept parameter (eps by default), one panel per n, for a paper.

Encoding (readable at a dozen series and in greyscale print): colour = mechanism, line style = method, marker =
the value of any other swept parameter (``theta``, ``d``, ...), so every line holds one value of every swept
parameter other than the x axis (an eps x theta grid draws one line per theta, never one line across them). The
theory value (``emp`` only) is a wide translucent line in the mechanism's colour behind its data, so both stay
visible. The legend sits outside the panels, in one entry per mechanism, per method and per other value (not one
per series), with the theory's entry last.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _colours(names: list) -> dict:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {nm: cmap(i % cmap.N) for i, nm in enumerate(names)}


def _others(cfg: dict, x: str) -> list:
    return [g for g in cfg.get("grids", {}) if g != x]


def _lines(rows: list, metric: str, methods: Any, n: int, x: str, others: list) -> dict:
    """``{(mechanism, method, other values): sorted [(x, mean, se, theory)]}`` of one panel."""
    lines: dict = {}
    for r in rows:
        if r["metric"] == metric and r["n"] == n and r["method"] in methods and r.get(x) is not None:
            key = (r["mechanism"], r["method"], tuple(r.get(g) for g in others))
            lines.setdefault(key, []).append((r[x], r["mean"], r["se"], r["theory"]))
    return {k: sorted(v) for k, v in lines.items()}


def _legend(fig: Any, colours: dict, styles: dict, markers: dict, others: list, theory: bool) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, lw=2.2, label=nm) for nm, c in colours.items()]
    if len(styles) > 1 or markers:
        handles.append(Line2D([], [], ls="none", label=" "))
    if len(styles) > 1:
        handles += [Line2D([], [], color="0.25", ls=ls, lw=1.6, label=f"method: {m}") for m, ls in styles.items()]
    for vals, mk in markers.items():
        label = ", ".join(f"{g}: not taken" if v is None else f"{g} = {v:g}" if isinstance(v, (int, float))
                          else f"{g} = {v}" for g, v in zip(others, vals))
        handles.append(Line2D([], [], color="0.25", ls="none", marker=mk, label=label))
    if theory:
        handles.append(Line2D([], [], color="0.25", lw=6, alpha=0.25, label="theory (emp)"))
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize="small")


def plot(result: Any, metric: str | None = None, methods: Any = None, ax: Any = None, logy: bool = True,
         theory: bool = True, x: str | None = None) -> Any:
    """See ``StudyResult.plot``."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("StudyResult.plot needs matplotlib (pip install matplotlib, or 'uldp_jax[plot]'); "
                          "the table (rows(), to_csv) needs nothing.") from e
    rows = result.rows()
    cfg = result.config
    grids = list(cfg.get("grids", {}))
    x = ("eps" if "eps" in grids else (grids[0] if grids else None)) if x is None else x
    if x not in grids:
        raise ValueError(f"StudyResult.plot draws error against a swept parameter: expected x in {grids}, got "
                         f"{x!r}." if grids else "StudyResult.plot draws error against a swept parameter: the "
                         "study sweeps none.")
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
        fig, axes = plt.subplots(1, len(ns), figsize=(3.6 * len(ns) + 0.4, 3.3), squeeze=False, sharey=True)
        axes = list(axes[0])
    else:
        axes = list(np.atleast_1d(ax))
        if len(axes) != len(ns):
            raise ValueError(f"Expected ax to hold one axes per n ({len(ns)}), got {len(axes)}.")
        fig = axes[0].figure
    others = _others(cfg, x)
    colours = _colours(list(cfg["mechanisms"]))
    styles = dict(zip(methods, itertools.cycle(_STYLES)))
    values = sorted({tuple(r.get(g) for g in others) for r in rows}, key=lambda v: tuple(map(str, v)))
    markers = dict(zip(values, itertools.cycle(_MARKERS))) if others else {}
    drew_theory = False
    for a, n in zip(axes, ns):
        for (mech, method, vals), pts in _lines(rows, metric, methods, n, x, others).items():
            xs, mean, se, th = (np.asarray(c, np.float64) for c in zip(*pts))
            colour = colours[mech]
            if theory and np.any(np.isfinite(th)):
                a.plot(xs, th, color=colour, lw=6, alpha=0.25, solid_capstyle="round", zorder=1)
                drew_theory = True
            a.plot(xs, mean, color=colour, ls=styles[method], lw=1.6, marker=markers.get(vals, "o"), ms=3.5,
                   zorder=3)
            band = np.nan_to_num(se)
            a.fill_between(xs, mean - band, mean + band, color=colour, alpha=0.12, lw=0, zorder=2)
        a.set_xlabel(x)
        a.set_title(f"n = {n:,}")
        a.grid(True, which="major", alpha=0.3, lw=0.5)
        if logy:
            a.set_yscale("log")
    axes[0].set_ylabel(f"{metric} (mean, band: +-1 SE)")
    fig.tight_layout()
    _legend(fig, colours, styles, markers, others, theory and drew_theory)
    return fig
