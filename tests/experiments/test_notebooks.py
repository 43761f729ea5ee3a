"""Every notebook in notebooks/ matches its generator, is committed with outputs from a labelled run (no machine
paths in them), links to Colab, and executes top to bottom with nbclient at reduced sizes (SMALL=1) on CPU with
the committed text outputs (numbers within tests/test_docs_outputs.py's tolerance); the install cell installs from
the repository without editing."""

import json
import os
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from tests.test_docs_outputs import differences, machine_paths

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NB_DIR = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(f for f in os.listdir(NB_DIR) if f.endswith(".ipynb"))
sys.path.insert(0, NB_DIR)
try:
    import make_notebooks
finally:
    sys.path.pop(0)


def _load(name):
    with open(os.path.join(NB_DIR, name)) as fh:
        return nbformat.read(fh, as_version=4)


def _sources(nb):
    return [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]


def test_notebooks_present_and_generated():
    assert set(NOTEBOOKS) == set(make_notebooks.NOTEBOOKS)
    assert {"quickstart.ipynb", "reproduce_001_fig5.ipynb", "tuning_optax.ipynb", "context_aware_hr.ipynb",
            "study.ipynb"} <= set(NOTEBOOKS)
    for name, cells in make_notebooks.NOTEBOOKS.items():
        want = _sources(make_notebooks.notebook(cells, name))
        assert _sources(_load(name)) == want, f"{name} is stale: run python notebooks/build.py {name}"
        first = [src for kind, src in want if kind == "code"][0]
        assert "ULDP_SOURCE" in first and "pip" in first and "jax[cuda12]" in first and "<owner>" not in first
        assert f"git+{make_notebooks.REPOSITORY}.git" in first
        assert f"[Open in Colab]({make_notebooks.COLAB}{name})" in want[0][1]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_with_outputs_from_a_labelled_run(name):
    nb = _load(name)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), f"{name}: run python notebooks/build.py"
    assert not any(o.get("output_type") == "error" for c in code for o in c.outputs), name
    assert sum(len(c.outputs) for c in code) >= len(code) - 1, name
    build = nb.metadata["uldp_build"]
    assert build["by"] == "notebooks/build.py" and build["mode"] in ("reduced (SMALL=1)", "full")
    printed = "".join(o.get("text", "") for o in code[0].outputs)
    assert "JAX devices:" in printed and "mode:" in printed
    assert not machine_paths(_text_outputs(nb)), f"{name}: a machine path in the committed outputs"


def _text_outputs(nb) -> str:
    """Every code cell's text output (stream text and text/plain results), in order."""
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "".join(out)


def test_install_cell_outside_a_checkout_installs_from_the_repository(tmp_path):
    """Outside a checkout (Colab), with uldp_jax not importable and no ULDP_SOURCE: the cell installs from the
    repository named in pyproject.toml, with no editing (pip is stubbed: the test installs nothing)."""
    cell = [src for kind, src in _sources(_load("quickstart.ipynb")) if kind == "code"][0]
    script = tmp_path / "cell.py"
    script.write_text("import importlib.util, subprocess, sys\n_real = importlib.util.find_spec\n"
                      "importlib.util.find_spec = lambda n, *a: None if n == 'uldp_jax' else _real(n, *a)\n"
                      "subprocess.check_call = lambda args, **kw: (print('PIP', args[-1]), sys.exit(0))\n" + cell)
    env = {k: v for k, v in os.environ.items() if k != "ULDP_SOURCE"}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "PIP uldp_jax[plot] @ git+https://github.com/uldp-jax/uldp_jax.git" in proc.stdout
    with open(os.path.join(ROOT, "pyproject.toml")) as fh:
        assert 'Repository = "https://github.com/uldp-jax/uldp_jax"' in fh.read()


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes_small(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SMALL", "1")
    monkeypatch.setenv("JAX_PLATFORMS", os.environ.get("JAX_PLATFORMS", "cpu"))
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setenv("ULDP_PROGRESS", "0")  # as notebooks/build.py runs them: results, not progress bars
    nb = nbformat.reads(json.dumps(make_notebooks.notebook(make_notebooks.NOTEBOOKS[name], name)), as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not any(o.get("output_type") == "error" for o in outs)
    assert "reduced (SMALL=1)" in "".join(o.get("text", "") for o in nb.cells[1].outputs)
    # the committed outputs are current: the same text, numbers within tolerance (run times skipped)
    diffs = differences(_text_outputs(_load(name)), _text_outputs(nb))
    assert not diffs, f"{name}: committed outputs differ from a rerun (python notebooks/build.py {name}):\n" + \
        "\n".join(diffs[:10])
