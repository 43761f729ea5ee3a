"""Matplotlib figures for the reproductions (Agg backend; no display needed)."""

from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np

COLORS = {"RR": "tab:blue", "RAPPOR": "tab:orange", "uRR": "tab:green", "uRAP": "tab:red", "OUE": "tab:olive",
          "uSS": "tab:purple", "uUE": "tab:brown", "uLH": "tab:pink", "uWheel": "tab:gray", "uHR": "tab:cyan",
          "HR": "tab:blue", "no privacy": "black", "uLH (published z)": "tab:pink",
          "uWheel (published z)": "tab:gray",
          "GHR": "tab:red", "pure-LDP HR": "black", "GHR authors": "tab:green"}
STYLES = {"emp": ":", "emp+thr": "--", "em": "-", "EM": "-", "theory": "-", "theory (dashed)": "--", "published": ":",
          "published (eq 49)": "-.", "": "-"}


INSTALL_NOTE = "figures skipped: matplotlib is not installed (pip install 'uldp_jax[plot]')"


class NoFigure:
    """Stands in for a figure when matplotlib is missing; the runner writes every other output and notes it."""

    def __init__(self, reason: str = INSTALL_NOTE):
        self.reason = reason


def _missing_matplotlib(e: ImportError) -> bool:
    return isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] == "matplotlib"


def _plt():
    import matplotlib
    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _or_nofigure(fn):
    """Wraps a figure builder: a missing matplotlib gives ``NoFigure`` instead of an exception."""
    import functools

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ModuleNotFoundError as e:
            if _missing_matplotlib(e):
                return NoFigure()
            raise

    return wrapped


def log_ylim(lines: Sequence[Sequence[float]], spread: float = 100.0) -> tuple[float, float, bool]:
    """``(lo, hi, clipped)`` for a log y-axis chosen for the curves that matter: up to ``spread`` times the median
    of the curves' maxima (so one curve far above the rest, e.g. an unthresholded estimator at small eps, does
    not set the range; the caller marks its clipped points), and the whole range when fewer than 3 curves."""
    tops, v = [], []
    for y in lines:
        y = np.asarray([x for x in y if np.isfinite(x) and x > 0], np.float64)
        if y.size:
            tops.append(float(y.max()))
            v.append(y)
    if not v:
        return 0.1, 10.0, False
    v = np.concatenate(v)
    hi = float(v.max()) if len(tops) < 3 else min(float(v.max()), spread * float(np.median(tops)))
    return float(v.min()) / 1.3, hi * 1.3, bool(v.max() > hi * 1.3)


def legend_below(fig, handles: list, labels: list, width_in: float, fontsize: int = 8) -> None:
    """A figure legend under the axes, with as many columns as fit the figure's width."""
    if not labels:
        return
    longest = max(len(lab) for lab in labels)
    ncol = max(1, min(len(labels), int(width_in / (0.075 * (longest + 6)))))
    fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=fontsize, frameon=False,
               bbox_to_anchor=(0.5, 0.0))


