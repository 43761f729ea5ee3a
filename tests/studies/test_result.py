"""``StudyResult`` outputs (``uldp_jax/studies/_result.py``): CSV (csv module, pandas when installed),
save/load, plot, progress; bad inputs."""

import csv
import importlib.util
import json
import math

import jax
import numpy as np
import pytest

import uldp_jax as ul

D = 8
P = np.full(D, 1 / D)


@pytest.fixture(scope="module")
def res():
    return ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(D, eps), "uRR": lambda eps: ul.URR(D, (0, 1), eps),
                                        "OUE": lambda: ul.OUE(D, 1.0)},
                    eps=[1.0, 2.0], n=[500, 2000], reps=4, p=P, methods=("emp", "emp+thr"), metrics=("mse", "l1"))


@pytest.mark.slow
def test_csv_reads_back_with_the_csv_module(res, tmp_path):
    path = tmp_path / "study.csv"
    res.to_csv(path)
    with open(path, newline="") as f:
        back = list(csv.DictReader(f))
    rows = res.rows()
    assert len(back) == len(rows) and list(back[0]) == res.columns
    for a, b in zip(rows, back):
        assert b["mechanism"] == a["mechanism"] and int(b["n"]) == a["n"] and b["metric"] == a["metric"]
        for k in ("mean", "se", "theory", "z", "compile_s", "run_s"):
            assert float(b[k]) == a[k] or (math.isnan(a[k]) and math.isnan(float(b[k])))  # repr round trip
        assert (b["eps"] == "") == (a["eps"] is None)


def test_pandas(res, tmp_path):
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ImportError, match="needs pandas"):
            res.to_pandas()
        return
    import pandas as pd

    path = tmp_path / "study.csv"
    res.to_csv(path)
    df = pd.read_csv(path)
    assert list(df.columns) == res.columns and len(df) == len(res)
    np.testing.assert_array_equal(df["mean"].to_numpy(), [r["mean"] for r in res.rows()])
    assert list(res.to_pandas().columns) == res.columns


def test_save_load_round_trip(res, tmp_path):
    res.save(tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["uldp_jax_version"] == ul.__version__ and doc["config"]["grids"] == {"eps": [1.0, 2.0]}
    back = ul.StudyResult.load(tmp_path / "s")
    assert back.version == ul.__version__ and back.config == res.config and back.timing == res.timing
    np.testing.assert_array_equal(back.values, res.values)
    for a, b in zip(res.rows(), back.rows()):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k]))
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="saved StudyResult"):
        ul.StudyResult.load(tmp_path / "bad.json")


def test_plot(res, tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        with pytest.raises(ImportError, match="needs matplotlib"):
            res.plot()
        return
    import matplotlib

    matplotlib.use("Agg")
    fig = res.plot("mse")
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="metric"):
        res.plot("tv")


def test_progress_lines(capsys):
    ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(D, eps)}, eps=[1.0], n=[100, 200], reps=2, p=P,
             progress="stderr")
    err = capsys.readouterr().err
    assert "study: 1/2 calls" in err and "study: 2/2 calls" in err


GOOD = dict(eps=[1.0], n=[100], reps=2, p=P)
FAC = {"GRR": lambda eps: ul.GRR(D, eps)}


@pytest.mark.parametrize("kw, err, match", [
    (dict(mechanisms=[]), TypeError, "mechanisms"),
    (dict(mechanisms={"GRR": 3}), TypeError, "mechanisms\\['GRR'\\]"),
    (dict(mechanisms={"GRR": lambda eps, theta: ul.GRR(D, eps)}), ValueError, "theta"),
    (dict(mechanisms={"GRR": lambda eps: "x"}), TypeError, "return a mechanism"),
    (dict(mechanisms={"GRR": lambda eps: ul.GRR(D + 1, eps)}), ValueError, "d=8"),
    (dict(mechanisms={"GRR": lambda eps: ul.GRR(D, -eps)}), ValueError, "mechanisms\\['GRR'\\]"),
    (dict(eps="big"), TypeError, "eps"),
    (dict(eps=[1.0, 1.0]), ValueError, "distinct"),
    (dict(eps=[]), ValueError, "eps"),
    (dict(eps=[float("nan")]), ValueError, "finite"),
    (dict(theta=[0.1]), ValueError, "theta"),
    (dict(n=0), ValueError, "n=0"),
    (dict(n=[1.5]), TypeError, "n="),
    (dict(reps=0), ValueError, "reps=0"),
    (dict(reps=2.0), TypeError, "reps"),
    (dict(methods=("nope",)), ValueError, "methods"),
    (dict(methods=3), TypeError, "methods"),
    (dict(metrics=("rmse",)), ValueError, "rmse"),
    (dict(metrics=(lambda e, t: e,)), ValueError, "needs a name"),
    (dict(metrics={"bad": lambda e, t: e}), ValueError, "one value per estimate"),
    (dict(sample="bootstrap"), ValueError, "sample"),
    (dict(sample="population"), ValueError, "xs"),
    (dict(p=[0.5, 0.6]), ValueError, "p"),
    (dict(progress="yes"), TypeError, "progress"),
    (dict(simulate_options={"reps": 3}), ValueError, "simulate_options"),
    (dict(simulate_options={"path": "fast"}), ValueError, "path"),
    (dict(key=None), TypeError, "key"),
    (dict(p=None, xs=np.arange(D), n=[100]), ValueError, "n"),
    (dict(p=None, xs=np.arange(D), sample="population", n=[100]), ValueError, "n <= len\\(xs\\)"),
    (dict(p=None, xs=np.arange(D) + 1), ValueError, "xs"),
    (dict(p=None, xs=np.array([0.5])), TypeError, "xs"),
])
def test_bad_inputs(kw, err, match):
    args = dict(GOOD)
    key = kw.pop("key", jax.random.key(0)) if "key" in kw else jax.random.key(0)
    mechs = kw.pop("mechanisms", FAC)
    args.update(kw)
    args = {k: v for k, v in args.items() if v is not None or k in ("p",)}
    if args.get("xs") is not None and "n" not in kw:
        args.pop("n", None)
    with pytest.raises(err, match=match):
        ul.study(key, mechs, **args)
