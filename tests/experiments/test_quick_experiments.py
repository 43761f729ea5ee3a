"""Every experiment's --quick config runs and writes its plain CSV, run_config.json (config, versions) and PNG.

001's MSE figures (10, 11, 12) share the code of Figs 5, 6, 7 and differ only in the metric; they are checked by
config, not re-run, to keep this directory fast.
"""

import csv
import json
import os

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import experiments, testing
from uldp_jax.experiments import _datasets

_MSE_TWINS = {"001-fig10": "001-fig5", "001-fig11": "001-fig6", "001-fig12": "001-fig7", "001-fig13": "001-fig8",
              "003-fig8": "003-fig4", "003-fig9-ndcg": "003-fig9"}
# demo: test_cli; 003-sims: test_multi_metric_run below; field-table: tests/experiments/test_field_table.py runs
# its quick configuration once and checks these outputs and its numbers (the run compiles every oracle).
_ELSEWHERE = ("demo", "003-sims", "field-table")
_RUN = [n for n in experiments.experiment_names() if n not in _MSE_TWINS and n not in _ELSEWHERE]
_SLOW_RUNS = {"001-fig5", "001-fig6", "hr-general", "004-table1", "tuned-urap", "audit-peers"}  # over 10 s each in the full suite's durations (tests/conftest.py SLOW_S)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_RUNS else n for n in _RUN])
def test_quick_run_writes_outputs(name, tmp_path):
    out = experiments.run_experiment(name, quick=True, out=str(tmp_path), progress=False, echo=None)
    assert os.path.exists(out["csv"]) and out["figures"]
    assert all(os.path.getsize(f) > 1000 for f in out["figures"])
    text = open(out["csv"]).read()
    assert not text.startswith("#")  # plain CSV; configuration and versions in run_config.json
    with open(os.path.join(out["folder"], "run_config.json")) as fh:
        meta = json.load(fh)
    assert meta["config"] and meta["versions"]["uldp_jax"] and meta["experiment"] == name
    assert len(text.splitlines()) > 1  # header row and data
    assert os.path.exists(os.path.join(out["folder"], "summary.md"))
    rows = list(csv.DictReader(ln for ln in text.splitlines() if not ln.startswith("#")))
    for r in rows:  # every number written is a number
        for k in ("value", "se"):
            if r.get(k) not in (None, ""):
                assert np.isfinite(float(r[k])), (name, r)
        if r.get("se") not in (None, ""):
            assert float(r["se"]) >= 0, (name, r)
    if name in _REFERENCES:
        _REFERENCES[name](rows)


def _fig5_no_privacy(rows):
    """001 Fig 5's "no privacy" TV under 001's model (n of the population's N people, scored against the
    population) against the exact expectation E TV = 1/2 sum_x E|H_x / n - N_x / N|, H_x ~ Hypergeom(N, N_x, n)."""
    from scipy import stats as sps

    from uldp_jax.experiments import _datasets
    from uldp_jax.experiments import _murakami_study as S

    cfg = experiments.make_config(experiments.get_experiment("001-fig5"), quick=True)
    for ds in _datasets.resolve(cfg["datasets"], None, cfg.get("n")):
        mine = [r for r in rows if r["dataset"] == ds.name and r["mechanism"] == "no privacy"]
        assert mine and all(r["sample"] == "population" and r["population"] == str(2 * ds.n) for r in mine)
        counts = np.bincount(S.population(ds, ds.n), minlength=ds.d)
        N, n, k = int(counts.sum()), ds.n, np.arange(ds.n + 1)
        exact = 0.5 * sum(float(np.sum(sps.hypergeom.pmf(k, N, c, n) * np.abs(k / n - c / N))) for c in counts if c)
        for r in mine:
            assert testing.within_se(float(r["value"]), exact, float(r["se"]), dof=int(r["reps"]) - 1), (r, exact)


_REFERENCES = {"001-fig5": _fig5_no_privacy}


