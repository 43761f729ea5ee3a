"""The committed results agree with experiments/README.md: every results folder is listed with the size label its
run_config.json carries ("full" only at the paper's n, repetitions and grid, else "reduced" with every deviation
listed), and every CSV carries standard errors, every experiment a PNG and NOTES.md."""

import csv
import glob
import json
import os
import re

import pytest

from uldp_jax import experiments

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "experiments")
# CSVs without a standard-error column, and why (README says the same).
NO_SE = {"001-em-timing": "running times, one measurement per cell"}


def _folders():
    paths = glob.glob(os.path.join(ROOT, "*", "results.csv")) + glob.glob(os.path.join(ROOT, "*", "*", "results.csv"))
    return sorted(os.path.relpath(os.path.dirname(p), ROOT) for p in paths)


def _header(folder):
    """(run_config.json with values as JSON text, the CSV's columns)."""
    with open(os.path.join(ROOT, folder, "run_config.json")) as fh:
        head = {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in json.load(fh).items()}
    with open(os.path.join(ROOT, folder, "results.csv"), newline="") as fh:
        cols = next(csv.reader(fh))
    return head, cols


def _readme_labels():
    text = open(os.path.join(ROOT, "README.md")).read()
    out = {}
    for m in re.finditer(r"^\| `([^`]+)` \|.*?\| \*\*(full|reduced)\*\* \|", text, re.M):
        out[m.group(1)] = m.group(2)
    return out


def test_readme_lists_every_results_folder_with_its_csv_label():
    labels = _readme_labels()
    folders = _folders()
    assert sorted(labels) == folders
    for folder in folders:
        head, _ = _header(folder)
        assert labels[folder] == head["mode"], folder


@pytest.mark.parametrize("folder", _folders())
def test_label_is_full_only_without_deviations(folder):
    head, cols = _header(folder)
    assert head["mode"] in ("full", "reduced"), folder
    devs = json.loads(head["deviations"])
    assert (head["mode"] == "full") == (not devs), (folder, devs)
    top = folder.split("/")[0]
    if head["mode"] == "full" and top == folder:  # a full run is the registered full config, which is the paper's
        exp = experiments.get_experiment(head["experiment"])
        mode, _ = experiments._runner.run_size(exp, json.loads(head["config"]))
        assert mode == "full", folder
    if folder not in NO_SE:
        assert any(c == "se" or c.endswith("_se") for c in cols), f"{folder}: no standard-error column"


@pytest.mark.parametrize("name", sorted({f.split("/")[0] for f in _folders()}))
def test_every_experiment_has_png_and_notes(name):
    assert glob.glob(os.path.join(ROOT, name, "*.png")), name
    assert os.path.exists(os.path.join(ROOT, name, "NOTES.md")), name
    notes = open(os.path.join(ROOT, name, "NOTES.md")).read()
    assert re.search(r"sampling model", notes, re.I), f"{name}: NOTES.md does not state its sampling model"


def test_every_registered_experiment_has_committed_results():
    folders = {f.split("/")[0] for f in _folders()}
    twins = {"003-fig8": "003-sims", "003-fig9": "003-sims", "003-fig9-ndcg": "003-sims"}  # one simulation
    for name in experiments.experiment_names():
        assert twins.get(name, name) in folders, name


_001_SAMPLED = ("001-fig5", "001-fig6", "001-fig7", "001-fig10", "001-fig11", "001-fig12", "demo")


@pytest.mark.parametrize("folder", [f for f in _folders() if f.split("/")[0] in _001_SAMPLED])
def test_001_runs_state_their_sampling_model(folder):
    """001 Figs 5-7/10-12 and the demo: the config names the sampling model; a run under the iid model (not 001's)
    lists it as a deviation, and summary.md and NOTES.md name the model too."""
    head, cols = _header(folder)
    sample = json.loads(head["config"]).get("sample")
    assert sample in ("population", "iid"), folder
    devs = json.loads(head["deviations"])
    assert (sample == "iid") == any(d.startswith("sample: iid") for d in devs), (folder, devs)
    summary = open(os.path.join(ROOT, folder, "summary.md")).read()
    assert re.search(r"sampling model: " + ("population" if sample == "population" else "iid"), summary, re.I), folder
    notes = open(os.path.join(ROOT, folder.split("/")[0], "NOTES.md")).read()
    assert "population" in notes and "iid" in notes, folder


@pytest.mark.parametrize("folder", _folders())
def test_best_claims_in_summaries_are_tests(folder):
    """Issue 23: every "best" line of a committed summary.md is a test at a stated level, an exact comparison, or
    says it is untested (one repetition) or has nothing to compare."""
    text = open(os.path.join(ROOT, folder, "summary.md")).read()
    for line in text.splitlines():
        if line.startswith("- ") and re.search(r"\bbest\b", line):
            assert re.search(r"level|exact values|not tested|fewer than two", line), (folder, line)
