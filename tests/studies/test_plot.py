"""``uldp_jax/studies/_plot.py`` (issue 54 item 8): ``StudyResult.plot`` for a paper: colour is the mechanism, line
style the method, the legend outside every panel, and one line per other swept value (on synthetic rows)."""

import math

import numpy as np
import pytest

from uldp_jax.studies._result import StudyResult


def _synthetic(mechs, methods, grids, ns=(1000,)):
    rows = []
    others = [g for g in grids if g != "eps"]
    for i, m in enumerate(mechs):
        for n in ns:
            for vals in np.ndindex(*[len(grids[g]) for g in grids]):
                pt = {g: grids[g][j] for g, j in zip(grids, vals)}
                for k, meth in enumerate(methods):
                    mean = (1 + i) * (1 + k) * math.exp(-pt["eps"]) * (1 + sum(pt[g] for g in others)) / n
                    rows.append({"mechanism": m, **pt, "n": n, "sample": "iid", "method": meth, "metric": "mse_sum",
                                 "mean": mean, "se": 0.05 * mean, "theory": mean if meth == "emp" else math.nan,
                                 "z": 0.0, "reps": 30, "compile_s": 0.0, "run_s": 0.0})
    cfg = {"mechanisms": list(mechs), "grids": {g: list(v) for g, v in grids.items()}, "n": list(ns),
           "methods": list(methods), "metrics": {"mse_sum": "mse_sum"}}
    return StudyResult(rows, np.zeros((len(rows), 1)), cfg, {})


def test_plot_colour_is_mechanism_style_is_method_legend_outside():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    res = _synthetic(["GRR", "OUE", "OLH", "uRR", "uRAP", "HR"], ["emp", "em"], {"eps": [0.5, 1.0, 2.0, 4.0]},
                     ns=(10_000, 100_000))
    fig = res.plot()
    ax = fig.axes[0]
    data = [ln for ln in ax.lines if ln.get_linewidth() < 3]
    theory = [ln for ln in ax.lines if ln.get_linewidth() >= 3]
    assert len(data) == 12 and len(theory) == 6  # every series and every emp theory line drawn
    colours = {}
    for ln in data:
        colours.setdefault(matplotlib.colors.to_hex(ln.get_color()), set()).add(ln.get_linestyle())
    assert len(colours) == 6 and all(styles == {"-", "--"} for styles in colours.values())
    legend = fig.legends[0]
    fig.canvas.draw()
    box = legend.get_window_extent()
    assert box.x0 >= max(a.get_window_extent().x1 for a in fig.axes) - 1  # outside every panel
    labels = [t.get_text() for t in legend.get_texts()]
    assert "theory (emp)" in labels and "method: em" in labels and "GRR" in labels


def test_plot_draws_one_line_per_other_swept_value():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    res = _synthetic(["uRAP", "uRR"], ["emp"], {"eps": [0.5, 1.0, 2.0], "theta": [0.1, 0.5]})
    fig = res.plot()
    data = [ln for ln in fig.axes[0].lines if ln.get_linewidth() < 3]
    assert len(data) == 4  # 2 mechanisms x 2 theta values, never one line across theta
    for ln in data:
        assert len(ln.get_xdata()) == 3 and np.all(np.diff(ln.get_xdata()) > 0)
    with pytest.raises(ValueError, match="expected x in"):
        res.plot(x="bogus")
    assert len([ln for ln in res.plot(x="theta").axes[0].lines if ln.get_linewidth() < 3]) == 6
