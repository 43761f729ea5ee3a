"""Progress reporting for long simulations and experiment runs; tqdm (a core dependency), else plain stderr lines.

``progress="auto"`` (``ul.simulate``'s default) shows a bar only where someone is watching and only for a call that
lasts: stderr is a terminal or a Jupyter/Colab kernel, and the call has run for ``AUTO_DELAY`` seconds (a shorter
call prints nothing). Tests (pytest captures stderr), scripts writing to a log and libraries embedding uldp_jax
are therefore not written to. The environment variable ``ULDP_PROGRESS`` switches it: ``0`` (or
``false``/``off``/``no``) never shows the automatic bar, ``1`` (or ``true``/``on``/``yes``) shows it on any stderr.
``progress=True``/``False`` in a call override both. Inside an experiment's own bar (``progress_bar``, used by
``uldp run``) or ``uldp run --no-progress``, ``"auto"`` stays silent, so bars never nest.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from typing import Any

ENV_SWITCH = "ULDP_PROGRESS"
AUTO_DELAY = 3.0  # seconds a call runs before its automatic bar appears
_OFF, _ON = ("0", "false", "off", "no"), ("1", "true", "on", "yes")
_QUIET = {"depth": 0}  # > 0 inside an outer bar or a --no-progress run: "auto" shows nothing


class NullProgress:
    """Does nothing (``progress=False``)."""

    def update(self, k: int) -> None:
        pass

    def close(self) -> None:
        pass


class StderrProgress:
    """One line per update on ``stream``: ``desc: done/total unit (elapsed s)[, note]``."""

    def __init__(self, total: int, desc: str, stream: Any = None, unit: str = "reps", delay: float = 0.0):
        self.total, self.desc, self.done, self.unit, self.delay = total, desc, 0, unit, delay
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()

    def update(self, k: int, note: str | None = None) -> None:
        self.done += k
        elapsed = time.perf_counter() - self.start
        if elapsed < self.delay:  # "auto": nothing for a short call
            return
        tail = f", {note}" if note else ""
        print(f"{self.desc}: {self.done}/{self.total} {self.unit} ({elapsed:.1f} s{tail})", file=self.stream,
              flush=True)

    def close(self) -> None:
        pass


class TqdmProgress:
    """A tqdm bar on stderr (``tqdm.auto``: a widget in notebooks when ipywidgets is there)."""

    def __init__(self, total: int, desc: str, unit: str = "rep", delay: float = 0.0):
        with warnings.catch_warnings():  # in a notebook without ipywidgets tqdm.auto warns, then draws a text bar
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, delay=delay)

    def update(self, k: int, note: str | None = None) -> None:
        if note:
            self.bar.set_postfix_str(note, refresh=False)
        self.bar.update(k)

    def close(self) -> None:
        self.bar.close()


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


def make_progress(progress: Any, total: int, desc: str = "simulate") -> Any:
    """``progress``: ``False`` (off), ``True`` (tqdm if importable, else stderr lines), ``"stderr"``, or ``"auto"``
    (as ``True`` after ``AUTO_DELAY`` seconds where ``auto_enabled()``, else off).

    Raises:
      TypeError: for any other value.
    """
    progress = check(progress)
    if progress is False or progress is None or (progress == "auto" and not auto_enabled()):
        return NullProgress()
    if progress == "stderr":
        return StderrProgress(total, desc)
    delay = AUTO_DELAY if progress == "auto" else 0.0
    try:
        return TqdmProgress(total, desc, delay=delay)
    except ImportError:
        return StderrProgress(total, desc, delay=delay)


@contextlib.contextmanager
def quiet_auto():
    """Within this context ``progress="auto"`` shows nothing (an outer bar owns stderr, or the user said no)."""
    _QUIET["depth"] += 1
    try:
        yield
    finally:
        _QUIET["depth"] -= 1


@contextlib.contextmanager
def progress_bar(total: int, desc: str, enabled: bool = True, unit: str = "step"):
    """Context manager yielding a bar with ``update(k=1, note=None)``: tqdm, else stderr lines, else nothing.

    Used by the experiment runs (one step per dataset x mechanism, say) so that a long ``uldp run`` always shows
    where it is, with or without the ``[plot]`` extra.
    """
    if not enabled:
        bar: Any = NullProgress()
    else:
        try:
            bar = TqdmProgress(total, desc, unit=unit)
        except ImportError:
            bar = StderrProgress(total, desc, unit=unit + "s")
    try:
        with quiet_auto():  # the simulate calls inside report through this bar, not their own
            yield _Updater(bar)
    finally:
        bar.close()


class _Updater:
    def __init__(self, bar: Any):
        self._bar = bar

    def update(self, k: int = 1, note: str | None = None) -> None:
        if isinstance(self._bar, NullProgress):
            return
        self._bar.update(k, note)
