"""The field table (issue 49 item 4): it covers every registered frequency oracle, and its simulated per-item n MSE
agrees with its closed form within standard errors (the budgeted check of ``uldp_jax.testing``)."""

import csv
import json
import os

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import experiments, testing
from uldp_jax.experiments import _field_table as ft
from uldp_jax.mechanisms.core import _registry


def test_every_registered_constructor_has_a_row_or_a_reason():
    tables = (set(ft.LDP_ORACLES), set(ft.ULDP_ORACLES), set(ft.NOT_IN_TABLE))
    assert not any(a & b for i, a in enumerate(tables) for b in tables[i + 1:])
    assert set(_registry.constructors()) == set.union(*tables)
    for label, (make, _) in ft.LDP_ORACLES.items():  # each row is the registered constructor of its label
        assert type(make(16, 1.0)) is type(getattr(ul, label)(16, 1.0)), label
        assert make(16, 1.0).privacy_spec().kind == "ldp", label
    for label, (make, _) in ft.ULDP_ORACLES.items():
        assert type(make(16, (0, 1, 2), 1.0)) is type(getattr(ul, label)(16, (0, 1, 2), 1.0)), label


def _run(tmp_path, **overrides):
    out = experiments.run_experiment("field-table", quick=True, out=str(tmp_path), progress=False, echo=None,
                                     overrides=overrides)
    with open(out["csv"]) as fh:
        return out, list(csv.DictReader(fh))


def _rows(tmp_path, **overrides):
    return _run(tmp_path, **overrides)[1]


def _check_against_closed_form(rows):
    theory = {(r["mechanism"], r["distribution"], r["d"], r["eps"], r["ratio"]): float(r["value"])
              for r in rows if r["method"] == "theory"}
    emp = [r for r in rows if r["method"] == "emp"]
    assert emp and len(emp) == len(theory)
    obs = np.array([float(r["value"]) for r in emp])
    want = np.array([theory[(r["mechanism"], r["distribution"], r["d"], r["eps"], r["ratio"])] for r in emp])
    se = np.array([float(r["se"]) for r in emp])
    assert (se > 0).all()
    assert testing.within_se(obs, want, se, dof=int(emp[0]["reps"]) - 1)
    return theory


# The simulated column's check runs on one oracle per route through the table (LDP and ULDP groups, k or g derived
# from eps: SS, RWS, OLH, USS; RWS's seed bits; high-low LDP's guarantee), not on all 26: for every library
# mechanism, that its sampler draws its channel, that the mean of "emp" is its exact expectation and that its closed
# form is its channel's exact risk are tests/test_conformance.py's checks (the iid term on top of the fixed model's
# is tests/mechanisms/core/test_pure_uldp.py's); what is checked here is the experiment's wiring (the same
# mechanism, p, n and model behind both columns), at a seventh of the compiles.
SIMULATED = ["GRR", "OLH", "SS", "RWS", "URR", "USS", "HighLowHR"]


@pytest.mark.slow
def test_quick_table_covers_every_oracle(tmp_path):
    """``uldp run field-table --quick`` on every oracle, closed forms, bits and decode times only (``sim_max_d``
    below d): its outputs (as tests/experiments/test_quick_experiments.py checks every other experiment's) and its
    numbers."""
    out, rows = _run(tmp_path, sim_max_d=2)
    assert out["figures"] and all(os.path.getsize(f) > 1000 for f in out["figures"])
    with open(os.path.join(out["folder"], "run_config.json")) as fh:
        meta = json.load(fh)
    assert meta["config"] and meta["versions"]["uldp_jax"] and meta["experiment"] == "field-table"
    assert os.path.exists(os.path.join(out["folder"], "summary.md"))
    assert not open(out["csv"]).read().startswith("#")
    assert all(np.isfinite(float(r["value"])) and float(r["se"]) >= 0 for r in rows)
    assert {r["mechanism"] for r in rows} == set(ft.LDP_ORACLES) | set(ft.ULDP_ORACLES)
    assert {r["method"] for r in rows} == {"theory"}  # d = 16 > sim_max_d: nothing simulated
    assert len(rows) == 2 * (len(ft.LDP_ORACLES) + len(ft.ULDP_ORACLES))  # each oracle at both quick eps
    for r in rows:
        assert float(r["decode_s"]) > 0 and int(r["decode_n"]) >= 100
        if r["mechanism"] == "RWS":
            assert float(r["bits"]) == 4 + 32  # ceil(log2 16) + the seed
        if r["group"] == "ULDP":
            assert r["guarantee"] in ("uldp", "hlldp") and int(r["s"]) == ft.sensitive_size(16, 0.5) == 8
        if r["group"] == "LDP":  # ul.theory's closed form; RWS's is SS's
            p, eps = ft._dist(r["distribution"], 16), float(r["eps"])
            mech = ul.SS(16, eps) if r["mechanism"] == "RWS" else ft.LDP_ORACLES[r["mechanism"]][0](16, eps)
            np.testing.assert_allclose(float(r["value"]), ft.closed_form(mech, p, int(r["n"])), rtol=1e-5)


@pytest.mark.slow
def test_quick_simulated_column_matches_the_closed_form(tmp_path):
    rows = _rows(tmp_path, mechanisms=SIMULATED)
    assert {r["mechanism"] for r in rows if r["method"] == "emp"} == set(SIMULATED)
    _check_against_closed_form(rows)


def test_settings_pick_the_mechanisms_and_sizes(tmp_path):
    rows = _rows(tmp_path, mechanisms=["GRR", "URR"], eps=[1.0], n=200, reps=2, time_n=100)
    assert {(r["mechanism"], r["group"]) for r in rows} == {("GRR", "LDP"), ("URR", "ULDP")}
    assert {float(r["eps"]) for r in rows} == {1.0} and {int(r["n"]) for r in rows} == {200}
    assert {r["reps"] for r in rows if r["method"] == "emp"} == {"2"}


def test_bad_settings_are_refused():
    exp = experiments.get_experiment("field-table")
    with pytest.raises(experiments.UsageError, match="mechanisms"):
        experiments._runner.parse_set(exp, ["mechanisms=GRR,NOPE"])
    with pytest.raises(experiments.UsageError, match="ratios"):
        experiments._runner.parse_set(exp, ["ratios=0.5,1.5"])
