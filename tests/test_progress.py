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
    assert err[0] == "sweep: 3 steps; compiling ..."  # the size and the status before the first step returns
    assert err[1].startswith("sweep: 1/3 steps (") and ", ~" in err[1] and " s left" in err[1]
    assert err[2].startswith("sweep: 3/3 steps (") and err[2].endswith(", uRAP)")
    assert isinstance(_progress.make_progress(True, 4), _progress.StderrProgress)


def test_tqdm_bar_and_off(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "interactive", lambda stream=None: True)  # as in a terminal or a notebook
    with _progress.progress_bar(2, "sweep") as bar:
        assert isinstance(bar._bar, _progress.TqdmProgress)
        bar.update(2, note="done")
    assert "sweep" in capsys.readouterr().err
    monkeypatch.undo()
    with _progress.progress_bar(2, "sweep") as bar:  # pytest's captured stderr is a log: plain lines
        assert isinstance(bar._bar, _progress.StderrProgress)
        bar.update(2)
    assert capsys.readouterr().err.splitlines()[-1].startswith("sweep: 2/2 steps (")
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
    bar = _progress.StderrProgress(4, "simulate", stream=stream, delay=0.0, size="4 reps x 500 users")
    bar.update(4)
    assert stream.getvalue().splitlines()[0] == "simulate: 4 reps x 500 users; compiling ..."
    assert stream.getvalue().splitlines()[1].startswith("simulate: 4/4 reps (")


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
    assert err[0] == "simulate: 4 reps x 500 users (per_user path); compiling ..."
    assert [line.split(" (")[0] for line in err[1:]] == [f"simulate: {k}/4 reps" for k in range(1, 5)]
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


# --- what a watched bar says (issue 51, item 2): size and "compiling ..." first, elapsed time on a timer, plain
# lines on a terminal of width 0, the same in a notebook kernel, inner calls as the outer bar's note ---

import os  # noqa: E402
import pathlib  # noqa: E402
import select  # noqa: E402
import subprocess  # noqa: E402
import textwrap  # noqa: E402

PROGRESS_PY = pathlib.Path(_progress.__file__)
# The module alone (it imports nothing of uldp_jax), a fast timer, one bar left waiting with no update for 1.5 s.
SCRIPT = textwrap.dedent(f"""
    import importlib.util, time
    spec = importlib.util.spec_from_file_location("p", {str(PROGRESS_PY)!r})
    p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)
    p.REFRESH_S, p.HEARTBEAT_S = 0.2, 0.5
    bar = p.make_progress(True, 3, size="3 reps x 10 users")
    time.sleep(1.5)
    bar.update(1); time.sleep(0.3); bar.update(2); bar.close()
    print("END", flush=True)
""")


def _in_pty(cols: int, rows: int = 24) -> str:
    """SCRIPT's output with stdout and stderr on a pseudo-terminal ``cols`` wide and ``rows`` high."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdin=follower, stdout=follower, stderr=follower,
                            close_fds=True, env={**os.environ, "COLUMNS": str(cols)} if cols else
                            {k: v for k, v in os.environ.items() if k != "COLUMNS"})
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=30)
    os.close(leader)
    return out.decode(errors="replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_bar_in_a_terminal_moves_before_the_first_update():
    out = _in_pty(100)
    assert "END" in out
    before = out[:out.index("1/3")]
    assert "compiling ... 3 reps x 10 users" in before  # the status and the size, before any unit returned
    assert "00:01" in before  # the elapsed time was redrawn while no update came


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("cols, rows", [(0, 24), (100, 0)])  # tqdm draws nothing on either
def test_terminal_of_width_or_height_zero_gets_plain_lines(cols, rows):
    lines = [ln.strip() for ln in _in_pty(cols, rows).replace("\r", "\n").splitlines() if ln.strip()]
    assert lines[0] == "simulate: 3 reps x 10 users; compiling ..."
    assert any(ln.startswith("simulate: 0/3 reps (") and "compiling ..." in ln for ln in lines)  # a heartbeat
    assert any(ln.startswith("simulate: 1/3 reps (") and "s left" in ln for ln in lines)
    assert any(ln.startswith("simulate: 3/3 reps (") for ln in lines) and lines[-1] == "END"


def test_inner_calls_report_as_the_outer_bars_note(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # plain lines, easy to read back
    monkeypatch.setattr(_progress, "HEARTBEAT_S", 3600.0)
    with _progress.progress_bar(1, "001 Fig 5") as outer:
        inner = _progress.make_progress("auto", 4, desc="study", unit="calls")
        assert isinstance(inner, _progress._Nested)
        assert _progress._OUTER[-1]._bar.status == "study: compiling ..."
        inner.update(1)
        assert _progress._OUTER[-1]._bar.status.startswith("study 1/4 calls, ~")
        outer.update(1)
    assert not _progress._OUTER
    with _progress.progress_bar(1, "quiet", enabled=False):  # --no-progress: nothing, inner calls included
        assert isinstance(_progress.make_progress("auto", 4), _progress.NullProgress)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "001 Fig 5: 1 step; compiling ..." and err[1].startswith("001 Fig 5: 1/1 steps (")


def test_run_size_text():
    assert _progress.run_size(100, 10**6, 4, "counts") == "4 mechanisms x 100 reps x 1,000,000 users (counts path)"
    assert _progress.run_size(5, None, None) == "5 reps"


@pytest.mark.slow
def test_bar_in_a_notebook_kernel():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    code = SCRIPT + "\nprint('interactive:', p.interactive(), 'auto:', p.auto_enabled())\n"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = nb.cells[0].outputs
    err = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    out = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    assert "interactive: True auto: True" in out  # a kernel's stderr counts as watched
    assert "compiling ... 3 reps x 10 users" in err and "3/3" in err
