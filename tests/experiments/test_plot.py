"""``uldp_jax/experiments/_plot.py``: figures a reader can read (issue 23 item 8): a line drawn on top of another
is named in its panel's title."""

import pytest

from uldp_jax.experiments import _plot


def test_coinciding_names_lines_on_top_of_an_earlier_one():
    lines = [("uUE", "uUE", "theory", [1, 2], [1.0, 2.0]), ("uLH", "uLH", "theory", [1, 2], [1.01, 2.01]),
             ("uRR", "uRR", "theory", [1, 2], [1.0, 3.0]), ("uWheel", "uWheel", "theory", [1, 2], [1.0, 2.0])]
    assert _plot.coinciding(lines) == [("uLH", "uUE"), ("uWheel", "uUE")]
    assert _plot.coinciding(lines, rtol=1e-3) == [("uWheel", "uUE")]
    assert _plot.coinciding([("a", "a", "", [1, 2], [1.0, float("nan")]), ("b", "b", "", [1, 2], [1.0, 2.0])]) == []
    same_mech = [("HR (theory)", "HR", "theory", [1, 2], [1.0, 2.0]), ("HR (emp)", "HR", "emp", [1, 2], [1.0, 2.0])]
    assert _plot.coinciding(same_mech) == []  # a simulation on its own theory: told apart by the line style


def test_line_panels_title_says_which_line_is_hidden():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    panels = [("p1", [("uUE", "uUE", "theory", [1, 2], [1.0, 2.0]), ("uLH", "uLH", "theory", [1, 2], [1.0, 2.0])]),
              ("p2", [("uUE", "uUE", "theory", [1, 2], [1.0, 2.0]), ("uLH", "uLH", "theory", [1, 2], [3.0, 4.0])])]
    fig = _plot.line_panels(panels, "eps", "MSE", logx=False)
    titles = [ax.get_title() for ax in fig.axes if ax.get_lines()]
    assert "uUE = uLH" in titles[0] and titles[1] == "p2"
    plt.close(fig)
