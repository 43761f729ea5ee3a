"""``uldp_jax/experiments/_extras.py``: the quick configurations of the paper items without a simulation study
(003-fig1, 004-fig1, 004-fig3; every closed-form/data item registered with a quick config, 001-fig8/fig9 of
``_pum`` too): the numbers, not just that they ran."""

import math

import numpy as np
import pytest

from uldp_jax import experiments

from tests.experiments._outputs import _rows, _run


@pytest.mark.parametrize("name", ["001-fig8", "001-fig9", "003-fig1", "004-fig1", "004-fig3"])
def test_registered_with_a_quick_config(name):
    exp = experiments.get_experiment(name)
    assert exp.quick and exp.full and exp.quick != exp.full or name == "004-fig1"


def test_003_fig1_costs_and_mse(tmp_path):
    rows = _rows(_run("003-fig1", tmp_path))
    mse = {(r["mechanism"], int(r["s"])): r for r in rows if r["metric"].startswith("mse")}
    for r in mse.values():  # 003's unit (sum over items) and the per-item mean, d = 100
        assert math.isclose(float(r["value"]), 100 * float(r["mse_per_item"]), rel_tol=1e-4)
        assert float(r["se"]) == 0.0
    assert float(mse["uRR", 50]["value"]) > 4 * float(mse["uLH", 50]["value"])  # uRR degrades with |X_S|
    assert math.isclose(float(mse["uRR", 10]["table1_bits"]), math.log2(100), rel_tol=1e-6)
    assert math.isclose(float(mse["uRAP", 50]["table1_bits"]), math.log2(2**50 + 50), rel_tol=1e-6)
    assert math.isclose(float(mse["uLH", 50]["table1_bits"]), math.log2(math.e + 50), rel_tol=1e-6)


def test_004_fig1_corner_matches_app_b(tmp_path):
    rows = _rows(_run("004-fig1", tmp_path))
    for e12, e21 in ((2.0, 2.0), (0.5, 2.0)):
        corner = [r for r in rows if float(r["eps12"]) == e12 and float(r["eps21"]) == e21 and r["vertex"] == "1"]
        assert len(corner) == 2  # closed form and eq 9's channel
        den = math.exp(e12 + e21) - 1
        for r in corner:
            assert math.isclose(float(r["p_fa"]), (math.exp(e21) - 1) / den, rel_tol=1e-6)
            assert math.isclose(float(r["p_md"]), (math.exp(e12) - 1) / den, rel_tol=1e-6)


def test_004_fig3_heatmap_shares(tmp_path):
    rows = _rows(_run("004-fig3", tmp_path))
    coarse = [r for r in rows if r["level"].startswith("coarse")]
    assert len(coarse) == 5 * 14  # 125 x 350 cells merged 25 x 25
    assert math.isclose(sum(float(r["value"]) for r in coarse), 1.0, abs_tol=1e-4)  # 6 significant digits in the CSV
    n = int(coarse[0]["n"])
    for r in coarse[:5]:
        p = float(r["value"])
        assert math.isclose(float(r["se"]), math.sqrt(p * (1 - p) / n), rel_tol=1e-4, abs_tol=1e-12)
    top = [float(r["value"]) for r in rows if r["level"] == "top cell"]
    assert top == sorted(top, reverse=True) and np.all(np.array(top) > 0)
