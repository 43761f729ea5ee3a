"""The library's mechanisms for the tests' factory tables, read from the registry (``mechanisms/core/_registry.py``)
and never restated: a new library mechanism reaches every table through its one ``register`` line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from uldp_jax.mechanisms.core import _registry


def distinct_examples() -> dict[str, Callable[[Any], Any]]:
    """``name -> example(eps)`` for every registered constructor, once per distinct mechanism: a constructor whose
    example builds the same instance as an earlier one (``SUE`` as ``RAPPOR``, ``glutf`` as ``GLUTF``) is left out."""
    out, seen = {}, set()
    for name, make in _registry.examples().items():
        if repr(make(1.0)) not in seen:
            seen.add(repr(make(1.0)))
            out[name] = make
    return out
