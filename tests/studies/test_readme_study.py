"""The studies page's block (docs/snippets/study.py) runs as written (issue 20, item 6), within 15 lines."""

import pathlib

import numpy as np
import pytest

import uldp_jax as ul

README = pathlib.Path(__file__).resolve().parents[2] / "docs" / "snippets" / "study.py"


@pytest.mark.slow
def test_readme_study_block_runs(tmp_path, monkeypatch, capsys):
    code = README.read_text()
    assert len(code.strip().splitlines()) <= 15, "README's worked study must stay within 15 lines"
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(code, str(README), "exec", dont_inherit=True), ns)  # noqa: S102  (our README)
    res = ns["res"]
    assert len(res) == 2 * 4 * 2 * 2 * 2 and len(capsys.readouterr().out.splitlines()) == 4
    assert (tmp_path / "study.csv").exists() and (tmp_path / "study.json").exists()
    back = ul.StudyResult.load(tmp_path / "study")
    np.testing.assert_array_equal(back.values, res.values)
