"""``uldp_jax/experiments/_context.py``: 004 Fig 2 declared as a ``ul.study`` call (issue 20 item 5) keeps the old
loop's key schedule, so its values equal per-point ``ul.simulate`` calls."""

import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import experiments
from uldp_jax.experiments import _context
from uldp_jax.experiments._runner import Context


def _quick(name):
    exp = experiments.get_experiment(name)
    return exp.run(experiments.make_config(exp, quick=True), Context(progress=False))


@pytest.mark.slow
def test_004_fig2_rows_equal_per_point_simulate_calls():
    cfg = experiments.make_config(experiments.get_experiment("004-fig2"), quick=True)
    rep = _quick("004-fig2")
    ns = [1000 * 2**i for i in cfg["powers"]]
    mechs = _context.fig2_mechanisms(cfg["k"], cfg["blocks"])
    p = _context._dist(cfg["distributions"][0], cfg["k"]).p
    assert len(rep.rows) == len(mechs) * len(ns) * len(cfg["methods"])
    for mi, (label, factory) in enumerate(mechs.items()):
        for ni, n in enumerate(ns):  # the loop's schedule: key(seed) -> distribution -> mechanism -> n
            res = ul.simulate(Context().key(0, mi, ni), factory(cfg["eps"]), p=p, n=n, reps=cfg["reps"],
                              methods=tuple(cfg["methods"]), path="per_user")
            tv = np.asarray(ul.metrics.tv(res.estimates["emp"], jnp.asarray(p, jnp.float32)), np.float64)
            (row,) = [r for r in rep.rows if r["mechanism"] == label and r["n"] == n and r["method"] == "emp"]
            np.testing.assert_allclose(row["value"], tv.mean(), rtol=1e-6)
            assert row["sample"] == "iid" and row["reps"] == cfg["reps"] and np.isfinite(row["theory"])
