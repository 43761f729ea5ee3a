"""README's "Monte Carlo studies" block runs as written (issue 20, item 6), within 15 lines."""

import pathlib
import re

import numpy as np
import pytest

import uldp_jax as ul

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.slow
def test_readme_study_block_runs(tmp_path, monkeypatch, capsys):
    text = README.read_text()
    section = text[text.index("## Monte Carlo studies"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 15, "README's worked study must stay within 15 lines"
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    exec(compile(code, str(README), "exec", dont_inherit=True), ns)  # noqa: S102  (our README)
    res = ns["res"]
    assert len(res) == 2 * 4 * 2 * 2 * 2 and len(capsys.readouterr().out.splitlines()) == 4
    assert (tmp_path / "study.csv").exists() and (tmp_path / "study.json").exists()
    back = ul.StudyResult.load(tmp_path / "study")
    np.testing.assert_array_equal(back.values, res.values)
