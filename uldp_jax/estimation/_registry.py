"""Registry of estimation methods, shared by ``estimate`` and ``simulate``.

A method is a pure function. ``input="stats"`` methods take ``(mech, stats, n, **options)`` where ``stats`` is
the mechanism's aggregate (``int32[num_stats]``) and return ``float[d]``; they vmap over repetitions.
``input="reports"`` methods take ``(mech, reports, **options)`` (e.g. EM on exact per-report likelihoods).
A method may also carry a ``resolver(mech) -> Method`` that picks the concrete form for a mechanism (e.g.
"em" works from stats for item-report mechanisms and from reports for bit-vector ones); ``get_method(name,
mech)`` applies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Method(NamedTuple):
    fn: Callable[..., Any]
    input: str  # "stats" or "reports"
    doc: str
    resolver: Callable[[Any], Method] | None = None  # per-mechanism concrete form (see get_method)


_METHODS: dict[str, Method] = {}


def register_method(name: str, fn: Callable[..., Any], input: str = "stats", doc: str = "",
                    resolver: Callable[[Any], Method] | None = None) -> None:
    """Adds (or replaces) an estimation method available to ``estimate`` and ``simulate``.

    ``resolver(mech)``, when given, returns the concrete ``Method`` (its ``fn`` and ``input``) to use for
    ``mech``; ``fn``/``input`` are then the defaults reported when no mechanism is known.
    """
    if input not in ("stats", "reports"):
        raise ValueError(f"Expected input={input!r} in ('stats', 'reports').")
    _METHODS[name] = Method(fn, input, doc, resolver)


def get_method(name: Any, mech: Any = None) -> Method:
    """The method registered as ``name``, resolved for ``mech`` when one is given."""
    if not isinstance(name, str) or name not in _METHODS:
        raise ValueError(f"Unknown estimation method={name!r}; known methods: {sorted(_METHODS)}.")
    m = _METHODS[name]
    if mech is not None and m.resolver is not None:
        return m.resolver(mech)
    return m


def method_names() -> tuple[str, ...]:
    return tuple(sorted(_METHODS))
