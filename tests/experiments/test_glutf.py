"""``uldp_jax/experiments/_glutf.py``: 003's figures plot the MSE summed over items (eq 28), for the closed-form
(003-fig5) and the simulated (003-fig4) sweeps alike."""

import numpy as np
import pytest

from uldp_jax import experiments


@pytest.mark.slow
@pytest.mark.parametrize("name", ["003-fig5", "003-fig4"])
def test_003_plots_show_the_sum_over_items(name):
    """003's figures plot the MSE summed over items (eq 28): every plotted point is a row's value_sum (= d x value)."""
    from uldp_jax.experiments._runner import Context

    exp = experiments.get_experiment(name)
    rep = exp.run(experiments.make_config(exp, quick=True), Context(progress=False))
    (fig,) = rep.figures.values()
    plotted = sorted(float(y) for ax in fig.axes for ln in ax.get_lines() for y in ln.get_ydata())
    rows = [r for r in rep.rows if r.get("value_sum") is not None and np.isfinite(r["value_sum"])]
    assert rows and len(plotted) == len(rows)
    np.testing.assert_allclose(plotted, sorted(r["value_sum"] for r in rows), rtol=1e-12)
    np.testing.assert_allclose([r["value_sum"] for r in rows], [r["value"] * r["d"] for r in rows], rtol=1e-12)
    assert all("sum over items" in ax.get_ylabel() for ax in fig.axes if ax.get_lines())
