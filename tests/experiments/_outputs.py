"""Reading a quick experiment run's outputs, shared by the experiments' tests (tests/experiments/test_*.py): its plain
CSV rows and its ``run_config.json``."""

import csv
import json
import os

from uldp_jax import experiments


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