@pytest.mark.parametrize("twin,base", sorted(_MSE_TWINS.items()))
def test_mse_twins_differ_only_in_metric(twin, base):
    a, b = experiments.get_experiment(twin), experiments.get_experiment(base)
    assert a.run is b.run
    for x, y in ((a.full, b.full), (a.quick, b.quick)):
        assert {k: v for k, v in x.items() if k not in ("metric", "title")} == \
            {k: v for k, v in y.items() if k not in ("metric", "title")}
        assert x["metric"] != y["metric"]
        if twin.startswith("001-"):  # 001 App. C: "MSE" = mean over runs of the l2 loss sum_x (p_hat - p)^2
            assert x["metric"] in ("l2sq", ["l2sq"])


def test_reps_override_and_errors():
    exp = experiments.get_experiment("001-fig5")
    assert experiments.make_config(exp, quick=True, reps=7)["reps"] == 7
    with pytest.raises(ValueError, match="reps"):
        experiments.make_config(exp, reps=0)
    with pytest.raises(ValueError, match="Unknown experiment"):
        experiments.get_experiment("fig99")


def test_overrides_are_applied_and_recorded(tmp_path):
    out = experiments.run_experiment("003-fig7", quick=True, out=str(tmp_path), progress=False, echo=None,
                                     overrides={"eps": [2.0], "reps": 3})
    text = open(out["csv"]).read()
    with open(os.path.join(out["folder"], "run_config.json")) as fh:
        config = json.load(fh)["config"]
    assert config["eps"] == [2.0] and config["reps"] == 3
    rows = text.splitlines()[1:]
    assert rows and all(",2.0," in ln or ",2," in ln for ln in rows)


@pytest.mark.slow
def test_multi_metric_run_scores_one_simulation_with_every_metric(tmp_path):
    """003-sims: each setting's estimates are scored with all four metrics; top-30 metrics skip Drug (d = 10)."""
    out = experiments.run_experiment("003-sims", quick=True, out=str(tmp_path), progress=False, echo=None)
    names = sorted(os.path.basename(f) for f in out["figures"])
    assert names == ["eps_vs_f1_at_30.png", "eps_vs_mae.png", "eps_vs_mse.png", "eps_vs_ndcg_at_30.png"]
    rows = [ln.split(",") for ln in open(out["csv"]).read().splitlines() if not ln.startswith("#")]
    col = {k: i for i, k in enumerate(rows[0])}
    seen = {(r[col["dataset"]], r[col["metric"]]) for r in rows[1:]}
    assert seen == {("drug", "mse"), ("drug", "mae")} | {("foursquare25", m) for m in ("mse", "mae", "f1@30",
                                                                                       "ndcg@30")}
    for r in rows[1:]:
        v = float(r[col["value"]])
        assert (0 <= v <= 1) if "@" in r[col["metric"]] else v > 0


def test_pum_reps_by_mech_overrides_the_repetitions_of_one_mechanism(tmp_path):
    """001-fig8's ``reps_by_mech`` (EM for uRAP is per report and slow) sets that mechanism's repetitions only."""
    out = experiments.run_experiment("001-fig8", quick=True, out=str(tmp_path), progress=False, echo=None,
                                     overrides={"reps_by_mech": {"uRR": 1}, "reps": 3})
    rows = [ln.split(",") for ln in open(out["csv"]).read().splitlines() if not ln.startswith("#")]
    col = {k: i for i, k in enumerate(rows[0])}
    assert len(rows) > 3 and {r[col["reps"]] for r in rows[1:]} == {"1"}


@pytest.mark.slow
def test_error_curve_runs_report_based_em_for_bit_mechanisms():
    """report_reps > 0 adds EM on the exact per-report likelihood for RAPPOR/uRAP (001 Figs 5-7)."""
    import jax
    import numpy as np

    from uldp_jax.experiments import _common

    d, p = 12, np.full(12, 1 / 12)
    # 8 repetitions: the ordering below is of random means. Over 20 seeds (fa3, 2026-11-27) the per-repetition TV
    # has SD ~0.042 at eps 1 and ~0.018 at eps 4 around means 0.154 and 0.074, so the difference of 8-repetition
    # means is ~4.9 of its SDs (a flip ~4e-7 < ALPHA); with 2 repetitions it was ~2.5 SDs (a flip ~0.7% a run).
    # The ordering is now a budgeted one-sided t check (7 dof: it fails only past ~11.2 SEs, i.e. on a reversal).
    reps = 8
    out = _common.error_curve(jax.random.key(0), "uRAP", d, [0, 1, 2], [1.0, 4.0], p, 400, reps,
                              ("emp", "em"), report_reps=reps)
    assert set(out) == {"emp", "em"}
    mean, se = out["em"]
    assert mean.shape == (2,) and np.all(np.isfinite(mean)) and np.all(mean >= 0) and np.all(se >= 0)
    # less noise at eps = 4 than at eps = 1: one-sided, per-check level; se are the repetitions' (t, reps - 1 dof)
    assert testing.at_most(mean[1], mean[0], np.hypot(se[0], se[1]), dof=reps - 1), (mean, se)
    skipped = _common.error_curve(jax.random.key(0), "uRAP", d, [0, 1, 2], [1.0], p, 400, 2, ("emp", "em"))
    assert set(skipped) == {"emp"}


