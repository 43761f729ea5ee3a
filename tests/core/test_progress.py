"""Progress is shown with or without tqdm: uldp_jax._progress.progress_bar (experiment runs) and make_progress."""

import sys

import pytest

from uldp_jax import _progress


def test_stderr_lines_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import tqdm.auto -> ImportError
    with _progress.progress_bar(3, "sweep") as bar:
        bar.update(1)
        bar.update(2, note="uRAP")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("sweep: 1/3 steps (") and err[1].startswith("sweep: 3/3 steps (")
    assert err[1].endswith(", uRAP)")
    assert isinstance(_progress.make_progress(True, 4), _progress.StderrProgress)


def test_tqdm_bar_and_off(capsys):
    with _progress.progress_bar(2, "sweep") as bar:
        bar.update(2, note="done")
    assert "sweep" in capsys.readouterr().err
    with _progress.progress_bar(2, "sweep", enabled=False) as bar:
        bar.update(2)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress"):
        _progress.make_progress("loud", 2)
