"""``ul.audit_sampler``'s host loop for plain Python callables: their reports (items, bit vectors, any hashable
value, or support vectors through ``support=``) turned into the counts of ``_audit_draws``, chunk by chunk."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from uldp_jax._audit_draws import AUTO_BITS, HOST_BATCH, MAX_BITS, MAX_CELLS, UNNAMED, Counts

class HostReports:
    """Turns a Python callable's reports into counts: items, bit vectors, hashable reports (a growing dictionary of
    report columns) or, with ``support``, support vectors. The first report fixes the form."""

    def __init__(self, fn: Callable, vectorized: bool, support: Callable | None, num_outputs: int | None,
                 events: str = "auto", protected: Callable | None = None, uldp: bool = False, d: int = 0):
        self.fn, self.vectorized, self.support, self.m, self.events = fn, vectorized, support, num_outputs, events
        self.protected, self.uldp, self.d = protected, uldp, d
        self.form: str | None = None
        self.index: dict[Any, int] = {}

    def reports(self, xs: np.ndarray) -> list[Any] | np.ndarray:
        if self.vectorized:
            return self.fn(xs)
        fn = self.fn
        return [fn(x) for x in xs.tolist()]  # the callable is the cost: nothing else runs per report

    def _decide(self, first: Any) -> str:
        if self.support is not None:
            return "support"
        if isinstance(first, tuple):  # (seed, value), (value, seed), ...: a report of several parts
            return "hashable"
        arr = np.asarray(first)
        if arr.ndim == 0 and arr.dtype.kind in "iub":
            return "items"
        if arr.ndim == 1 and arr.dtype.kind in "iub" and np.all((arr == 0) | (arr == 1)):
            fits = arr.size <= (MAX_BITS if self.events == "outputs" else AUTO_BITS)
            return "bits" if fits and self.events != "support" else "long-bits"
        if self.events == "support":
            raise ValueError("events='support' needs bit-vector reports or support= (which items a report supports).")
        return "hashable"

    @property
    def mode(self) -> str:
        return "support" if self.form in ("support", "long-bits") else "outputs"

    def counts(self, xs: np.ndarray, rows: np.ndarray, I: int) -> Any:
        ys = self.reports(xs)
        if self.form is None:
            self.form = self._decide(ys[0])
        if self.mode == "support":
            return self._support_counts(ys, xs, rows, I)
        if self.form == "items":
            cells = np.asarray(ys, np.int64)
        elif self.form == "bits":
            cells = (np.asarray(ys, np.int64) << np.arange(np.shape(ys)[1])).sum(axis=1)
        else:
            index = self.index
            cells = np.fromiter((index.setdefault(y, len(index)) for y in map(_hashable, ys)), np.int64, len(xs))
        if cells.size and (cells.min() < 0 or (self.m is not None and cells.max() >= self.m)):
            raise ValueError(f"the sampler returned a report outside its report space [0, {self.m}).")
        m = self.m if self.m is not None else (int(cells.max()) + 1 if cells.size else 1)
        if m > MAX_CELLS:
            raise ValueError(f"the sampler's report space has more than {MAX_CELLS} outputs; pass support= (which "
                             "items a report supports) to audit it with support events.")
        return np.bincount(rows * m + cells, minlength=I * m).reshape(I, m).astype(np.int64)


    def _support_counts(self, ys: Any, xs: np.ndarray, rows: np.ndarray, I: int) -> tuple:
        """The support form's counts (module docstring) of one chunk (``xs`` is ``repeat(inputs, b)``)."""
        if self.uldp and self.protected is None:
            raise ValueError(MISSING_PREDICATE)
        s = np.asarray(self.support(ys) if self.form == "support" else np.asarray(ys), bool)
        revealed = np.full(len(xs), -1, np.int64)
        if self.protected is not None:
            r = np.asarray(self.protected(ys))
            revealed = np.where(r, -1, UNNAMED) if r.dtype == bool else r.astype(np.int64)
        prot = revealed == -1
        s = s & prot[:, None]
        own = s[np.arange(len(xs)), xs]
        b = len(xs) // I
        other = (~own & prot).reshape(I, b, 1)
        own3 = own.reshape(I, b, 1)
        s = s.reshape(I, b, -1)
        d = self.d
        R = np.bincount(rows * (d + 1) + np.where((revealed >= 0) & (revealed < d), revealed, d),
                        weights=~prot, minlength=I * (d + 1)).reshape(I, d + 1).astype(np.int64)
        return ((own3 & s).sum(axis=1, dtype=np.int64), (other & s).sum(axis=1, dtype=np.int64),
                own3.sum(axis=(1, 2), dtype=np.int64), prot.reshape(I, b).sum(axis=1, dtype=np.int64), R)


MISSING_PREDICATE = ("a ULDP claim on reports that are not enumerable (support events): pass protected=, a callable "
                     "reports -> bool[n] (True for a protected report, Y_P) or int[n] (-1 for a protected report, "
                     "else the input an invertible report reveals: then invertibility is checked in full).")


def _hashable(y: Any) -> Any:
    return y if isinstance(y, (int, str, tuple, bytes)) else tuple(np.asarray(y).ravel().tolist())


def host_draws(rep: HostReports, inputs: np.ndarray, trials: int) -> Iterator[Counts]:
    """Yields counts of chunks of ``HOST_BATCH`` reports (``trials`` reports per input in all)."""
    I = len(inputs)
    per = max(1, HOST_BATCH // I)
    done = 0
    while done < trials:
        b = min(per, trials - done)
        xs = np.repeat(np.asarray(inputs, np.int64), b)
        rows = np.repeat(np.arange(I), b)
        yield Counts(rep.counts(xs, rows, I), b)
        done += b