def tidy_log_ticks(ax, axis: str = "y") -> None:
    """No overlapping labels on a log axis: minor ticks unlabelled; under 2 decades, majors at 1, 2, 5 x 10^k."""
    import matplotlib.ticker as mticker

    target = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = ax.get_ylim() if axis == "y" else ax.get_xlim()
    if lo > 0 and np.log10(hi / lo) < 2.0:
        target.set_major_locator(mticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        target.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(mticker.NullFormatter())


def coinciding(lines: Sequence[tuple], rtol: float = 0.02) -> list[tuple[str, str]]:
    """``[(label, earlier label)]``: lines ``(label, mechanism, method, x, y)`` drawn over an earlier line of another
    mechanism in the same panel (same x, every y within ``rtol``), so that a reader finds every legend entry. Lines
    of the same mechanism (a simulation on its theory, emp on emp+thr) are told apart by their line style."""
    out = []
    for j, (lab_j, mech_j, _, x_j, y_j) in enumerate(lines):
        y_j = np.asarray(y_j, np.float64)
        for lab_i, mech_i, _, x_i, y_i in lines[:j]:
            y_i = np.asarray(y_i, np.float64)
            if (mech_i != mech_j and len(x_i) == len(x_j) and np.allclose(np.asarray(x_i, np.float64), np.asarray(x_j, np.float64))
                    and y_i.shape == y_j.shape and np.all(np.isfinite(y_j)) and np.all(np.isfinite(y_i))
                    and np.allclose(y_j, y_i, rtol=rtol, atol=0.0)):
                out.append((lab_j, lab_i))
                break
    return out


@_or_nofigure
def line_panels(panels: Sequence[tuple], xlabel: str, ylabel: str | Sequence[str], logx: bool = True, logy: bool = True,
                vlines: Sequence[float | None] = (), suptitle: str = "", vline_label: str = "eps = ln d"):
    """One subplot per panel ``(title, [(label, mechanism, method, x, y), ...])``; returns the figure.

    ``ylabel`` is one label for every panel or one per panel. Color encodes the mechanism, line style the
    estimation method (``STYLES``); a line that lies on an earlier one (``coinciding``) is named in the panel's
    title; ``vlines[i]`` draws a labelled
    vertical reference line (001: ``eps = ln d``) on panel ``i``. A log y-axis spans the curves that matter
    (``log_ylim``): larger values are drawn as triangles on the top edge and the panel says so. The legend sits
    under the axes.
    """
    from matplotlib.lines import Line2D

    plt = _plt()
    k = len(panels)
    cols = min(k, 3)
    rows = (k + cols - 1) // cols
    width = 4.6 * cols
    fig, axes = plt.subplots(rows, cols, figsize=(width, 3.6 * rows), squeeze=False)
    handles: dict = {}
    for i, (title, lines) in enumerate(panels):
        ax = axes[i // cols][i % cols]
        hi = None
        if logy:
            lo, hi, clipped = log_ylim([[float(v) for v in y] for *_, y in lines])
        for label, mech, method, x, y in lines:
            style = STYLES.get(method, "-")
            marker = "o" if len(x) <= 12 else None
            y = np.asarray(y, np.float64)
            (h,) = ax.plot(x, np.minimum(y, hi) if hi else y, style, color=COLORS.get(mech), marker=marker, ms=3,
                           lw=1.4, label=label)
            handles.setdefault(label, h)
            if hi is not None and np.any(y > hi):
                over = y > hi
                ax.plot(np.asarray(x)[over], np.full(int(over.sum()), hi), "^", color=COLORS.get(mech), ms=7,
                        clip_on=False)
        if i < len(vlines) and vlines[i] is not None:
            ax.axvline(vlines[i], color="k", lw=2.5, alpha=0.4)
            handles.setdefault(vline_label, Line2D([], [], color="k", lw=2.5, alpha=0.4))
        hidden = coinciding(lines)
        if hidden:  # a line drawn over another one: say which, so every legend entry is accounted for
            groups: dict = {}
            for a, b in hidden:
                groups.setdefault(b, [b]).append(a)
            title += "\n" + textwrap.fill("coincide (within 2%): " + "; ".join(" = ".join(g) for g in groups.values()),
                                          int(4.6 / 0.06))
        ax.set_title(title, fontsize=10 if not hidden else 8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(textwrap.fill(ylabel if isinstance(ylabel, str) else ylabel[i], 38))
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
            ax.set_ylim(lo, hi)
            tidy_log_ticks(ax, "y")
            if clipped:
                ax.text(0.99, 0.99, "▲ above the axis (clipped)", transform=ax.transAxes, ha="right", va="top",
                        fontsize=7, color="0.3")
        if logx:
            tidy_log_ticks(ax, "x")
        ax.grid(True, which="both", alpha=0.25)
    for j in range(k, rows * cols):
        axes[j // cols][j % cols].axis("off")
    if suptitle:
        fig.suptitle(textwrap.fill(suptitle, int(width / 0.085)), fontsize=9)
    fig.tight_layout()
    legend_below(fig, list(handles.values()), list(handles), width)
    return fig


@_or_nofigure
def bar_chart(title: str, labels: Sequence[str], values: Sequence[float], ylabel: str, logy: bool = True,
              errors: Sequence[float] | None = None, reference: Sequence[float | None] | None = None,
              reference_label: str = "paper"):
    """Bars with optional +-1 SE error bars (``errors``) and reference values drawn as black ticks over the bars
    (``reference``, ``None`` where there is none), both named in a legend."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.6 + 0.8 * len(labels), 3.6))
    ax.bar(range(len(labels)), values, color="tab:blue", label="this run" + (" (+-1 SE)" if errors is not None else ""),
           yerr=errors, capsize=3 if errors is not None else 0)
    if reference is not None:
        pts = [(i, r) for i, r in enumerate(reference) if r is not None and np.isfinite(r)]
        if pts:
            ax.plot([i for i, _ in pts], [r for _, r in pts], "_", color="black", ms=22, mew=2.5, label=reference_label)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if logy:
        ax.set_yscale("log")
        tidy_log_ticks(ax, "y")
    if errors is not None or reference is not None:
        ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
