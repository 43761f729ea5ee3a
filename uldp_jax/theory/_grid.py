"""Theory on ``jax.vmap``-built grids of mechanisms: every grid point gets exactly the value it gets alone.

A grid (``grid_shape(mech)`` non-empty) holds batched leaves, which neither the closed forms (written for one
mechanism, broadcasting ``eps`` against the item axis) nor the exact channel moments (one channel) can read
safely. ``per_point`` validates the grid (``mechanisms.core.validate_grid``: every point inside the documented
ranges, naming the bad index), evaluates the function on each point and stacks the results with the grid's
shape leading. An argument whose leading axes equal the grid's shape (``p float[*shape, d]``) is paired with
the points; any other argument is shared by every point.
"""

from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _grid_check, _reports


def grid_shape(mech: Any) -> tuple[int, ...]:
    """The grid's batch shape (``()`` for one mechanism or a non-mechanism)."""
    if not isinstance(mech, _base.Mechanism):
        return ()
    return _grid_check.grid_shape(mech)


def _pick(arg: Any, shape: tuple[int, ...], index: tuple[int, ...]) -> Any:
    if arg is None or isinstance(arg, (str, bytes)):
        return arg
    arr_shape = tuple(np.shape(arg))
    if len(arr_shape) > len(shape) and arr_shape[: len(shape)] == shape:
        return arg[index]
    return arg


def per_point(fn: Callable[..., Any], mech: Any, *args: Any, stack: Callable = jnp.stack, **kwargs: Any) -> Any:
    """``fn(point, *args, **kwargs)`` for every point of the grid ``mech``, stacked (grid shape leading).

    Args:
      fn: a function of one mechanism.
      mech: a grid of mechanisms (``grid_shape(mech)`` non-empty).
      *args: further arguments; one leading with the grid's shape is indexed per point (``p [*shape, d]``).
      stack: ``jnp.stack`` (JAX results) or ``np.stack`` (NumPy results).
      **kwargs: passed unchanged.
    """
    shape = grid_shape(mech)
    _grid_check.validate_grid(mech)
    outs = []
    for index, point in zip(np.ndindex(*shape), _reports.unbatch(mech)):
        outs.append(fn(point, *(_pick(a, shape, index) for a in args), **kwargs))
    if isinstance(outs[0], tuple):
        return tuple(None if outs[0][k] is None else _stack(stack, [o[k] for o in outs], shape)
                     for k in range(len(outs[0])))
    return _stack(stack, outs, shape)


def _stack(stack: Callable, outs: list, shape: tuple[int, ...]) -> Any:
    arr = stack([jnp.asarray(o) if stack is jnp.stack else np.asarray(o) for o in outs])
    return arr.reshape(shape + tuple(arr.shape[1:]))


__all__ = ["grid_shape", "per_point"]
