"""How ``ul.audit_sampler`` reads what it is given: the sampler's form, the claim, the tested inputs, the report
space (enumerable report columns or support vectors) and, under a ULDP claim, which reports are protected."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _audit_draws as draws
from uldp_jax import _audit_host as host_reports
from uldp_jax.mechanisms import Mechanism, PrivacySpec
from uldp_jax.mechanisms.core import num_stats

MAX_DEFAULT_INPUTS = 64  # all inputs are tested up to this domain; beyond it the pair (0, d - 1) unless inputs=


def sampler_kind(sampler: Any) -> str:
    if isinstance(sampler, Mechanism):
        return "mechanism"
    if not callable(sampler):
        raise TypeError(f"Expected sampler to be a ul.Mechanism, a JAX function (key, xs) -> reports or a Python "
                        f"callable x -> report, got {type(sampler).__name__}.")
    try:
        params = inspect.signature(sampler).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: one argument, as a client's perturb
        return "python"
    required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(required) == 2:
        return "jax"
    if len(required) == 1:
        return "python"
    raise TypeError(f"Expected sampler to take (key, xs) (a JAX function) or x (a Python callable); it takes "
                    f"{len(required)} required arguments.")


def resolve_spec(spec: Any, d: int | None, name: str) -> PrivacySpec:
    if isinstance(spec, PrivacySpec):
        E = np.asarray(spec.E, np.float64)
        if d is not None and E.shape != (d, d):
            raise ValueError(f"Expected spec.E to have shape ({d}, {d}) for d={d}, got {E.shape}.")
        return spec
    if spec is None or d is None:
        raise TypeError(f"audit_sampler of {name}: pass spec= (a ul.PrivacySpec, or the claimed eps) and d= (the "
                        "number of inputs) for a sampler that is not a ul.Mechanism.")
    if isinstance(spec, bool) or not isinstance(spec, numbers.Real) or not np.isfinite(spec) or spec <= 0:
        raise ValueError(f"Expected spec={spec!r} to be a ul.PrivacySpec or a finite eps > 0.")
    return PrivacySpec.ldp(d, float(spec))


def tested_inputs(inputs: Any, d: int) -> np.ndarray:
    if inputs is None:
        return np.arange(d) if d <= MAX_DEFAULT_INPUTS else np.array([0, d - 1])
    arr = np.asarray(inputs)
    if arr.ndim != 1 or arr.size < 2 or arr.dtype.kind not in "iu" or arr.min() < 0 or arr.max() >= d \
            or np.unique(arr).size != arr.size:
        raise ValueError(f"Expected inputs={inputs!r} to be at least 2 distinct ints in [0, {d}).")
    return arr.astype(np.int64)


def mechanism_form(mech: Any, events: str) -> tuple[str, int, int]:
    """(mode, m, width) for a mechanism's reports."""
    if events != "support" and mech.report_kind == "item" and int(mech.num_outputs) <= draws.MAX_CELLS:
        return "outputs", int(mech.num_outputs), 1
    k = int(num_stats(mech))
    # ULDP bit vectors: enumerated up to MAX_BITS (their invertible outputs then checked column by column)
    uldp = mech.privacy_spec().invertible_inputs is not None
    limit = draws.MAX_BITS if events == "outputs" or uldp else draws.AUTO_BITS
    if events != "support" and mech.report_kind == "bits" and k <= limit:
        return "outputs", 2**k, 1
    if events == "outputs":
        raise ValueError(f"events='outputs': {type(mech).__name__}'s reports are not enumerable here (item reports "
                         f"of at most {draws.MAX_CELLS} values or bit vectors of at most {draws.MAX_BITS} bits).")
    return "support", 0, k


def function_form(fn: Callable, d: int, num_outputs: int | None, events: str) -> tuple[str, int, int]:
    out = jax.eval_shape(fn, jax.random.key(0), jnp.zeros((2,), jnp.int32))
    if out.ndim == 1:
        if events == "support":
            raise ValueError("events='support' needs bit-vector reports [n, D]; this sampler returns items.")
        return "outputs", int(num_outputs or d), 1
    if out.ndim != 2:
        raise ValueError(f"Expected the sampler to return int[n] items or bits [n, D], got shape {out.shape}.")
    if events != "support" and out.shape[1] <= (draws.MAX_BITS if events == "outputs" else draws.AUTO_BITS):
        return "outputs", 2 ** out.shape[1], 1
    return "support", 0, out.shape[1]


def protected_mask(spec: PrivacySpec, sampler: Any, kind: str, protected: Any, m: int,
               host: host_reports.HostReports | None) -> np.ndarray | None:
    """The outputs events may use: all for a claim without invertible outputs, else the given or the channel's mask
    (a predicate ``protected(reports)`` is asked about every report column)."""
    if spec.invertible_inputs is None:
        return None
    if protected is None and kind == "mechanism":
        protected = sampler.channel_matrix()[1]
    if protected is None:
        raise ValueError("a ULDP claim: pass protected= (bool[num_outputs], the protected outputs, or a callable "
                         "reports -> bool[n]) so that only they are tested and the others are checked invertible.")
    if callable(protected):
        protected = column_predicate(protected, sampler, kind, m, host)
    mask = np.asarray(protected, bool)
    if mask.shape != (m,):
        raise ValueError(f"Expected protected to be bool[{m}] (one per report column), got shape {mask.shape}.")
    return mask


def column_predicate(protected: Callable, sampler: Any, kind: str, m: int,
                      host: host_reports.HostReports | None) -> np.ndarray:
    """``bool[m]``: a predicate on reports asked about every report column (items, bit vectors, or a Python
    callable's reports in the order they were first seen)."""
    if host is not None:
        form = host.form
        if form == "hashable":
            return np.asarray(draws.revealed_of(np.asarray(protected(list(host.index)))) == -1)
    else:
        form = "bits" if jax.eval_shape(sampler, jax.random.key(0), jnp.zeros((2,), jnp.int32)).ndim == 2 else "items"
    cols = np.arange(m)
    reports = (cols[:, None] >> np.arange(int(m).bit_length() - 1)) & 1 if form == "bits" else cols
    return np.asarray(draws.revealed_of(protected(jnp.asarray(reports))) == -1)


def support_predicate(spec: PrivacySpec, kind: str, protected: Any) -> Any:
    """What tells protected reports under support events: ``None`` (no invertible outputs: all are protected),
    ``"mechanism"`` (its ``revealed_inputs``) or the user's callable."""
    if spec.invertible_inputs is None:
        return None
    if protected is not None and not callable(protected):
        raise ValueError("protected= as a mask of report columns needs enumerable reports; with support events "
                         "pass a callable reports -> bool[n] (or int[n], the input each invertible report reveals).")
    if protected is None:
        if kind == "mechanism":
            return "mechanism"
        raise ValueError(host_reports.MISSING_PREDICATE)
    return protected
