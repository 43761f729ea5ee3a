"""``uldp_jax/experiments/_studies.py``: paper sweeps declared as ``ul.study`` calls (issue 20 item 5) name the
experiments' metrics as study metrics and turn study rows into experiment rows (the sweeps themselves:
tests/experiments/test_context.py for 004 Fig 2, test_glutf_sim.py for 003 Fig 4)."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.experiments import _studies


def test_study_metrics_map_experiment_names():
    m = _studies.study_metrics(["mse", "tv", "l2sq", "mae", "f1@30"])
    assert m["mse"] == "mse" and m["tv"] == "tv" and m["l2sq"] == "l2"
    est, target = np.full((3, 40), 1 / 40, np.float32), np.linspace(1, 2, 40) / np.linspace(1, 2, 40).sum()
    np.testing.assert_allclose(m["mae"](est, target), np.abs(est - target).mean(-1), rtol=1e-5)
    assert m["f1@30"](est, target).shape == (3,)
    with pytest.raises(ValueError, match="Unknown metric 'rmse'"):
        _studies.study_metrics(["rmse"])
    small = {k: m[k] for k in ("mse", "mae")}
    res = ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(4, eps)}, eps=[1.0, 2.0], n=50, reps=2,
                   p=np.full(4, 0.25), metrics=small)
    rows = _studies.rows(res, dataset="x")
    assert len(rows) == 4 and {r["metric"] for r in rows} == set(small) and all(r["dataset"] == "x" for r in rows)
