"""Registry of exact count-level samplers (type -> fn(key, mech, counts))."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

_SAMPLERS: dict[type, Callable[..., jax.Array]] = {}
_IID_SAMPLERS: dict[type, Callable[..., jax.Array]] = {}
_WHEN: dict[type, Callable[[Any], bool]] = {}
_IID_WHEN: dict[type, Callable[[Any], bool]] = {}


def register_count_sampler(cls: type, fn: Callable[..., jax.Array] | None,
                           iid_fn: Callable[..., jax.Array] | None = None,
                           when: Callable[[Any], bool] | None = None,
                           iid_when: Callable[[Any], bool] | None = None) -> None:
    """Registers the exact count samplers of mechanism class ``cls``.

    Args:
      cls: the mechanism class.
      fn: ``fn(key, mech, counts float[d]) -> float[num_stats]``, the law of the stats given the true counts
        (fixed model); ``None`` when only the iid model has an exact sampler (then ``iid_fn`` is required).
      iid_fn: optional ``iid_fn(key, mech, n, p float[d]) -> float[num_stats]``, the law in the iid model when it
        is cheaper than drawing ``Multinomial(n, p)`` true counts first (e.g. one multinomial over ``p Q``).
      when: optional ``when(mech) -> bool``: the samplers apply only to instances for which it is true (e.g. a
        GLUTF mechanism whose base has a count path); default: every instance of ``cls``.
      iid_when: optional, the same for ``iid_fn`` (default: ``when``), e.g. uSS has only an iid sampler.
    """
    if not isinstance(cls, type):
        raise TypeError(f"Expected cls={cls!r} to be a mechanism class.")
    if fn is None and iid_fn is None:
        raise TypeError("Expected fn or iid_fn to be callable, got neither.")
    if fn is not None and not callable(fn):
        raise TypeError(f"Expected fn={fn!r} to be callable (or None with an iid_fn).")
    if iid_fn is not None and not callable(iid_fn):
        raise TypeError(f"Expected iid_fn={iid_fn!r} to be callable.")
    for name, cond in (("when", when), ("iid_when", iid_when)):
        if cond is not None and not callable(cond):
            raise TypeError(f"Expected {name}={cond!r} to be callable.")
    _SAMPLERS[cls] = fn
    if when is None:
        _WHEN.pop(cls, None)
    else:
        _WHEN[cls] = when
    if iid_fn is None:
        _IID_SAMPLERS.pop(cls, None)
    else:
        _IID_SAMPLERS[cls] = iid_fn
    if iid_when is None:
        _IID_WHEN.pop(cls, None)
    else:
        _IID_WHEN[cls] = iid_when


def iid_sampler(mech: Any) -> Callable[..., jax.Array] | None:
    """The registered iid-model sampler ``fn(key, mech, n, p)`` of ``mech``, or ``None``."""
    when = _IID_WHEN.get(type(mech))
    if not (_applies(mech) if when is None else bool(when(mech))):
        return None
    return _IID_SAMPLERS.get(type(mech))


def _applies(mech: Any) -> bool:
    when = _WHEN.get(type(mech))
    return when is None or bool(when(mech))


def count_sampler(mech: Any) -> Callable[..., jax.Array] | None:
    """The exact count sampler of ``mech`` (``fn(key, mech, counts)``), or ``None`` when it has none."""
    if type(mech) in _SAMPLERS:
        fn = _SAMPLERS[type(mech)]
        return fn if (fn is not None and _applies(mech)) else None
    method = getattr(type(mech), "sample_counts", None)
    if callable(method):
        return lambda key, m, counts: m.sample_counts(key, counts)
    return None


def has_count_path(mech: Any, iid: bool = False) -> bool:
    """True when ``mech``'s aggregate statistic can be sampled exactly without per-user draws.

    ``iid=False`` (default): from the true counts (fixed model, hence also the iid model); ``iid=True``: in the
    iid model (``n`` users drawn from ``p``), which some mechanisms (SS) support only there.
    """
    return count_sampler(mech) is not None or (iid and iid_sampler(mech) is not None)
