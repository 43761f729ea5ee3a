"""Construction-time and entry-point argument checks.

Every check raises ``ValueError`` or ``TypeError`` naming the argument and the offending value. Checks on
array values run only on concrete values: inside ``jit``/``vmap``/``grad`` leaves are tracers and are skipped.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import jax
import numpy as np


def is_concrete(value: Any) -> bool:
    """True when ``value`` is a Python/NumPy value or a concrete (non-traced) JAX array."""
    return not isinstance(value, jax.core.Tracer)


def check_int(name: str, value: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    """Returns ``value`` as ``int`` after checking its type and range (inclusive bounds)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Expected {name}={value!r} to be an int.")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"Expected {name}={value} >= {minimum}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"Expected {name}={value} <= {maximum}.")
    return value


def bad_entry(name: str, arr: Any, bad: Any) -> str:
    """`` (bad entry: name[i]=v)`` for the first ``True`` of ``bad`` in an array ``arr``; ``""`` for a scalar."""
    arr, bad = np.asarray(arr), np.asarray(bad)
    if arr.ndim == 0 or not bad.any():
        return ""
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    where = idx[0] if len(idx) == 1 else idx
    return f" (bad entry: {name}[{where}]={arr[idx].item()!r})"


def as_param(name: str, value: Any, lower: float | None = None, upper: float | None = None,
                          lower_open: bool = True, upper_open: bool = True, allow_inf: bool = False) -> Any:
    """Checks a continuous parameter and returns it as a pytree leaf.

    Concrete values become float64 NumPy arrays (exact for audits; ``jit`` casts them to the default float
    dtype); tracers pass through unchecked. Batched values (a grid of eps) are checked element-wise.
    """
    if not is_concrete(value):
        return value
    if value is None or isinstance(value, (bool, str, bytes)):
        raise TypeError(f"Expected {name}={value!r} to be a real number.")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Expected {name}={value!r} to be a real number.") from e
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"Expected {name}={value!r} to be a real number.")
    nonfinite = np.isnan(arr) | (np.isinf(arr) if not allow_inf else False)
    if np.any(nonfinite):
        raise ValueError(f"Expected {name}={value!r} to be finite{bad_entry(name, arr, nonfinite)}.")
    if lower is not None:
        bad = arr <= lower if lower_open else arr < lower
        if np.any(bad):
            op = ">" if lower_open else ">="
            raise ValueError(f"Expected {name}={value!r} {op} {lower}{bad_entry(name, arr, bad)}.")
    if upper is not None:
        bad = arr >= upper if upper_open else arr > upper
        if np.any(bad):
            op = "<" if upper_open else "<="
            raise ValueError(f"Expected {name}={value!r} {op} {upper}{bad_entry(name, arr, bad)}.")
    return arr


