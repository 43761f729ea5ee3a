"""001-em-timing: every estimator is timed on all n users and EM on RAPPOR/uRAP runs on support lists."""

from uldp_jax import experiments
from uldp_jax.experiments import _murakami_timing as _murakami
from uldp_jax.experiments._runner import Context


def test_quick_em_timing_times_estimators_that_recover_the_truth():
    cfg = experiments.get_experiment("001-em-timing").quick  # census proxy d = 400, n = 20,000, eps = 6
    report = _murakami.run_em_timing(cfg, Context(seed=0, progress=False))
    rows = report.rows
    assert {(r["mechanism"], r["method"]) for r in rows} == {(m, k) for m in cfg["mechanisms"]
                                                             for k in ("emp", "emp+thr", "EM")}
    for r in rows:
        assert r["n"] == cfg["n"] and r["seconds"] > 0 and r["compile_seconds"] > 0 and r["setup_seconds"] > 0
    em = {r["mechanism"]: r for r in rows if r["method"] == "EM"}
    for r in em.values():
        assert r["converged"] and r["em_map_evals"] > 2
        assert r["tv"] < 0.08  # observed ~0.05 for both
    # uRAP's EM read the reports as support lists: only sensitive ones are kept (76 of 400 items), a few per
    # report at eps = 6, far fewer than n * d bits
    nnz = em["uRAP"]["report_nnz"]
    assert 0 < nnz < cfg["n"] * 2 and em["uRR"]["report_nnz"] is None
    emp = {r["mechanism"]: r for r in rows if r["method"] == "emp"}
    assert em["uRAP"]["tv"] < emp["uRAP"]["tv"]  # observed 0.052 vs 0.089
