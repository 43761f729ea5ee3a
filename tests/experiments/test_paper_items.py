"""Quick configurations of the PUM study (001's population model) and the four closed-form/data items
(001-fig9, 003-fig1, 004-fig1, 004-fig3): the numbers, not just that they ran."""

import csv
import json
import math
import os

import numpy as np
import pytest

from uldp_jax import experiments, testing


def _rows(out):
    with open(out["csv"]) as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def _header(out):
    """``run_config.json`` beside the CSV, values as JSON text (as the CSV comment header used to hold them)."""
    with open(os.path.join(out["folder"], "run_config.json")) as fh:
        return {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in json.load(fh).items()}


def _run(name, tmp_path, **kw):
    return experiments.run_experiment(name, quick=True, out=str(tmp_path), progress=False, echo=None, **kw)


@pytest.mark.parametrize("name", ["001-fig8", "001-fig9", "003-fig1", "004-fig1", "004-fig3"])
def test_registered_with_a_quick_config(name):
    exp = experiments.get_experiment(name)
    assert exp.quick and exp.full and exp.quick != exp.full or name == "004-fig1"


def test_pum_truth_is_the_population_so_sampling_error_is_a_floor(tmp_path):
    """001 §6.1: the truth is the population's distribution; a random half of it report. Theorem 1's first term
    ``l1(r_hat, r)`` cannot beat the users' own sampling error: emp's ``r_hat`` is unbiased for the users' ``r``, so
    by Jensen ``E[first] >= l1(users' r, population's r)``. (The whole ``l1`` of case (III) can: its prior is the
    population's own ``pi_k``, information beyond the users'.)"""
    out = _run("001-fig8", tmp_path)
    rows = _rows(out)
    assert _header(out)["mode"] == "quick"
    assert {r["method"] for r in rows if r["case"] in ("I", "II", "III")} == {"emp"}  # unbiased for the users' r
    nonpriv = [r for r in rows if r["mechanism"] == "no privacy"]
    assert len(nonpriv) == 1
    t1 = {r["mechanism"]: r for r in rows if r["case"] == "table1"}
    assert set(t1) == {"uRR (I)", "uRR (II)", "uRR (III)"}
    floor = {float(r["first_floor"]) for r in t1.values()}
    assert len(floor) == 1
    floor = floor.pop()
    # exact: the users' empirical p differs from the population's; merging X_N into the bots cannot raise l1
    assert 0.0 < floor <= 2 * float(nonpriv[0]["value"]) + 1e-12
    for r in t1.values():
        reps = int(r["reps"])
        assert reps >= 3 and r["bound_holds"] == "True"  # Theorem 1, every repetition: l1 <= first + second
        assert testing.at_most(floor, float(r["first"]), float(r["first_se"]), dof=reps - 1)  # E[first] >= floor
    assert float(t1["uRR (III)"]["second"]) < 1e-6  # case (III) uses the true pi_k: the second term vanishes
    # 001 Table 1's order (I) > (II) > (III), one-sided: fails only where the data refute it
    l1 = {c: (float(t1[f"uRR ({c})"]["value"]), float(t1[f"uRR ({c})"]["se"])) for c in ("I", "II", "III")}
    for hi, lo in (("I", "II"), ("II", "III")):
        assert testing.at_most(l1[lo][0], l1[hi][0], math.hypot(l1[lo][1], l1[hi][1]), dof=reps - 1)
    assert all(r["se"] not in ("", "nan") for r in rows if r["mechanism"] != "no privacy")
    with open(os.path.join(out["folder"], "summary.md")) as fh:  # the in-between claim: t with reps - 1 dof
        summary = fh.read()
    assert "one-sided paired t-tests" in summary and f"({reps - 1} dof)" in summary, summary


def test_fig9_bot_distributions_are_distributions(tmp_path):
    rows = _rows(_run("001-fig9", tmp_path))
    for tag in ("home", "workplace"):
        sel = [r for r in rows if r["tag"] == tag]
        assert len(sel) == 625
        for col in ("poi", "true"):
            assert math.isclose(sum(float(r[col]) for r in sel), 1.0, abs_tol=1e-4)  # 6 significant digits in the CSV
        assert all(float(r["true_se"]) >= 0 for r in sel)


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
