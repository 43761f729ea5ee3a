"""The one list of the library's mechanisms: each family registers its constructors once, with a small example.

``register(name, example)`` runs in the family's ``__init__``; ``example(eps)`` builds a small instance (exact
channels of a few hundred entries) that the conformance suite, the docs' mechanism page and ``uldp list`` use.
A new library mechanism is one module, its test file and one ``register`` line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_EXAMPLES: dict[str, Callable[[Any], Any]] = {}


def register(name: str, example: Callable[[Any], Any]) -> None:
    """Registers the public constructor ``ul.<name>`` with ``example(eps)``, a small instance of it."""
    if name in _EXAMPLES:
        raise ValueError(f"Expected a new mechanism name, got name={name!r} (registered twice).")
    _EXAMPLES[name] = example


def examples() -> dict[str, Callable[[Any], Any]]:
    """``{name: example(eps)}`` for every registered constructor, in registration order."""
    return dict(_EXAMPLES)
