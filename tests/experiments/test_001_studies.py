"""001 Figs 5-7/10-12 and the demo are ``ul.study`` calls under 001's sampling model (issue 20 item 5, issue 23
item 1): a random n of the population's people report, scored against the population's distribution; the iid
model is a labelled extra."""

import math

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import experiments, testing
from uldp_jax.experiments import _datasets, _murakami
from uldp_jax.experiments import _murakami_study as S
from uldp_jax.experiments._runner import Context, run_size

CTX = Context(seed=0, progress=False)


def _cfg(name, **kw):
    return dict(experiments.make_config(experiments.get_experiment(name), quick=True), **kw)


@pytest.mark.slow
def test_eps_sweep_rows_are_the_study_rows():
    """001-fig5's rows for RR and uRR are those of one ``ul.study`` call (population model, counts path), bit
    for bit, with the population of 2 n people built from p."""
    cfg = _cfg("001-fig5", mechanisms=["RR", "uRR"], methods=["emp", "emp+thr"], reps=3, n=500)
    rows = _murakami.run_eps(cfg, CTX).rows
    ds = _datasets.resolve(["foursquare"], None, 500)[0]
    eps = sorted({0.5, round(math.log(ds.d), 4)})
    res = ul.study(jax.random.fold_in(CTX.key(0), 0),
                   {"RR": lambda eps: ul.GRR(ds.d, eps), "uRR": lambda eps: ul.URR(ds.d, ds.sensitive, eps)},
                   eps=eps, n=[500], reps=3, methods=("emp", "emp+thr"), metrics=("tv",),
                   xs=S.population(ds, 500), sample="population", simulate_options={"path": "auto"})
    want = {(r["mechanism"], r["method"], r["eps"]): r for r in res.rows()}
    got = {(r["mechanism"], r["method"], r["eps"]): r for r in rows if r["mechanism"] != "no privacy"}
    assert set(got) == set(want)
    for k, r in got.items():
        assert r["value"] == want[k]["mean"] and r["se"] == want[k]["se"], k
        assert r["sample"] == "population" and r["population"] == 1000 and r["n"] == 500 and r["reps"] == 3
        assert r["theory"] == pytest.approx(want[k]["theory"]) if r["method"] == "emp" else r["theory"] is None
    nop = [r for r in rows if r["mechanism"] == "no privacy"]
    assert len(nop) == len(eps) and all(r["sample"] == "population" and r["reps"] == 200 for r in nop)


def test_iid_model_is_a_labelled_extra():
    """``sample="iid"``: rows say so, there is no population, and the run is reduced with the model named."""
    cfg = _cfg("001-fig5", mechanisms=["uRR"], methods=["emp"], reps=2, n=500, sample="iid")
    report = _murakami.run_eps(cfg, CTX)
    assert {r["sample"] for r in report.rows} == {"iid"} and {r["population"] for r in report.rows} == {None}
    assert "sampling model: iid" in report.dataset
    mode, devs = run_size(experiments.get_experiment("001-fig5"), dict(experiments.get_experiment("001-fig5").full,
                                                                        sample="iid"))
    assert mode == "reduced" and any(d.startswith("sample: iid (001:") for d in devs), devs
    assert experiments.get_experiment("001-fig5").full["sample"] == "population"
    with pytest.raises(ValueError, match="sample"):
        _murakami.run_eps(dict(cfg, sample="bogus"), CTX)


@pytest.mark.slow
def test_sensitive_sweep_shares_mechanisms_without_x_s():
    """001-fig6 as one study per case over eps x |X_S|: RR has no X_S, so its rows are the same at every |X_S|;
    uRR's error grows with |X_S| at eps = 0.1; every row states the model and the population."""
    cfg = _cfg("001-fig6", mechanisms=["RR", "uRR"], s_values=[1, 300], cases=2, reps=2, n=400)
    rows = _murakami.run_sensitive(cfg, CTX).rows
    rr = {(r["eps"], r["s"]): r["value"] for r in rows if r["mechanism"] == "RR"}
    urr = {(r["eps"], r["s"]): r["value"] for r in rows if r["mechanism"] == "uRR"}
    assert len(rr) == len(urr) == 4
    for e in {k[0] for k in rr}:
        assert rr[(e, 1)] == rr[(e, 300)]
    # in theory (emp's normal-approximation TV of each case's X_S, iid: an upper bound in the population model)
    # the error grows with |X_S| in every case; the data do not refute it (one-sided, per-check level)
    ds = _datasets.resolve(cfg["datasets"], None, cfg["n"])[0]
    rng = np.random.default_rng(CTX.seed)  # run_sensitive's random X_S: the items relabelled by these perms
    perms = [rng.permutation(ds.d) for _ in range(cfg["cases"])]
    tv = {s: [testing.emp_tv(ul.URR(ds.d, tuple(range(s)), 0.1), ds.p[pm], cfg["n"]) for pm in perms]
          for s in (1, 300)}
    assert all(a[0] < b[0] for a, b in zip(tv[1], tv[300])), tv
    sd = [max(v[1] for v in tv[s]) / np.sqrt(cfg["cases"] * cfg["reps"]) for s in (1, 300)]
    assert testing.at_most(urr[(0.1, 1)], urr[(0.1, 300)], np.hypot(*sd)), (urr, sd)
    assert all(r["sample"] == "population" and r["population"] == 800 and r["cases"] == 2 for r in rows)


# Fig 5's quick run with every mechanism is tests/experiments/test_quick_experiments.py's; here one mechanism of
# each estimator route (RR: GRR's histogram EM; uRAP: report-based EM on bit vectors) is scored both ways.
_BOTH_METRICS_CASES = [("001-fig5", "001-fig10", _murakami.run_eps, dict(mechanisms=["RR", "uRAP"])),
                       ("001-fig6", "001-fig11", _murakami.run_sensitive, {}),
                       ("001-fig7", "001-fig12", _murakami.run_attributes, {})]


@pytest.mark.slow
@pytest.mark.parametrize("tv_name, mse_name, run, settings", _BOTH_METRICS_CASES,
                         ids=[f"{a}-{b}-{r.__name__}" for a, b, r, _ in _BOTH_METRICS_CASES])
def test_both_metrics_from_one_run_equal_the_two_runs(tv_name, mse_name, run, settings):
    """``metric=[tv, l2sq]`` scores one run's estimates twice: its rows are the TV figure's and the MSE twin's,
    value for value (001 Figs 5-7 and 10-12 share their simulations: half the cost of running both)."""
    keys = ("dataset", "mechanism", "method", "eps", "s", "attributes")

    def table(rows):
        return {tuple(r.get(k) for k in keys): (r["value"], r["se"]) for r in rows}

    both = run(_cfg(tv_name, metric=["tv", "l2sq"], **settings), CTX)
    if settings:  # the reduced Fig 5 still scores uRAP's report-based EM
        assert {r["method"] for r in both.rows if r["mechanism"] == "uRAP"} == {"emp", "emp+thr", "EM"}
    for name, mt in ((tv_name, "tv"), (mse_name, "l2sq")):
        alone = run(_cfg(name, **settings), CTX).rows
        assert {r["metric"] for r in alone} == {mt}
        assert table([r for r in both.rows if r["metric"] == mt]) == table(alone), (name, mt)
    lines = both.table.splitlines()
    header = lines[lines.index(next(ln for ln in lines if set(ln) == {"-"})) - 1]  # the line above the rule
    assert len(both.figures) == 2 and header.split()[0] == "metric"
    with pytest.raises(ValueError, match="metric"):
        S.metrics(dict(metric=["tv", "tv"]))
