"""Validation of domain partitions (blocks of BSLDP)."""

from __future__ import annotations

import numbers
from typing import Any, Sequence


def check_partition(blocks: Any) -> tuple[tuple[tuple[int, ...], ...], int]:
    """Checks that ``blocks`` partitions ``[0, d)``; returns (blocks as sorted tuples, d)."""
    if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence) or len(blocks) == 0:
        raise ValueError(f"Expected blocks to be a non-empty sequence of index sequences, got {blocks!r}.")
    out, seen = [], set()
    for i, b in enumerate(blocks):
        if isinstance(b, (str, bytes)) or not hasattr(b, "__iter__"):
            raise TypeError(f"Expected blocks[{i}] to be a sequence of item indices, got {b!r}.")
        items = list(b)
        if not items:
            raise ValueError(f"Expected blocks[{i}] to be non-empty.")
        for v in items:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Expected blocks[{i}] to hold integers, got {v!r}.")
            if int(v) < 0:
                raise ValueError(f"Expected blocks[{i}] to hold non-negative items, got {v}.")
            if int(v) in seen:
                raise ValueError(f"Expected blocks to be disjoint; item {int(v)} appears twice.")
            seen.add(int(v))
        out.append(tuple(sorted(int(v) for v in items)))
    d = max(seen) + 1
    missing = sorted(set(range(d)) - seen)
    if missing:
        raise ValueError(f"Expected blocks to cover [0, {d}); missing items {missing[:10]}.")
    return tuple(out), d
