"""The pytree-dataclass machinery under ``Mechanism``: ``static_field``, registration, ``replace``, and the
repr/hash helpers for field values."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

STATIC = "uldp_static"  # dataclass field metadata key of static (non-leaf) fields


def static_field(**kwargs: Any) -> Any:
    """A dataclass field that is static pytree metadata (not a leaf): sizes, index sets, flags.

    Takes the keyword arguments of ``dataclasses.field`` (``default``, ``init``, ``repr``, ...); with none, the
    field is a required constructor argument.
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata[STATIC] = True
    return dataclasses.field(metadata=metadata, **kwargs)



def _register(cls: type, data: tuple[str, ...], meta: tuple[str, ...]) -> None:
    """Registers ``cls`` as a pytree (leaves ``data``, static ``meta``); unflatten bypasses ``__init__``.

    JAX rebuilds pytrees with arbitrary leaves (tracers, ``None`` axis specs, sentinels); skipping
    ``__post_init__`` there keeps construction-time validation for user-built objects only.
    """

    def flatten_with_keys(obj):
        return [(jax.tree_util.GetAttrKey(f), getattr(obj, f)) for f in data], tuple(getattr(obj, f) for f in meta)

    def flatten(obj):
        return [getattr(obj, f) for f in data], tuple(getattr(obj, f) for f in meta)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for f, v in zip(data, children):
            object.__setattr__(obj, f, v)
        for f, v in zip(meta, aux):
            object.__setattr__(obj, f, v)
        return obj

    jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)


def register_fields(cls: type) -> None:
    """Registers a ``Mechanism`` subclass: ``static_field()`` fields are static, every other field a leaf."""
    fields = dataclasses.fields(cls)
    data = tuple(f.name for f in fields if not f.metadata.get(STATIC, False))
    meta = tuple(f.name for f in fields if f.metadata.get(STATIC, False))
    _register(cls, data, meta)
    cls._leaf_fields, cls._static_fields = data, meta


def pytree_dataclass(data_fields: tuple[str, ...], meta_fields: tuple[str, ...]):
    """Registers a frozen dataclass that is not a mechanism (e.g. a report container) as a pytree."""

    def wrap(cls):
        _register(cls, tuple(data_fields), tuple(meta_fields))
        return cls

    return wrap



_REPR_ITEMS = 8  # index sets and arrays longer than this print as a summary


def short_repr(v: Any) -> str:
    """A field's repr for ``Mechanism.__repr__``: sequences and arrays longer than ``_REPR_ITEMS`` summarised."""
    if isinstance(v, (tuple, list, range, frozenset, set)) and len(v) > _REPR_ITEMS:
        items = sorted(v) if isinstance(v, (frozenset, set)) else list(v)
        if all(isinstance(x, (int, np.integer)) for x in items):
            head = ", ".join(str(x) for x in items[:3])
            return f"<{len(items)} items: {head}, ..., {items[-1]}>"
        return f"<{type(v).__name__} of {len(items)}>"
    if isinstance(v, (np.ndarray, jax.Array)) and not isinstance(v, jax.core.Tracer):
        a = np.asarray(v)
        if a.ndim == 0:
            return repr(a.item())
        if a.size <= _REPR_ITEMS:
            return repr(a.tolist())
        return f"<{a.dtype}{list(a.shape)}>"
    return repr(v)


def replace(mech: Any, **changes: Any) -> Any:
    """Returns a copy of ``mech`` with the named fields replaced, re-running its construction checks.

    The copy keeps every other field as it is (derived ones too, e.g. that RAPPOR's ``theta`` is eps's default),
    sets the new values, and runs the class's ``__post_init__``, where a mechanism checks and normalises its fields
    (a class with its own ``__init__``, such as PUM, builds its fields there and checks them in ``__post_init__``
    too). So ``replace(mech)`` equals ``mech``, and a value the constructor refuses is refused here with its error.

    Raises:
      TypeError: ``mech`` is not a dataclass instance (a mechanism), or a name in ``changes`` is not one of its
        fields.
      ValueError: a name in ``changes`` is a derived field (``init=False``); or what the checks raise.
    """
    if not dataclasses.is_dataclass(mech) or isinstance(mech, type):
        raise TypeError(f"Expected mech to be a mechanism (a dataclass instance), got {mech!r}.")
    fields = {f.name: f for f in dataclasses.fields(mech)}
    for name in changes:
        if name not in fields:
            raise TypeError(f"Expected fields of {type(mech).__name__} ({', '.join(fields)}), got {name}=.")
        if not fields[name].init:
            raise ValueError(f"Expected a field set by the constructor, got {name}= (derived by "
                             f"{type(mech).__name__} itself).")
    new = object.__new__(type(mech))
    for name in fields:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(mech, name))
    post_init = getattr(new, "__post_init__", None)
    if post_init is not None:
        post_init()
    return new


def hashable(v: Any) -> Any:
    """A hashable stand-in for a field value (arrays by shape and float64 bytes; sequences as tuples)."""
    if hasattr(type(v), "_leaf_fields"):  # a Mechanism: by its own value hash
        return hash(v)
    if isinstance(v, (np.ndarray, jax.Array, np.generic)):
        arr = np.asarray(v)
        if arr.dtype.kind in "fiub":
            arr = arr.astype(np.float64)
        return (arr.shape, arr.tobytes())
    if isinstance(v, (list, tuple)):
        return tuple(hashable(x) for x in v)
    if isinstance(v, float):
        return (), np.float64(v).tobytes()
    if isinstance(v, int) and not isinstance(v, bool):
        return (), np.float64(v).tobytes() if abs(v) < 2**53 else v
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)