@pytest.mark.slow
def test_001_eps_sweeps_run_em_for_bit_mechanisms_by_default(tmp_path):
    """001 Figs 5-7/10-12 show EM for RAPPOR/uRAP: the registered configs run it (ul.simulate, every repetition),
    so the quick 001-fig5 has uRAP (EM) rows on every repetition and no "EM skipped" deviation."""
    import json

    for name in ("001-fig5", "001-fig10", "001-fig6", "001-fig11", "001-fig7", "001-fig12"):
        assert experiments.get_experiment(name).full["report_reps"] == "all", name
    out = experiments.run_experiment("001-fig5", quick=True, out=str(tmp_path), progress=False, echo=None)
    text = open(out["csv"]).read()
    rows = list(csv.DictReader(ln for ln in text.splitlines() if not ln.startswith("#")))
    em = {float(r["eps"]): r for r in rows if r["mechanism"] == "uRAP" and r["method"] == "EM"}
    emp = {float(r["eps"]): r for r in rows if r["mechanism"] == "uRAP" and r["method"] == "emp"}
    assert len(em) == 2 and set(em) == set(emp)
    n = experiments.make_config(experiments.get_experiment("001-fig5"), quick=True)["n"]
    ds = _datasets.resolve(["foursquare"], None, n)[0]
    for e, r in em.items():
        assert r["reps"] == "2" and float(r["se"]) > 0
        # EM's estimate lies in the simplex (TV <= 1) and its TV is not above the unconstrained emp's expected TV
        # at the quick n, d = 625 (one-sided, per-check level; emp's iid TV bounds the population model's)
        mean, sd = testing.emp_tv(ul.URAP(ds.d, ds.sensitive, e), ds.p, n)
        assert 0 < float(r["value"]) <= 1 and testing.at_most(float(r["value"]), mean, sd / np.sqrt(2)), (e, r, mean)
    with open(os.path.join(out["folder"], "run_config.json")) as fh:
        header = json.load(fh)
    assert not any("EM for RAPPOR/uRAP" in dv for dv in header.get("deviations", []))


@pytest.mark.slow
def test_csv_reps_column_counts_the_report_based_repetitions(tmp_path):
    """With report_reps < reps, EM rows of RAPPOR/uRAP say how many repetitions they average (their SE is over
    those), while stats-based rows keep ``reps``."""
    out = experiments.run_experiment("001-fig5", quick=True, out=str(tmp_path), progress=False, echo=None,
                                     overrides={"reps": 3, "report_reps": 2})
    rows = list(csv.DictReader(ln for ln in open(out["csv"]).read().splitlines() if not ln.startswith("#")))
    got = {(r["mechanism"], r["method"]): r["reps"] for r in rows if r["mechanism"] != "no privacy"}
    assert got[("uRAP", "EM")] == "2" and got[("uRAP", "emp")] == "3" and got[("RR", "EM")] == "3", got


@pytest.mark.parametrize("name", ["001-fig5", "001-fig10", "001-fig6", "001-fig11"])
def test_quick_001_configs_keep_every_mechanism_the_claim_compares(name):
    """Issue 54 item 9: --quick may shrink n, eps, reps and datasets, never the mechanisms 001's claims compare
    (RR, RAPPOR, uRR, uRAP): the quick run can still test that the utility-optimized ones win."""
    exp = experiments.get_experiment(name)
    assert exp.quick["mechanisms"] == exp.full["mechanisms"] == ["RR", "RAPPOR", "uRR", "uRAP"]
    assert exp.quick["n"] < 2_000
