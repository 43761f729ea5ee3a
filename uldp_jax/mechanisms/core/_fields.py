"""Constructor checks every family shares: the domain size, the sensitive set and the budget, written once.

A mechanism's ``__post_init__`` calls ``check_domain(self)`` (``d`` and ``eps``; ``sensitive=True`` adds the
sensitive set) and then checks its own parameters; ``set_fields`` normalises fields of the frozen dataclass.
Validation runs for user-built objects only (JAX rebuilds a mechanism without ``__init__``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _pytree


def set_fields(obj: Any, **values: Any) -> None:
    """Sets fields of a frozen mechanism (inside ``__post_init__``: normalised, checked values)."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


def check_domain(obj: Any, sensitive: bool = False, eps: bool = True) -> int:
    """Checks and normalises ``obj.d`` (an int in ``[2, D_MAX]``), ``obj.sensitive`` (with ``sensitive=True``: a
    sorted, non-empty index set of ``[0, d)``) and ``obj.eps`` (the library's eps range); returns ``d``."""
    d = _validate.check_int("d", obj.d, minimum=2, maximum=_validate.D_MAX)
    set_fields(obj, d=d)
    if sensitive:
        set_fields(obj, sensitive=_validate.check_index_set("sensitive", obj.sensitive, d))
    if eps:
        set_fields(obj, eps=_validate.check_eps(obj.eps))
    return d


def concrete_eps(eps: Any, param: str) -> float:
    """``eps`` as a float for a parameter's default (``param=None``), which needs a concrete scalar eps."""
    if not _validate.is_concrete(eps) or np.ndim(eps) != 0:
        raise ValueError(f"{param}=None needs a concrete scalar eps; pass {param} explicitly.")
    return float(eps)


class ULDPFields(_base.Mechanism, abstract=True):
    """The fields of a ULDP mechanism over ``d`` items with a sensitive set (uRR, uRAP, HighLowHR, the named GLUTF
    mechanisms), declared and checked once: subclasses add their own fields after these three.

    Attributes:
      d: domain size (static).
      sensitive: sorted tuple of the sensitive items ``X_S`` (static; a non-empty subset of ``[0, d)``).
      eps: privacy budget (leaf).
    """

    d: int = _pytree.static_field()
    sensitive: Any = _pytree.static_field()
    eps: Any

    def __post_init__(self):
        check_domain(self, sensitive=True)

    @property
    def s(self) -> int:
        """``|X_S|``, the number of sensitive items."""
        return len(self.sensitive)
