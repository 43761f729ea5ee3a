"""Argument checks for the public closed forms of ``ul.theory`` (by the argument's documented meaning).

The closed forms are pure JAX functions used inside ``jit``/``vmap``/``grad`` by tuning; called with concrete
values from ``ul.theory`` they check their arguments first, so ``grr_nmse(-1.0, 6)`` or
``nonprivate_l2(p, -5)`` raise a ``ValueError`` naming the argument instead of returning a number. Traced
values pass unchecked. Names and ranges (element-wise for arrays):

* ``eps``: finite, in ``[EPS_MIN, EPS_MAX]`` (``ul._validate.check_eps``);
* ``n``: users, finite and ``> 0``; ``d``: domain size ``>= 2``; ``s``: sensitive items ``>= 1``;
* ``theta_n``: mass in ``[0, 1]``; ``alpha``: level in ``(0, 1)``;
* ``k >= 1``; ``g > 1``; ``l``, ``theta``: in ``(0, 1)``;
* ``p``: a distribution (last axis: finite, non-negative, summing to 1 within 1e-6); a scalar, or any ``p``
  of ``ue_nmse``/``uue_nmse``, is a keep-probability in ``(0, 1)``;
* ``p_star``, ``q_star``, ``z_star``, ``f``, ``z``: probabilities in ``[0, 1]`` (``None`` allowed).
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any, Callable

import numpy as np

from uldp_jax import _validate


def _array(name: str, value: Any) -> np.ndarray | None:
    if value is None or not _validate.is_concrete(value):
        return None
    if isinstance(value, (str, bytes)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"Expected {name}={value!r} to be a real number or array.")
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"Expected {name} to hold real numbers, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"Expected {name}={value!r} to be finite{_validate.bad_entry(name, arr, ~np.isfinite(arr))}.")
    return arr


def _range(lo: float, hi: float, lo_open: bool, hi_open: bool) -> Callable[[str, np.ndarray], None]:
    def check(name: str, arr: np.ndarray) -> None:
        bad = (arr <= lo if lo_open else arr < lo) | (arr >= hi if hi_open else arr > hi)
        if np.any(bad):
            left, right = "(" if lo_open else "[", ")" if hi_open else "]"
            raise ValueError(f"Expected {name}={arr[bad].ravel()[0]!r} in {left}{lo:g}, {hi:g}{right}"
                             f"{_validate.bad_entry(name, arr, bad)}.")
    return check


def _p(name: str, arr: np.ndarray) -> None:
    if arr.ndim == 0:
        _range(0.0, 1.0, True, True)(name, arr)
        return
    if np.any(arr < 0):
        raise ValueError(f"Expected {name} to be a distribution (non-negative), got {arr.min()!r}"
                         f"{_validate.bad_entry(name, arr, arr < 0)}.")
    sums = arr.sum(axis=-1)
    off = np.abs(sums - 1.0) > 1e-6
    if np.any(off):
        raise ValueError(f"Expected {name} to sum to 1, got {sums[off].ravel()[0]:.8g}"
                         f"{_validate.bad_entry(name + '.sum(-1)', sums, off)}.")


def _eps(name: str, arr: np.ndarray) -> None:
    _validate.check_eps(arr if arr.ndim else float(arr), name=name)


_INF = math.inf
CHECKS: dict[str, Callable[[str, np.ndarray], None]] = {
    "eps": _eps,
    "n": _range(0.0, _INF, True, False),
    "d": _range(2.0, _INF, False, False),
    "s": _range(1.0, _INF, False, False),
    "theta_n": _range(0.0, 1.0, False, False),
    "alpha": _range(0.0, 1.0, True, True),
    "k": _range(1.0, _INF, False, False),
    "g": _range(1.0, _INF, True, False),
    "l": _range(0.0, 1.0, True, True),
    "theta": _range(0.0, 1.0, True, True),
    "p": _p,
    "p_star": _range(0.0, 1.0, False, False),
    "q_star": _range(0.0, 1.0, False, False),
    "z_star": _range(0.0, 1.0, False, False),
    "f": _range(0.0, 1.0, False, False),
    "z": _range(0.0, 1.0, False, False),
}


def checked(fn: Callable, keep_p: bool = False) -> Callable:
    """``fn`` with its arguments checked by name (``CHECKS``) when concrete; same signature and docstring.

    ``keep_p``: ``p`` is a keep-probability (``ue_nmse``, ``uue_nmse``), element-wise in ``(0, 1)``.
    """
    sig = inspect.signature(fn)
    names = [name for name in sig.parameters if name in CHECKS]
    checks = dict(CHECKS, p=_range(0.0, 1.0, True, True)) if keep_p else CHECKS

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        for name in names:
            if name in bound.arguments:
                arr = _array(name, bound.arguments[name])
                if arr is not None:
                    checks[name](name, arr)
        return fn(*args, **kwargs)

    return wrapper
