"""``jax.vmap``-built grids of mechanisms: their shape (``grid_shape``) and their validation (``validate_grid``).

A grid is built by JAX without ``__init__`` (``_pytree._register``'s unflatten), so none of its points ever ran
the constructor's checks; ``eps = -1, 0, 1e-9, 150, inf, NaN`` inside a grid would otherwise reach samplers,
audits and closed forms. ``validate_grid`` checks every point, naming the argument and the grid index.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate


def grid_shape(mech: Any) -> tuple[int, ...]:
    """Shape of a ``jax.vmap``-built grid of mechanisms (``()`` for one mechanism): the shape of its ``eps``
    (``()`` for a mechanism without an ``eps``, e.g. a fixed test channel)."""
    eps = getattr(mech, "eps", None)
    return () if eps is None else tuple(jnp.shape(eps))


def grid_shape_or_none(mech: Any) -> tuple[int, ...]:
    """``grid_shape``, or ``()`` where the mechanism's ``eps`` cannot answer (one mechanism)."""
    try:
        return grid_shape(mech)
    except Exception:  # noqa: BLE001 - an eps that cannot answer means "one mechanism"
        return ()


def _eps_text(mech: Any) -> str:
    eps = getattr(mech, "eps", None)
    try:
        return "" if eps is None else f" (eps={np.asarray(eps, dtype=np.float64).tolist()})"
    except (TypeError, ValueError):
        return ""


def _check_point(mech: Any, name: str, index: tuple[int, ...] | None) -> None:
    """One mechanism: ``d`` within ``[2, _validate.D_MAX]``, ``eps`` within ``[EPS_MIN, EPS_MAX]`` and, for a grid point
    (which ``jax.vmap`` built without ``__init__``), the class's own constructor checks, re-run on its values."""
    try:
        _check_point_values(mech, name, index is not None)
    except (TypeError, ValueError) as err:
        if index is None:
            raise
        raise type(err)(f"{name} at grid point {index}{_eps_text(mech)}: {err}") from err


def _check_point_values(mech: Any, name: str, rebuild: bool) -> None:
    d = getattr(mech, "d", None)
    if isinstance(d, numbers.Integral) and not isinstance(d, bool) and not 2 <= int(d) <= _validate.D_MAX:
        raise ValueError(f"Expected {name}.d={int(d)} in [2, {_validate.D_MAX}] (items are int32 on device).")
    leaves = jax.tree_util.tree_leaves(mech)
    if not all(_validate.is_concrete(v) for v in leaves):
        return
    eps = getattr(mech, "eps", None)
    if eps is not None and not isinstance(eps, (str, bytes)):
        try:
            arr = np.asarray(eps, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
        if arr is not None and arr.ndim == 0:
            _validate.check_eps(float(arr), name=f"{name}.eps")
    if not rebuild:
        return
    if not dataclasses.is_dataclass(mech):
        return
    fields = {f.name: getattr(mech, f.name) for f in dataclasses.fields(mech) if f.init}
    try:
        inspect.signature(type(mech)).bind(**fields)
    except TypeError:  # a hand-written __init__: check the mechanisms it holds instead
        for field, value in fields.items():
            if dataclasses.is_dataclass(value) and hasattr(value, "perturb_batch"):
                _check_point_values(value, f"{name}.{field}", True)
        return
    type(mech)(**fields)


def validate_grid(mech: Any, name: str = "mech") -> Any:
    """Validates a mechanism or every point of a ``jax.vmap``-built grid of mechanisms; returns ``mech``.

    A grid (``grid_shape(mech)`` non-empty) is built by JAX without ``__init__``, so no constructor check ever
    ran on its points. Every point is checked here against the documented ranges: ``eps`` in
    ``[EPS_MIN, EPS_MAX]`` (finite), ``d`` in ``[2, D_MAX]``, and the class's own constructor checks (re-run
    on the point's values). A single mechanism gets the ``eps``/``d`` range checks (a mechanism defined outside the
    library may have no constructor checks). Traced leaves (inside ``jit``/``vmap``/``grad``) are not checked.

    Raises:
      ValueError/TypeError: naming the argument, the grid index of the first bad point and its value.
    """
    shape = grid_shape_or_none(mech)
    if not shape:
        _check_point(mech, name, None)
        return mech
    leaves = jax.tree_util.tree_leaves(mech)
    if not all(_validate.is_concrete(v) for v in leaves):
        return mech
    for index in np.ndindex(*shape):
        point = jax.tree.map(lambda v, i=index: v[i] if np.shape(v)[: len(shape)] == shape else v, mech)
        _check_point(point, name, index)
    return mech
