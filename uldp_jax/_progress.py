"""Progress reporting for long simulations and experiment runs; tqdm (a core dependency), else plain stderr lines.

``progress="auto"`` (``ul.simulate``'s default) shows a bar only where someone is watching and only for a call that
lasts: stderr is a terminal or a Jupyter/Colab kernel, and the call has run for ``AUTO_DELAY`` seconds (a shorter
call prints nothing). Tests (pytest captures stderr), scripts writing to a log and libraries embedding uldp_jax
are therefore not written to. The environment variable ``ULDP_PROGRESS`` switches it: ``0`` (or
``false``/``off``/``no``) never shows the automatic bar, ``1`` (or ``true``/``on``/``yes``) shows it on any stderr.
``progress=True``/``False`` in a call override both. Inside an experiment's own bar (``progress_bar``, used by
``uldp run``) an ``"auto"`` call reports as that bar's note, so bars never nest; under ``uldp run --no-progress``
it stays silent.

What a bar says: the run's size and ``compiling ...`` before the first unit of work returns (the first call
compiles its kernels), then done/total units with the time left at the rate so far; its elapsed time is redrawn
every ``REFRESH_S`` seconds (plain lines: every ``HEARTBEAT_S``). Where stderr is a terminal of width or height
0, not watched (a log file, a pipe), or tqdm is missing, it prints plain lines.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings
from typing import Any, TextIO

ENV_SWITCH = "ULDP_PROGRESS"
AUTO_DELAY = 3.0  # seconds a call runs before its automatic bar appears
REFRESH_S = 1.0  # a bar redraws its elapsed time this often, whether or not a unit has finished
HEARTBEAT_S = 15.0  # plain lines: one more line this often while no unit finishes (the first compile, say)
COMPILING = "compiling ..."  # the status until the first unit returns (its kernels are being compiled)
_OFF, _ON = ("0", "false", "off", "no"), ("1", "true", "on", "yes")
_QUIET = {"depth": 0}  # > 0 inside an outer bar or a --no-progress run: "auto" shows nothing of its own
_OUTER: list = []  # the experiment bars (``progress_bar``) open now, innermost last: inner calls report to it


class NullProgress:
    """Does nothing (``progress=False``)."""

    def update(self, k: int, note: str | None = None) -> None:
        pass

    def close(self) -> None:
        pass


class _Ticker:
    """Calls ``fn()`` every ``every`` seconds on a daemon thread until ``stop()`` (so elapsed time moves while a
    kernel compiles or runs)."""

    def __init__(self, every: float, fn):
        self._stop, self._fn, self._every = threading.Event(), fn, every
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self._fn()
            except Exception:  # a closed stream: stop drawing, never raise into the computation
                return

    def stop(self) -> None:
        self._stop.set()


def _eta(elapsed: float, done: int, total: int) -> str:
    """``", ~12 s left"`` from the rate so far (empty before the first unit and after the last)."""
    if done <= 0 or done >= total:
        return ""
    return f", ~{elapsed / done * (total - done):.0f} s left"


class StderrProgress:
    """Plain lines on ``stream``: ``desc: done/total unit (elapsed s, ~left s left[, note])``.

    The first line (printed when the bar starts, or after ``delay`` seconds) gives the run's ``size`` and says
    ``compiling ...``; a line follows every update, and every ``heartbeat`` seconds while none comes (default
    ``HEARTBEAT_S``; 0: none).
    """

    def __init__(self, total: int, desc: str, stream: TextIO | None = None, unit: str = "reps", delay: float = 0.0,
                 size: str | None = None, heartbeat: float | None = None):
        self.total, self.desc, self.done, self.unit, self.delay, self.size = total, desc, 0, unit, delay, size
        self.stream = sys.stderr if stream is None else stream
        self.start, self.last, self.status, self._lock = time.perf_counter(), None, COMPILING, threading.Lock()
        self._started = False
        if delay <= 0:
            self._begin()
        self.heartbeat = HEARTBEAT_S if heartbeat is None else heartbeat  # 0: no heartbeat lines
        self._ticker = _Ticker(min(self.heartbeat, REFRESH_S), self._heartbeat) if self.heartbeat else None

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _begin(self) -> None:
        self._started = True
        unit = self.unit[:-1] if self.total == 1 and self.unit.endswith("s") else self.unit
        size = f" {self.size}" if self.size else f" {self.total} {unit}"
        self._print(f"{self.desc}:{size}; {self.status}")
        self.last = time.perf_counter()

    def _line(self, note: str | None) -> str:
        elapsed = time.perf_counter() - self.start
        tail = f", {note}" if note else ""
        return (f"{self.desc}: {self.done}/{self.total} {self.unit} ({elapsed:.1f} s"
                f"{_eta(elapsed, self.done, self.total)}{tail})")

    def _heartbeat(self) -> None:
        with self._lock:
            now = time.perf_counter()
            if not self._started:
                if now - self.start >= self.delay:
                    self._begin()
            elif now - self.last >= self.heartbeat:
                self._print(self._line(self.status))
                self.last = now

    def update(self, k: int, note: str | None = None) -> None:
        with self._lock:
            self.done += k
            self.status = note or ""
            if not self._started and time.perf_counter() - self.start < self.delay:  # "auto": a short call
                return
            self._started = True
            self._print(self._line(note))
            self.last = time.perf_counter()

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()


class TqdmProgress:
    """A tqdm bar on stderr (``tqdm.auto``: a widget in notebooks when ipywidgets is there), redrawn every
    ``REFRESH_S`` seconds so its elapsed time moves; its postfix reads ``compiling ...`` (with the run's size)
    until the first unit returns, then tqdm's own rate and time left."""

    def __init__(self, total: int, desc: str, unit: str = "rep", delay: float = 0.0, size: str | None = None):
        with warnings.catch_warnings():  # in a notebook without ipywidgets tqdm.auto warns, then draws a text bar
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm

        first = f"{COMPILING} {size}" if size else COMPILING
        self.delay, self.start = delay, time.perf_counter()
        self.bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, delay=delay,
                        postfix=first)
        self._ticker = _Ticker(REFRESH_S, self._refresh)

    def _refresh(self) -> None:
        if time.perf_counter() - self.start >= self.delay:
            self.bar.refresh()

    def update(self, k: int, note: str | None = None) -> None:
        self.bar.set_postfix_str(note or "", refresh=False)
        self.bar.update(k)

    def close(self) -> None:
        self._ticker.stop()
        self.bar.close()


