"""The one list of the library's mechanisms: each family registers its constructors once, with a small example.

``register(constructor, example)`` runs in the family's ``__init__`` (``uldp_jax.pum`` registers PUM the same way):
``constructor`` is the public name itself (a ``Mechanism`` subclass such as ``GRR``, or a function that returns one
such as ``OUE`` or ``glutf``; it is exported under its ``__name__``), and ``example(eps)`` builds a small instance
(exact channels of a few hundred entries). Everything else reads this list:

* the exports: ``uldp_jax.mechanisms`` and ``uldp_jax`` bind every registered constructor and list it in
  ``__all__`` (``constructors()``), so ``ul.GRR`` and ``from uldp_jax.mechanisms import UE`` need no export line;
* the conformance suite's factories (tests/test_conformance.py), ``uldp list`` and the docs' mechanism page
  (docs/hooks.py) read ``examples()``.

A new library mechanism is one module, its test file and one ``register`` line in its family's ``__init__``. Type
checkers and IDEs do not run ``register``: the family's ``__init__`` imports the constructor as ``from ._grr import
GRR as GRR`` (PEP 484's explicit re-export), and ``uldp_jax`` and ``uldp_jax.mechanisms`` star-import every family
under ``typing.TYPE_CHECKING`` (tests/mechanisms/core/test_registry.py checks both against this list).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Entry(NamedTuple):
    """One registered constructor."""

    constructor: Callable[..., Any]  # the public name: a Mechanism subclass or a function returning a mechanism
    example: Callable[[Any], Any]  # example(eps): a small instance, for the conformance suite, docs and ``uldp list``


_ENTRIES: dict[str, Entry] = {}


def register(constructor: Callable[..., Any], example: Callable[[Any], Any]) -> None:
    """Registers the public constructor ``ul.<constructor.__name__>`` with ``example(eps)``, a small instance of it.

    Raises:
      TypeError: ``constructor`` or ``example`` is not callable.
      ValueError: a constructor of that name is registered already.
    """
    if not callable(constructor) or not isinstance(getattr(constructor, "__name__", None), str):
        raise TypeError(f"Expected constructor to be a mechanism class or function, got {constructor!r}.")
    if not callable(example):
        raise TypeError(f"Expected example to be a callable example(eps), got example={example!r}.")
    name = constructor.__name__
    if name in _ENTRIES:
        raise ValueError(f"Expected a new mechanism name, got {name!r} (registered twice).")
    _ENTRIES[name] = Entry(constructor, example)


def unregister(name: str) -> None:
    """Removes ``name`` from the registry (tests that register a throw-away mechanism clean up with it)."""
    if name not in _ENTRIES:
        raise ValueError(f"Expected a registered mechanism name, got name={name!r}.")
    del _ENTRIES[name]


def constructors() -> dict[str, Callable[..., Any]]:
    """``{name: constructor}`` for every registered constructor, in registration order: what the packages export."""
    return {name: entry.constructor for name, entry in _ENTRIES.items()}


def examples() -> dict[str, Callable[[Any], Any]]:
    """``{name: example(eps)}`` for every registered constructor, in registration order."""
    return {name: entry.example for name, entry in _ENTRIES.items()}
