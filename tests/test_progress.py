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


# --- progress="auto", simulate's default: a bar only where someone watches, and only for a call that lasts ---

import io  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

import uldp_jax as ul  # noqa: E402
from uldp_jax.engine import _plan  # noqa: E402


class _Tty(io.StringIO):
    def isatty(self):
        return True


class _KernelStream(io.StringIO):  # the class of Jupyter's (and Colab's) sys.stderr lives in ipykernel
    pass


_KernelStream.__module__ = "ipykernel.iostream"


def test_interactive_means_a_terminal_or_a_notebook():
    assert _progress.interactive(_Tty()) and _progress.interactive(_KernelStream())
    assert not _progress.interactive(io.StringIO())
    closed = _Tty()
    closed.isatty = None  # not callable: treated as not watched
    assert not _progress.interactive(closed)


def test_auto_follows_the_environment_switch_and_outer_bars(monkeypatch):
    monkeypatch.delenv(_progress.ENV_SWITCH, raising=False)
    assert _progress.auto_enabled(_Tty()) and not _progress.auto_enabled(io.StringIO())
    monkeypatch.setenv(_progress.ENV_SWITCH, "0")
    assert not _progress.auto_enabled(_Tty())
    monkeypatch.setenv(_progress.ENV_SWITCH, "on")
    assert _progress.auto_enabled(io.StringIO())
    with _progress.progress_bar(1, "outer", enabled=False):  # an experiment's bar (or --no-progress) owns stderr
        assert not _progress.auto_enabled(_Tty()) and not _progress.wanted("auto")
        with _progress.quiet_auto():
            assert not _progress.auto_enabled(_Tty())
    assert _progress.auto_enabled(_Tty()) and _progress.wanted("auto")
    assert _progress.wanted(True) and not _progress.wanted(False) and not _progress.wanted(None)
    with pytest.raises(TypeError, match="progress='loud'"):
        _progress.wanted("loud")


def test_delayed_lines_say_nothing_for_a_short_call():
    stream = io.StringIO()
    bar = _progress.StderrProgress(4, "simulate", stream=stream, delay=60.0)
    bar.update(4)
    assert stream.getvalue() == ""
    bar = _progress.StderrProgress(4, "simulate", stream=stream, delay=0.0)
    bar.update(4)
    assert stream.getvalue().startswith("simulate: 4/4 reps (")


P = np.array([0.4, 0.1, 0.2, 0.2, 0.1])
KW = dict(p=P, n=500, reps=4, path="per_user", block_size=128)


def test_simulate_default_is_silent_under_capture(capsys, monkeypatch):
    monkeypatch.delenv(_progress.ENV_SWITCH, raising=False)
    monkeypatch.setattr(_progress, "AUTO_DELAY", 0.0)
    plan = _plan.make_plan(jax.random.key(0), ul.GRR(5, 1.0), **KW)  # "auto" not wanted: one host call
    assert plan.rep_chunk == 4
    ul.simulate_stats(jax.random.key(0), ul.GRR(5, 1.0), **KW)
    assert capsys.readouterr().err == ""  # pytest's captured stderr is not a terminal


def test_simulate_default_reports_when_switched_on_with_the_same_results(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # plain stderr lines, easy to read back
    monkeypatch.setattr(_progress, "AUTO_DELAY", 0.0)
    off = np.asarray(ul.simulate_stats(jax.random.key(0), ul.GRR(5, 1.0), progress=False, **KW)[0])
    monkeypatch.setenv(_progress.ENV_SWITCH, "1")
    assert _plan.make_plan(jax.random.key(0), ul.GRR(5, 1.0), **{**KW, "progress": "auto"}).rep_chunk == 1
    auto = np.asarray(ul.simulate_stats(jax.random.key(0), ul.GRR(5, 1.0), **KW)[0])
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in err] == [f"simulate: {k}/4 reps" for k in range(1, 5)]
    np.testing.assert_array_equal(auto, off)  # chunking for the bar never changes the results


def test_cli_no_progress_silences_the_automatic_bars(monkeypatch, tmp_path):
    from uldp_jax import cli, experiments

    seen = []
    monkeypatch.setenv(_progress.ENV_SWITCH, "1")
    monkeypatch.setattr(experiments, "run_experiment", lambda name, **kw: seen.append((kw["progress"],
                                                                                     _progress.auto_enabled())))
    assert cli.main(["demo", "--quick", "--out", str(tmp_path)]) == 0
    assert cli.main(["demo", "--quick", "--no-progress", "--out", str(tmp_path)]) == 0
    assert seen == [(True, True), (False, False)] and _progress.auto_enabled()