class _Nested:
    """A call inside an experiment's bar: its progress becomes that bar's note (``study 2/8 calls``), never a
    second bar."""

    def __init__(self, outer: Any, total: int, desc: str, unit: str):
        self.outer, self.total, self.desc, self.unit, self.done = outer, total, desc, unit, 0
        self.start = time.perf_counter()
        outer.note(f"{desc}: {COMPILING}")

    def update(self, k: int, note: str | None = None) -> None:
        self.done += k
        elapsed = time.perf_counter() - self.start
        self.outer.note(f"{self.desc} {self.done}/{self.total} {self.unit}{_eta(elapsed, self.done, self.total)}")

    def close(self) -> None:
        pass


def terminal_size(stream: Any = None) -> tuple[int, int] | None:
    """``(columns, rows)`` of the terminal behind ``stream`` (default ``sys.stderr``); ``None`` where it is not a
    terminal (a notebook, a file)."""
    stream = sys.stderr if stream is None else stream
    try:
        return tuple(os.get_terminal_size(stream.fileno()))
    except (AttributeError, OSError, ValueError, TypeError):  # no fileno (a notebook), or not a terminal
        return None


def sizeless_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` is a terminal of width or height 0 (some CI runners, ``script`` without a terminal,
    ``stty cols 0``), where tqdm draws nothing: such a terminal gets plain lines."""
    size = terminal_size(stream)
    return size is not None and min(size) == 0


def interactive(stream: Any = None) -> bool:
    """Whether ``stream`` (default ``sys.stderr``) is watched: a terminal, or a Jupyter/Colab kernel's stream."""
    stream = sys.stderr if stream is None else stream
    if type(stream).__module__.split(".")[0] == "ipykernel":
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, TypeError, ValueError):  # no isatty, or a closed stream
        return False


def auto_enabled(stream: Any = None) -> bool:
    """Whether ``progress="auto"`` shows a bar here: ``ULDP_PROGRESS``, then no outer bar, then ``interactive``."""
    env = os.environ.get(ENV_SWITCH, "").strip().lower()
    if env in _OFF or _QUIET["depth"] > 0:
        return False
    return env in _ON or interactive(stream)


def check(progress: Any) -> Any:
    """``progress`` if it is ``True``, ``False``, ``None``, ``"auto"`` or ``"stderr"``.

    Raises:
      TypeError: for any other value.
    """
    if progress is None or isinstance(progress, bool) or (isinstance(progress, str) and progress in ("auto", "stderr")):
        return progress
    raise TypeError(f"Expected progress={progress!r} to be True, False, 'auto' or 'stderr'.")


def wanted(progress: Any) -> bool:
    """Whether a call with ``progress`` may report (so the engine splits its repetitions into ~10 host calls)."""
    progress = check(progress)
    if progress == "auto":
        return auto_enabled()
    return bool(progress)


def _bar(total: int, desc: str, unit: str, delay: float, size: str | None) -> Any:
    """tqdm where someone watches and it can draw (a terminal with a size, or a notebook; tqdm importable), else
    plain lines (a log file gets a line an update and a heartbeat, not a redrawn bar every second)."""
    if sizeless_terminal() or not interactive():
        return StderrProgress(total, desc, unit=unit, delay=delay, size=size)
    try:
        return TqdmProgress(total, desc, unit=unit[:-1] if unit.endswith("s") else unit, delay=delay, size=size)
    except ImportError:
        return StderrProgress(total, desc, unit=unit, delay=delay, size=size)


def make_progress(progress: Any, total: int, desc: str = "simulate", unit: str = "reps",
                  size: str | None = None) -> Any:
    """``progress``: ``False`` (off), ``True`` (tqdm if importable, else stderr lines), ``"stderr"``, or ``"auto"``
    (as ``True`` after ``AUTO_DELAY`` seconds where ``auto_enabled()``; inside an experiment's bar, a note on
    that bar; else off). ``size`` describes the run (``"100 reps x 10^6 users"``) on the bar's first line.

    Raises:
      TypeError: for any other value.
    """
    progress = check(progress)
    if progress is False or progress is None:
        return NullProgress()
    if progress == "auto" and _OUTER:
        return _Nested(_OUTER[-1], total, desc, unit)
    if progress == "auto" and not auto_enabled():
        return NullProgress()
    if progress == "stderr":
        return StderrProgress(total, desc, unit=unit, size=size)
    return _bar(total, desc, unit, AUTO_DELAY if progress == "auto" else 0.0, size)


def run_size(reps: int, n: Any = None, grid: Any = None, path: str | None = None) -> str:
    """``"4 mechanisms x 100 reps x 1,000,000 users (counts path)"``: a run's size for a bar's first line."""
    parts = [f"{int(grid):,} mechanisms"] if grid and int(grid) > 1 else []
    parts.append(f"{int(reps):,} reps")
    try:
        parts.append(f"{int(n):,} users")
    except (TypeError, ValueError):  # no n (or not one number): the size says repetitions only
        pass
    return " x ".join(parts) + (f" ({path} path)" if path else "")


@contextlib.contextmanager
def quiet_auto():
    """Within this context ``progress="auto"`` shows nothing of its own (an outer bar owns stderr, or the user
    said no)."""
    _QUIET["depth"] += 1
    try:
        yield
    finally:
        _QUIET["depth"] -= 1


@contextlib.contextmanager
def progress_bar(total: int, desc: str, enabled: bool = True, unit: str = "step"):
    """Context manager yielding a bar with ``update(k=1, note=None)`` and ``note(text)``: tqdm, else stderr lines,
    else nothing.

    Used by the experiment runs (one step per dataset x mechanism, say) so that a long ``uldp run`` always shows
    where it is, with or without the ``[plot]`` extra. The ``ul.study`` and ``ul.simulate`` calls inside report
    their own units as this bar's note (``study 2/8 calls, ~40 s left``), so the bar moves between its steps.
    """
    if not enabled:
        bar: Any = NullProgress()
    elif sizeless_terminal() or not interactive():  # a log: lines, not a bar redrawn every second
        bar = StderrProgress(total, desc, unit=unit + "s")
    else:
        try:
            bar = TqdmProgress(total, desc, unit=unit)
        except ImportError:
            bar = StderrProgress(total, desc, unit=unit + "s")
    updater = _Updater(bar)
    if enabled:
        _OUTER.append(updater)
    try:
        with quiet_auto():  # the simulate calls inside report through this bar, not their own
            yield updater
    finally:
        if enabled:
            _OUTER.remove(updater)
        bar.close()


class _Updater:
    def __init__(self, bar: Any):
        self._bar = bar

    def update(self, k: int = 1, note: str | None = None) -> None:
        if isinstance(self._bar, NullProgress):
            return
        self._bar.update(k, note)

    def note(self, text: str) -> None:
        """Show ``text`` as the bar's status without counting a step (an inner call's progress)."""
        if isinstance(self._bar, TqdmProgress):
            self._bar.bar.set_postfix_str(text)
        elif isinstance(self._bar, StderrProgress):
            self._bar.status = text
