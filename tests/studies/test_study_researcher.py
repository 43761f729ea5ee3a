"""Issue 54 items 1, 6, 7, 8 and 9: methods per mechanism and per n, theory reasons instead of silent NaNs, one
unit per metric name, a paper plot, domain sweeps, study files that can be rerun."""

import inspect
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _family
from uldp_jax.engine import _engine as engine
from uldp_jax.studies import _run
from uldp_jax.studies._result import StudyResult
from tests.outside_mechanisms import Keep
from tests.test_report_pytrees import JBit
from tests.test_user_likelihoods import THE
from uldp_jax.mechanisms.core._reports import bits_table

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
def test_methods_as_a_callable_and_bad_tables():
    seen = []

    def methods(name, n):
        seen.append((name, n))
        return ("emp",) if n > 300 else ("emp", "emp+thr")

    res = ul.study(jax.random.key(1), {"GRR": GRR}, eps=[1.0], n=[300, 600], reps=2, p=P, methods=methods)
    assert {(r["n"], r["method"]) for r in res.rows()} == {(300, "emp"), (300, "emp+thr"), (600, "emp")}
    assert seen == [("GRR", 300), ("GRR", 600)]
    with pytest.raises(ValueError, match="one entry per mechanism"):
        ul.study(jax.random.key(1), {"GRR": GRR, "OUE": OUE}, eps=[1.0], n=[300], reps=2, p=P, methods={"GRR": "emp"})
    with pytest.raises(ValueError, match="one entry per n"):
        ul.study(jax.random.key(1), {"GRR": GRR}, eps=[1.0], n=[300, 600], reps=2, p=P, methods={"GRR": {300: "emp"}})
    with pytest.raises(ValueError, match="bogus"):
        ul.study(jax.random.key(1), {"GRR": GRR}, eps=[1.0], n=[300], reps=2, p=P, methods={"GRR": "bogus"})


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


class KeepNvar(Keep):
    """README's KeepRR with an instance- and p-dependent closed form (``Family.item_nvar``)."""

    def closed_form(self):
        def item_nvar(mech, p):
            k = mech.keep()
            q = (1 - k) / (mech.d - 1)
            f = q + (k - q) * p
            return f * (1 - f) / (k - q) ** 2

        return _family.Family("KeepNvar", None, None, None, ldp=True, item_nvar=item_nvar)


def test_a_users_closed_form_may_depend_on_p_and_the_instance():
    with jax.enable_x64(True):
        mine = float(ul.theory.mse(KeepNvar(D, 1.0), P, 1000))
        lib = float(ul.theory.mse(ul.GRR(D, 1.0), P, 1000))
    assert mine == pytest.approx(lib, rel=1e-9)
    with pytest.raises(TypeError, match="nmse and ul.tune need risk"):
        ul.theory.nmse(KeepNvar(D, 1.0), 0.0)


def test_theory_error_names_exact_mse_for_affine_mechanism():
    class Uneven(THE):  # "other" rates differ by input: the per-item estimator read off the channel is biased
        def channel_matrix(self):
            probs = np.where(np.eye(self.d, dtype=bool), 0.6, np.linspace(0.1, 0.3, self.d)[:, None])
            bits = bits_table(self.d)
            Q = np.prod(np.where(bits[None], probs[:, None, :], 1 - probs[:, None, :]), axis=-1)
            return Q, np.ones(2**self.d, bool)

    with pytest.raises(ValueError, match=r"ul.theory.exact_mse\(mech, p, n, affine='mechanism'\)"):
        with jax.enable_x64(True):
            ul.theory.mse(Uneven(4, 1.0), np.full(4, 0.25), 100)


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


def _synthetic(mechs, methods, grids, ns=(1000,)):
    rows = []
    others = [g for g in grids if g != "eps"]
    for i, m in enumerate(mechs):
        for n in ns:
            for vals in np.ndindex(*[len(grids[g]) for g in grids]):
                pt = {g: grids[g][j] for g, j in zip(grids, vals)}
                for k, meth in enumerate(methods):
                    mean = (1 + i) * (1 + k) * math.exp(-pt["eps"]) * (1 + sum(pt[g] for g in others)) / n
                    rows.append({"mechanism": m, **pt, "n": n, "sample": "iid", "method": meth, "metric": "mse_sum",
                                 "mean": mean, "se": 0.05 * mean, "theory": mean if meth == "emp" else math.nan,
                                 "z": 0.0, "reps": 30, "compile_s": 0.0, "run_s": 0.0})
    cfg = {"mechanisms": list(mechs), "grids": {g: list(v) for g, v in grids.items()}, "n": list(ns),
           "methods": list(methods), "metrics": {"mse_sum": "mse_sum"}}
    return StudyResult(rows, np.zeros((len(rows), 1)), cfg, {})


def test_plot_colour_is_mechanism_style_is_method_legend_outside():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    res = _synthetic(["GRR", "OUE", "OLH", "uRR", "uRAP", "HR"], ["emp", "em"], {"eps": [0.5, 1.0, 2.0, 4.0]},
                     ns=(10_000, 100_000))
    fig = res.plot()
    ax = fig.axes[0]
    data = [ln for ln in ax.lines if ln.get_linewidth() < 3]
    theory = [ln for ln in ax.lines if ln.get_linewidth() >= 3]
    assert len(data) == 12 and len(theory) == 6  # every series and every emp theory line drawn
    colours = {}
    for ln in data:
        colours.setdefault(matplotlib.colors.to_hex(ln.get_color()), set()).add(ln.get_linestyle())
    assert len(colours) == 6 and all(styles == {"-", "--"} for styles in colours.values())
    legend = fig.legends[0]
    fig.canvas.draw()
    box = legend.get_window_extent()
    assert box.x0 >= max(a.get_window_extent().x1 for a in fig.axes) - 1  # outside every panel
    labels = [t.get_text() for t in legend.get_texts()]
    assert "theory (emp)" in labels and "method: em" in labels and "GRR" in labels


def test_plot_draws_one_line_per_other_swept_value():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    res = _synthetic(["uRAP", "uRR"], ["emp"], {"eps": [0.5, 1.0, 2.0], "theta": [0.1, 0.5]})
    fig = res.plot()
    data = [ln for ln in fig.axes[0].lines if ln.get_linewidth() < 3]
    assert len(data) == 4  # 2 mechanisms x 2 theta values, never one line across theta
    for ln in data:
        assert len(ln.get_xdata()) == 3 and np.all(np.diff(ln.get_xdata()) > 0)
    with pytest.raises(ValueError, match="expected x in"):
        res.plot(x="bogus")
    assert len([ln for ln in res.plot(x="theta").axes[0].lines if ln.get_linewidth() < 3]) == 6