def check_bool(name: str, value: Any) -> bool:
    """A Python/NumPy bool flag (``1``/``"yes"`` are refused: they usually mean another argument)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"Expected {name}={value!r} to be True or False.")
    return bool(value)


def check_keep_probability(name: str, value: Any) -> Any:
    """A probability in (0, 1) that float32 simulation can represent: ``0 < float32(value) < 1``.

    Values within ~6e-8 of 0 or 1 round to 0 or 1 in float32, where ``1 - value`` vanishes and the debiasing
    divides by zero; they are refused here instead of producing NaN later.
    """
    arr = as_param(name, value, lower=0.0, upper=1.0)
    if is_concrete(arr):
        a32 = np.asarray(arr, dtype=np.float32)
        if np.any(a32 <= 0) or np.any(a32 >= 1):
            raise ValueError(f"Expected {name}={value!r} to stay inside (0, 1) in float32 (|{name} - 0 or 1| > 6e-8).")
    return arr


# The eps range in which every mechanism's channel, audit and estimates are exact (README, "Exact eps
# range"). Above EPS_MAX: float32 sampling and debiasing meet exp(-eps) below float32's normal range (and
# exp(eps / 2) near its overflow), float64 bit-product channels underflow, and RAPPOR's default theta rounds to 1
# in float64 (eps > 72); no privacy question needs eps > 100 (e^100 ~ 1e43). Below EPS_MIN the audited eps
# loses relative accuracy (float64 log-ratios are good to ~1e-16 absolute) and float32 estimates scale like
# 1/eps. Tested over [1e-3, 50] for every mechanism (tests/privacy/test_audit.py).
EPS_MIN = 1e-6
EPS_MAX = 100.0

# Largest domain size: items, reports and counts are int32 on device, so a larger ``d`` would wrap silently.
D_MAX = 2**31 - 1


def check_eps(value: Any, name: str = "eps") -> Any:
    """eps must be a finite real in ``[EPS_MIN, EPS_MAX]`` (element-wise for a grid; tracers unchecked)."""
    arr = as_param(name, value, lower=0.0)
    if is_concrete(arr) and np.ndim(arr) > 1:
        raise ValueError(f"Expected {name} to be a scalar or a 1-D grid of values, got shape {np.shape(arr)}.")
    if is_concrete(arr) and (np.any(arr < EPS_MIN) or np.any(arr > EPS_MAX)):
        where = bad_entry(name, arr, (arr < EPS_MIN) | (arr > EPS_MAX))
        raise ValueError(f"Expected {name}={value!r} in [{EPS_MIN:g}, {EPS_MAX:g}]{where}, the range where "
                         "channels, audits and estimates are exact (see ul._validate.EPS_MIN/EPS_MAX).")
    return arr


def check_index_set(name: str, items: Any, d: int, allow_empty: bool = False) -> tuple[int, ...]:
    """Validates a set of item indices in ``[0, d)``; returns a sorted tuple of Python ints."""
    if isinstance(items, (str, bytes)) or not isinstance(items, (Sequence, np.ndarray, range, set, frozenset)):
        if isinstance(items, jax.Array) and is_concrete(items):
            items = np.asarray(items)
        else:
            raise TypeError(f"Expected {name}={items!r} to be a sequence of item indices.")
    if isinstance(items, np.ndarray):
        if items.ndim != 1:
            raise ValueError(f"Expected {name} to be one-dimensional, got shape {items.shape}.")
        if items.size and items.dtype.kind not in "iu":
            raise TypeError(f"Expected {name}={items!r} to hold integers, got dtype {items.dtype}.")
        items = items.tolist()
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"Expected {name}={items!r} to hold integers, got {v!r}.")
        v = int(v)
        if not 0 <= v < d:
            raise ValueError(f"Expected every item of {name} in [0, {d}), got {v}.")
        out.append(v)
    if not out and not allow_empty:
        raise ValueError(f"Expected {name} to be non-empty.")
    if len(set(out)) != len(out):
        raise ValueError(f"Expected {name}={items!r} to have no duplicates.")
    return tuple(sorted(out))


def check_items(name: str, xs: Any, d: int, ndim: int | tuple[int, ...] = 1) -> jax.Array:
    """Checks an integer array of items in ``[0, d)`` (value check only when concrete)."""
    if isinstance(xs, (list, tuple)):
        xs = np.asarray(xs)
    if not hasattr(xs, "dtype") or not hasattr(xs, "shape"):
        raise TypeError(f"Expected {name} to be an integer array, got {type(xs).__name__}.")
    if np.dtype(xs.dtype).kind not in "iu":
        raise TypeError(f"Expected {name} to be an integer array, got dtype {xs.dtype}.")
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if xs.ndim not in ndims:
        raise ValueError(f"Expected {name} to have rank in {ndims}, got shape {tuple(xs.shape)}.")
    if is_concrete(xs) and np.size(xs):
        arr = np.asarray(xs)
        lo, hi = arr.min(), arr.max()
        if lo < 0 or hi >= d:
            bad = lo if lo < 0 else hi
            raise ValueError(f"Expected every entry of {name} in [0, {d}), got {bad}.")
    return xs


def check_distribution(name: str, p: Any, d: int | None = None, atol: float = 1e-6) -> np.ndarray:
    """Checks a probability vector (concrete): 1-D, non-negative, finite, sums to 1 within ``atol``."""
    if not is_concrete(p):
        return p
    if p is None or isinstance(p, (str, bytes)):
        raise TypeError(f"Expected {name}={p!r} to be a probability vector (float[d]); for the uniform "
                        f"distribution pass np.full(d, 1 / d).")
    raw = np.asarray(p)
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"Expected {name} to hold real probabilities, got dtype {raw.dtype}.")
    arr = raw.astype(np.float64)
    if arr.ndim != 1:
        raise ValueError(f"Expected {name} to be a 1-D probability vector, got shape {arr.shape}.")
    if d is not None and arr.shape[0] != d:
        raise ValueError(f"Expected {name} to have length d={d}, got {arr.shape[0]}.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"Expected {name} to be non-negative and finite.")
    if not math.isclose(float(arr.sum()), 1.0, abs_tol=atol):
        raise ValueError(f"Expected {name} to sum to 1, got {arr.sum():.8g}.")
    return arr


def check_key(key: Any) -> Any:
    """Requires a JAX PRNG key (typed or raw uint32[2]); never makes one for the caller."""
    if key is None:
        raise TypeError("Expected key to be a jax.random key (jax.random.key(seed)), got None.")
    if not hasattr(key, "dtype"):
        raise TypeError(f"Expected key to be a jax.random key, got {type(key).__name__}.")
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    if key.dtype == np.uint32 and key.shape[-1:] == (2,):
        return key
    raise TypeError(f"Expected key to be a jax.random key, got dtype {key.dtype} and shape {key.shape}.")
