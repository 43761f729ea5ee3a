"""Every notebook in notebooks/ runs top to bottom at small sizes (SMALL=1), and matches its generator."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NB_DIR = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(f for f in os.listdir(NB_DIR) if f.endswith(".ipynb"))


def _code(path: str) -> str:
    with open(path) as fh:
        nb = json.load(fh)
    assert nb["nbformat"] == 4
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert cells and "pip" in cells[0], "the first code cell installs the package"
    return "\n\n".join(cells)


def test_four_notebooks_present_and_generated():
    assert {"quickstart.ipynb", "reproduce_001_fig5.ipynb", "tuning_optax.ipynb",
            "context_aware_hr.ipynb"} <= set(NOTEBOOKS)
    sys.path.insert(0, NB_DIR)
    try:
        import make_notebooks
    finally:
        sys.path.pop(0)
    for name, cells in make_notebooks.NOTEBOOKS.items():
        with open(os.path.join(NB_DIR, name)) as fh:
            assert json.load(fh) == make_notebooks.notebook(cells), f"{name} is stale: run make_notebooks.py"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_small(name, tmp_path):
    script = tmp_path / "nb.py"
    script.write_text(_code(os.path.join(NB_DIR, name)))
    env = dict(os.environ, SMALL="1", MPLBACKEND="Agg", JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
