"""Registry of estimation methods, shared by ``estimate`` and ``simulate``.

A method is a pure function. ``input="stats"`` methods take ``(mech, stats, n, **options)`` where ``stats`` is
the mechanism's aggregate (``int32[num_stats]``) and return ``float[d]``; they vmap over repetitions.
``input="reports"`` methods take ``(mech, reports, **options)`` (e.g. EM on exact per-report likelihoods).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple


class Method(NamedTuple):
    fn: Callable[..., Any]
    input: str  # "stats" or "reports"
    doc: str


_METHODS: dict[str, Method] = {}


def register_method(name: str, fn: Callable[..., Any], input: str = "stats", doc: str = "") -> None:
    """Adds (or replaces) an estimation method available to ``estimate`` and ``simulate``."""
    if input not in ("stats", "reports"):
        raise ValueError(f"Expected input={input!r} in ('stats', 'reports').")
    _METHODS[name] = Method(fn, input, doc)


def get_method(name: Any) -> Method:
    if not isinstance(name, str) or name not in _METHODS:
        raise ValueError(f"Unknown estimation method={name!r}; known methods: {sorted(_METHODS)}.")
    return _METHODS[name]


def method_names() -> tuple[str, ...]:
    return tuple(sorted(_METHODS))
