"""Matplotlib figures for the reproductions (Agg backend; no display needed)."""

from __future__ import annotations

from typing import Sequence

COLORS = {"RR": "tab:blue", "RAPPOR": "tab:orange", "uRR": "tab:green", "uRAP": "tab:red", "OUE": "tab:olive",
          "uSS": "tab:purple", "uUE": "tab:brown", "uLH": "tab:pink", "uWheel": "tab:gray", "uHR": "tab:cyan",
          "HR": "tab:blue", "no privacy": "black", "uLH (published z)": "tab:pink",
          "uWheel (published z)": "tab:gray"}
STYLES = {"emp": ":", "emp+thr": "--", "em": "-", "EM": "-", "theory": "-", "": "-"}


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


@_or_nofigure
def line_panels(panels: Sequence[tuple], xlabel: str, ylabel: str, logx: bool = True, logy: bool = True,
                vlines: Sequence[float | None] = (), suptitle: str = ""):
    """One subplot per panel ``(title, [(label, mechanism, method, x, y), ...])``; returns the figure.

    Color encodes the mechanism, line style the estimation method; ``vlines[i]`` draws a bold vertical line
    (001: ``eps = ln d``) on panel ``i``.
    """
    plt = _plt()
    k = len(panels)
    cols = min(k, 3)
    rows = (k + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    for i, (title, lines) in enumerate(panels):
        ax = axes[i // cols][i % cols]
        for label, mech, method, x, y in lines:
            style = STYLES.get(method, "-")
            marker = "o" if len(x) <= 12 else None
            ax.plot(x, y, style, color=COLORS.get(mech), marker=marker, ms=3, lw=1.4, label=label)
        if i < len(vlines) and vlines[i] is not None:
            ax.axvline(vlines[i], color="k", lw=2.5, alpha=0.5)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
    for j in range(k, rows * cols):
        axes[j // cols][j % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(6, len(labels)), fontsize=8,
               bbox_to_anchor=(0.5, 1.0 + 0.06 * ((len(labels) + 5) // 6)))
    if suptitle:
        fig.suptitle(suptitle, y=1.0 + 0.06 * ((len(labels) + 5) // 6) + 0.05)
    fig.tight_layout()
    return fig


@_or_nofigure
def bar_chart(title: str, labels: Sequence[str], values: Sequence[float], ylabel: str, logy: bool = True):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.0 + 0.8 * len(labels), 3.4))
    ax.bar(range(len(labels)), values, color="tab:blue")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if logy:
        ax.set_yscale("log")
    fig.tight_layout()
    return fig
