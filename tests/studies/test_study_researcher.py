"""Issue 54 items 1, 6, 7 and 9: methods per mechanism and per n, theory reasons instead of silent NaNs, one unit
per metric name, domain sweeps, study files that can be rerun (three share the module-scoped study). Moved to the
mirrors of their modules: methods as a callable (tests/studies/test_methods.py), the paper plot (tests/studies/test_plot.py),
a user's closed form and the theory error (tests/theory/test_mse.py)."""

import inspect
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.engine import _engine as engine
from uldp_jax.studies import _run
from uldp_jax.studies._result import StudyResult
from tests.test_report_pytrees import JBit

D = 8
P = np.random.default_rng(1).dirichlet(np.ones(D))
GRR = lambda eps: ul.GRR(D, eps)  # noqa: E731
OUE = lambda eps: ul.OUE(D, eps)  # noqa: E731


@pytest.fixture(scope="module")
def small():
    return ul.study(jax.random.key(0), {"GRR": GRR, "OUE": OUE}, eps=[1.0, 2.0], n=[300, 600], reps=3, p=P,
                    metrics=("mse", "mse_per_item", "mse_sum", "l2"),
                    methods={"GRR": {300: ("emp", "emp+thr"), 600: "emp"}, "OUE": "emp+thr"})


@pytest.mark.slow  # a study run
def test_methods_per_mechanism_and_per_n(small):
    cells = {(r["mechanism"], r["n"], r["method"]) for r in small.rows()}
    assert cells == {("GRR", 300, "emp"), ("GRR", 300, "emp+thr"), ("GRR", 600, "emp"), ("OUE", 300, "emp+thr"),
                     ("OUE", 600, "emp+thr")}
    assert small.config["methods_by_mechanism"]["GRR"] == {"300": ["emp", "emp+thr"], "600": ["emp"]}
    assert small.config["methods"] == ["emp", "emp+thr"]


@pytest.mark.slow  # a study run
def test_metric_units_and_aliases(small):
    rows = small.rows()
    by = {(r["mechanism"], r["eps"], r["n"], r["method"], r["metric"]): r for r in rows}
    for (m, e, n, meth, metric), r in by.items():
        if metric != "mse_sum":
            continue
        per_item = by[(m, e, n, meth, "mse_per_item")]
        assert r["mean"] == pytest.approx(D * per_item["mean"], rel=1e-12)
        assert by[(m, e, n, meth, "l2")]["mean"] == r["mean"]  # alias
        assert by[(m, e, n, meth, "mse")]["mean"] == per_item["mean"]  # alias
        if meth == "emp":  # mse_sum's theory is ul.theory.mse (a sum over items)
            with jax.enable_x64(True):
                want = float(ul.theory.mse(ul.GRR(D, e), P, n))
            assert r["theory"] == pytest.approx(want, rel=1e-9)
            assert per_item["theory"] == pytest.approx(want / D, rel=1e-9)


def test_units_are_stated_in_the_public_docs():
    text = open("docs/studies.md").read()
    assert "mse_sum" in text and "mse_per_item" in text and "ul.theory.mse" in text


@pytest.mark.slow  # a study run
def test_no_theory_is_a_warning_with_the_reason_and_recorded():
    with pytest.warns(_run.TheoryWarning, match=r"mechanisms\['J'\].*JBit"):
        res = ul.study(jax.random.key(2), {"J": lambda eps: JBit(D, eps)}, eps=[1.0], n=[200], reps=2, p=P)
    assert math.isnan(res.rows()[0]["theory"])
    assert "JBit" in res.config["theory_errors"]["J"]


@pytest.mark.slow  # a study run
def test_a_domain_sweep_runs_one_engine_call_per_shape_and_n(monkeypatch):
    calls = []
    real = engine.simulate

    def counting(key, mech, **kw):
        calls.append((type(mech).__name__, mech.d, kw.get("n")))
        return real(key, mech, **kw)

    monkeypatch.setattr(engine, "simulate", counting)
    uniform = lambda d: np.full(d, 1.0 / d)  # noqa: E731
    res = ul.study(jax.random.key(3), {"GRR": lambda eps, d: ul.GRR(d, eps)}, eps=[1.0, 2.0], d=[4, 8], n=[200],
                   reps=2, p=uniform)
    assert sorted(calls) == [("GRR", 4, 200), ("GRR", 8, 200)]  # the eps points of one d: one batched call
    for r in res.rows():
        with jax.enable_x64(True):
            want = float(ul.theory.mse(ul.GRR(r["d"], r["eps"]), uniform(r["d"]), 200)) / r["d"]
        assert r["theory"] == pytest.approx(want, rel=1e-9)
    assert set(res.config["p"]) == {"4", "8"}
    with pytest.raises(ValueError, match=r"p\(4\)"):
        ul.study(jax.random.key(3), {"GRR": lambda eps, d: ul.GRR(d, eps)}, eps=[1.0], d=[4], n=[200], reps=2,
                 p=lambda d: np.full(d + 1, 1.0 / (d + 1)))


@pytest.mark.slow  # a study run
def test_a_saved_study_keeps_its_factories_and_reruns(small, tmp_path):
    small.save(tmp_path / "s")
    back = StudyResult.load(tmp_path / "s")
    src = back.config["factories"]["GRR"]
    assert "ul.GRR(D, eps)" in src["source"] and src["qualname"].endswith("<lambda>")
    again = ul.study(**back.study_arguments({"GRR": GRR, "OUE": OUE}))
    assert [(r["mechanism"], r["eps"], r["n"], r["method"], r["metric"], r["mean"]) for r in again.rows()] == [
        (r["mechanism"], r["eps"], r["n"], r["method"], r["metric"], r["mean"]) for r in small.rows()]
    more = ul.study(**back.study_arguments({"GRR": GRR, "OUE": OUE}, reps=4, methods="emp"))
    assert more.config["reps"] == 4 and {r["method"] for r in more.rows()} == {"emp"}
