"""Progress reporting for long simulations (per chunk of repetitions); tqdm when installed, else stderr."""

from __future__ import annotations

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
    """One line per update on ``stream``: ``desc: done/total reps (elapsed s)``."""

    def __init__(self, total: int, desc: str, stream: Any = None):
        self.total, self.desc, self.done = total, desc, 0
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()

    def update(self, k: int) -> None:
        self.done += k
        elapsed = time.perf_counter() - self.start
        print(f"{self.desc}: {self.done}/{self.total} reps ({elapsed:.1f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        pass


class TqdmProgress:
    def __init__(self, total: int, desc: str):
        import tqdm

        self.bar = tqdm.tqdm(total=total, desc=desc, unit="rep")

    def update(self, k: int) -> None:
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
