"""``uldp_jax/experiments/_pum.py``: the quick configurations of 001's personalized-mechanism study (001's
population model): Fig 8 / Table 1 (Theorem 1's terms, sampling error as a floor) and Fig 9's bot distributions;
the numbers, not just that they ran."""

import math
import os

from uldp_jax import testing

from tests.experiments._outputs import _header, _rows, _run


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
