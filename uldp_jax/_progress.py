"""Progress reporting for long simulations and experiment runs; tqdm (a core dependency), else plain stderr lines."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any


class NullProgress:
    """Does nothing (``progress=False``)."""

    def update(self, k: int) -> None:
        pass

    def close(self) -> None:
        pass


class StderrProgress:
    """One line per update on ``stream``: ``desc: done/total unit (elapsed s)[, note]``."""

    def __init__(self, total: int, desc: str, stream: Any = None, unit: str = "reps"):
        self.total, self.desc, self.done, self.unit = total, desc, 0, unit
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()

    def update(self, k: int, note: str | None = None) -> None:
        self.done += k
        elapsed = time.perf_counter() - self.start
        tail = f", {note}" if note else ""
        print(f"{self.desc}: {self.done}/{self.total} {self.unit} ({elapsed:.1f} s{tail})", file=self.stream,
              flush=True)

    def close(self) -> None:
        pass


class TqdmProgress:
    """A tqdm bar on stderr (``tqdm.auto``: a widget in notebooks when ipywidgets is there)."""

    def __init__(self, total: int, desc: str, unit: str = "rep"):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True)

    def update(self, k: int, note: str | None = None) -> None:
        if note:
            self.bar.set_postfix_str(note, refresh=False)
        self.bar.update(k)

    def close(self) -> None:
        self.bar.close()


def make_progress(progress: Any, total: int, desc: str = "simulate") -> Any:
    """``progress``: ``False`` (off), ``True`` (tqdm if importable, else stderr lines), or ``"stderr"``.

    Raises:
      TypeError: for any other value.
    """
    if progress is False or progress is None:
        return NullProgress()
    if progress == "stderr":
        return StderrProgress(total, desc)
    if progress is True:
        try:
            return TqdmProgress(total, desc)
        except ImportError:
            return StderrProgress(total, desc)
    raise TypeError(f"Expected progress={progress!r} to be True, False or 'stderr'.")


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
