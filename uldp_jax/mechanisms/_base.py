"""Shared machinery for mechanisms: the pytree decorator and the mechanism protocol.

A mechanism is a frozen dataclass registered as a JAX pytree. Continuous parameters (``eps``, ``theta``, ...)
are array leaves, so ``jax.vmap`` over a grid of them and ``jax.grad``/optax through them work; sizes and index
sets are static metadata, so they fix compiled shapes.

Every mechanism implements the protocol below (duck-typed; the top-level functions ``ul.perturb``,
``ul.channel``, ``ul.estimate`` and ``ul.simulate`` dispatch on it):

* ``d`` (static int): size of the input domain; inputs are ``int32`` items in ``[0, d)``.
* ``report_kind``: ``"item"`` (a report is one ``int32`` in ``[0, num_outputs)``), ``"bits"`` (a report is
  ``bool[num_bits]``), or another kind documented by the mechanism (e.g. hashed reports).
* ``perturb_batch(key, xs) -> reports``: randomizes ``xs: int32[n]`` drawing all users' randomness in a few
  batched calls (the fast path). ``perturb_one(key, x)`` randomizes one user (composes with ``vmap``).
* ``aggregate(reports, weights=None) -> stats``: the sufficient statistic the linear estimators need
  (``int32[num_stats]``: an output histogram or per-item support counts), reduced on device.
* ``sample_stats(key, xs, weights) -> stats``: ``aggregate(perturb_batch(key, xs), weights)`` in distribution,
  possibly without materialising the reports.
* ``support_affine() -> (a, b)``: float arrays ``[d]`` with ``E[stats_j] / n = a_j p_j + b_j`` (iid or fixed
  model). The empirical estimator is ``(stats / n - b) / a`` and its per-item variance (iid model) is
  ``f_j (1 - f_j) / (n a_j^2)`` with ``f_j = a_j p_j + b_j``, because each user adds a Bernoulli(f_j) to stats_j.
* ``channel_matrix() -> (Q, protected)``: the exact channel as float64 NumPy (rows = inputs), for small domains.
* ``privacy_spec() -> PrivacySpec``: the guarantee the mechanism claims, checked by ``ul.audit``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

# Largest number of channel entries (d * m) that ``channel`` will enumerate.
MAX_CHANNEL_ENTRIES = 2**24


def pytree_dataclass(data_fields: tuple[str, ...], meta_fields: tuple[str, ...]):
    """Registers a frozen dataclass as a pytree whose unflatten bypasses ``__init__``.

    JAX rebuilds pytrees with arbitrary leaves (tracers, ``None`` axis specs, sentinels); skipping
    ``__post_init__`` there keeps construction-time validation for user-built objects only.
    """

    def wrap(cls):
        def flatten_with_keys(obj):
            children = [(jax.tree_util.GetAttrKey(f), getattr(obj, f)) for f in data_fields]
            return children, tuple(getattr(obj, f) for f in meta_fields)

        def flatten(obj):
            return [getattr(obj, f) for f in data_fields], tuple(getattr(obj, f) for f in meta_fields)

        def unflatten(meta, children):
            obj = object.__new__(cls)
            for f, v in zip(data_fields, children):
                object.__setattr__(obj, f, v)
            for f, v in zip(meta_fields, meta):
                object.__setattr__(obj, f, v)
            return obj

        jax.tree_util.register_pytree_with_keys(cls, flatten_with_keys, unflatten, flatten)
        return cls

    return wrap


def replace(mech: Any, **changes: Any) -> Any:
    """Returns a copy of ``mech`` with fields replaced, re-running construction checks."""
    return dataclasses.replace(mech, **changes)


class PrivacySpec(NamedTuple):
    """The guarantee a mechanism claims, in the form the audit checks.

    Attributes:
      kind: ``"ldp"``, ``"uldp"``, ``"hlldp"``, ``"bsldp"`` or ``"eldp"``.
      E: float64 ``[d, d]`` privacy matrix (004 Def 2): on every protected output ``y``,
        ``Q(y|x) <= exp(E[x, x']) Q(y|x')``; ``inf`` means unconstrained.
      eps: the nominal epsilon (the finite value of ``E``).
      invertible_inputs: bool ``[d]`` for ULDP: inputs allowed to reach invertible (non-protected) outputs
        (``X_N``); ``None`` when every output is protected.
    """

    kind: str
    E: np.ndarray
    eps: float
    invertible_inputs: np.ndarray | None = None


def eps_value(eps: Any) -> float:
    """The concrete float value of an eps leaf (for channels and audits)."""
    arr = np.asarray(eps, dtype=np.float64)
    if arr.ndim != 0:
        raise ValueError(
            f"Expected a single mechanism, got eps with shape {arr.shape} (a batched grid); "
            "index it first, e.g. jax.tree.map(lambda v: v[i], mech)."
        )
    return float(arr)


def ldp_spec(d: int, eps: float) -> PrivacySpec:
    E = np.full((d, d), eps, dtype=np.float64)
    np.fill_diagonal(E, 0.0)
    return PrivacySpec("ldp", E, eps, None)


def uldp_spec(d: int, sensitive: tuple[int, ...], eps: float) -> PrivacySpec:
    E = np.full((d, d), eps, dtype=np.float64)
    np.fill_diagonal(E, 0.0)
    nonsens = np.ones(d, dtype=bool)
    nonsens[list(sensitive)] = False
    return PrivacySpec("uldp", E, eps, nonsens)


def sensitive_mask(d: int, sensitive: tuple[int, ...]) -> np.ndarray:
    """bool[d]: True on the sensitive items."""
    mask = np.zeros(d, dtype=bool)
    mask[list(sensitive)] = True
    return mask


def bincount(ys: jax.Array, length: int, weights: jax.Array | None = None) -> jax.Array:
    """int32 histogram of item reports (weights: 0/1 mask for padded users)."""
    if weights is None:
        return jnp.bincount(ys, length=length).astype(jnp.int32)
    return jnp.zeros(length, jnp.int32).at[ys].add(weights.astype(jnp.int32))


def bit_sums(bits: jax.Array, weights: jax.Array | None = None) -> jax.Array:
    """int32 per-bit support counts of bit-vector reports ``bool[n, m]``."""
    if weights is not None:
        bits = bits & weights.astype(bool)[:, None]
    return jnp.sum(bits, axis=0, dtype=jnp.int32)


def check_channel_size(name: str, d: int, m: int) -> None:
    if d * m > MAX_CHANNEL_ENTRIES:
        raise ValueError(
            f"{name}: the exact channel has {d} x {m} entries, more than {MAX_CHANNEL_ENTRIES}; "
            "use a smaller domain for exact channels and audits."
        )


def bits_table(m: int) -> np.ndarray:
    """bool[2**m, m]: row ``y`` holds the bits of the integer ``y`` (bit j = (y >> j) & 1)."""
    ys = np.arange(2**m, dtype=np.int64)
    return ((ys[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
