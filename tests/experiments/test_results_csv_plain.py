"""Every committed results CSV is plain: pandas.read_csv(path) with no arguments reads it, header row first."""

import glob
import json
import os

import pandas as pd
import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "experiments")
CSVS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "**", "*.csv"), recursive=True))


def test_there_are_committed_results():
    assert len(CSVS) >= 30


@pytest.mark.parametrize("rel", CSVS)
def test_reads_with_no_arguments(rel):
    df = pd.read_csv(os.path.join(ROOT, rel))
    assert len(df) > 0 and not any(str(c).startswith("#") for c in df.columns), rel
    assert not df.iloc[:, 0].astype(str).str.startswith("#").any(), rel
    # the configuration and versions that used to head the CSV are in its sidecar
    side = os.path.join(ROOT, os.path.dirname(rel), "run_config.json")
    with open(side) as fh:
        meta = json.load(fh)
    assert {"experiment", "mode", "config", "versions"} <= set(meta), rel
