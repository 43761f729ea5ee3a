"""The mechanism protocol: ``Mechanism`` (a frozen-dataclass pytree base class), ``static_field`` and
``PrivacySpec``.

A mechanism subclasses ``Mechanism`` and declares its parameters as annotated fields, as in equinox's ``Module``:
fields made with ``static_field()`` are static metadata (sizes, index sets, flags: they fix compiled shapes);
every other field is a pytree leaf (``eps``, ``theta``, ...), so ``jax.vmap`` over a grid of them and
``jax.grad``/optax through them work. The subclass becomes a frozen dataclass and a registered pytree
automatically; JAX rebuilds it without calling ``__init__`` (leaves may be tracers), so ``__post_init__``
validation runs for user-built objects only.

A few members are required (as in distrax's ``Distribution``); every other capability has a generic default built
on them, which a mechanism may override with something faster or closed-form:

====================================  ==================================================  ============================
member                                default                                             overridden by
====================================  ==================================================  ============================
``report_kind``                       required: ``"item"``, ``"bits"`` or documented      every mechanism
``num_outputs``                       required: size of the report space                  every mechanism
``perturb_batch(key, xs)``            required                                            every mechanism
``privacy_spec()``                    required                                            every mechanism
``channel_matrix()``                  required for exact channels (small domains)         every mechanism
``d``                                 a field or property: the input domain size          every mechanism
``num_stats``                         item: ``num_outputs``; bits: ``d``                  hashed / set reports
``perturb_one(key, x)``               ``perturb_batch`` on one user                       --
``aggregate(ys, weights)``            histogram of items / column sums of bits            hashed, Hadamard reports
``sample_stats(key, xs, w)``          ``aggregate(perturb_batch(key, xs), w)``            bit vectors (no n x d)
``check_reports(ys)``                 item / bits forms; otherwise the sampler's          PUM
                                      report structure
``stats_matrix()``                    ``E[stats] / n = p @ A`` from the channel           --
``support_affine()``                  ``None`` (no per-item affine form)                  RR, UE, GLUTF families
``debias(stats, n)``                  affine form, else least squares on the channel      HR family (FWHT)
``debias_variance(p, n)``             iid per-item variance of ``debias``                 HR family
``channel_ops()``                     ``None``: EM on item histograms uses the dense      GRR, uRR, HR family
                                      channel (concrete, small domains)
``num_inputs``                        ``d``: the channel's rows                           PUM (``d + num_tags``)
``log_channel_matrix()``              ``None``: the audit takes logs of the channel       UE family, GLUTF
``count_sampler()``                   ``None``: the engine uses the per-user path         GRR, uRR, UE, uRAP, HR, ...
``iid_count_sampler()``               ``None``: true counts ``Multinomial(n, p)`` first   GRR, uRR, BinaryCA, HR, SS, ...
``tunable_params()``                  ``()``                                              uRAP, uSS, uUE, uLH, uWheel
``comm_bits()``                       ``log2(num_outputs)``                               --
``batch_shape``                       shape of ``eps`` (a ``jax.vmap``-built grid)        --
``validate_grid(name)``               constructor checks per grid point                   --
``report_index(ys)``                  channel column of each report (items, bits)         hashed / set reports
``channel_support()``                 per-item support of each channel column             hashed / set reports
``debias_variance_from_channel()``    variance of an overridden ``debias``, from the      --
                                      channel
``count_draws(iid)``                  ``d + num_stats``: the count sampler's draws        HR family, SS, GLUTF
``count_memory(iid)``                 ``None``: estimated from ``count_draws``            SS, uSS
``product_likelihood()``              ``None``: EM on the channel / report likelihood     UE family
``report_likelihood(ys)``             ``None``: EM on the channel's columns               hashed, SS, GLUTF, ...
``compact_params()``                  ``None``: no compact bit sampler                    UE, uRAP
``perturb_compact(key, xs)``          ``CompactBits`` of ``perturb_batch``                --
``compact_stats()``                   compact sampler and large ``d``                     --
``prefers_compact()``                 size rule of ``core._compact``                      --
``closed_form_family``                ``None``: risks exact from channel moments          mechanisms with a paper
``closed_form()``                     ``closed_form_family``                              --
``with_tuned(value)``                 replace the closed form's tunable parameter         uUE, uSS, ...
``pure_pq()``                         ``None`` (GLUTF: ``(p*, q*)`` of a pure base)       pure LDP bases
``pure_uldp_probs()``                 ``None`` (``(p*, q*, z*)`` of a pure ULDP mech.)    uSS, uUE, uLH, uWheel
``glutf_share()``                     ``None``: GLUTF reads it off the channel            pure LDP bases
``glutf_z_max(s)``                    ``None``: GLUTF's z from the channel                pure LDP bases
``glutf_z_published()``               ``None``: 003 publishes no z                        SS, UE, OLH, Wheel
====================================  ==================================================  ============================

Generic code (``ul.perturb``, ``ul.estimate``, ``ul.simulate``, ``ul.audit``, ``ul.theory``) calls these members
and never asks a mechanism for its class name. See README, "Your own mechanism", for a complete example.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact, _grid_check

# Largest number of channel entries (d * m) that ``channel`` will enumerate.
MAX_CHANNEL_ENTRIES = 2**24

_STATIC = "uldp_static"


def static_field(**kwargs: Any) -> Any:
    """A dataclass field that is static pytree metadata (not a leaf): sizes, index sets, flags.

    Takes the keyword arguments of ``dataclasses.field`` (``default``, ``init``, ``repr``, ...); with none, the
    field is a required constructor argument.
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata[_STATIC] = True
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


def _register_fields(cls: type) -> None:
    """Registers a ``Mechanism`` subclass: ``static_field()`` fields are static, every other field a leaf."""
    fields = dataclasses.fields(cls)
    data = tuple(f.name for f in fields if not f.metadata.get(_STATIC, False))
    meta = tuple(f.name for f in fields if f.metadata.get(_STATIC, False))
    _register(cls, data, meta)
    cls._leaf_fields, cls._static_fields = data, meta


def pytree_dataclass(data_fields: tuple[str, ...], meta_fields: tuple[str, ...]):
    """Registers a frozen dataclass that is not a mechanism (e.g. a report container) as a pytree."""

    def wrap(cls):
        _register(cls, tuple(data_fields), tuple(meta_fields))
        return cls

    return wrap


_REPR_ITEMS = 8  # index sets and arrays longer than this print as a summary


def _short_repr(v: Any) -> str:
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
    """Returns a copy of ``mech`` with fields replaced, re-running construction checks."""
    return dataclasses.replace(mech, **changes)


class PrivacySpec(NamedTuple):
    """The guarantee a mechanism claims, in the form the audit checks.

    Build it with ``PrivacySpec.ldp(d, eps)``, ``PrivacySpec.uldp(d, sensitive, eps)`` or
    ``PrivacySpec.eldp(E)``.

    Attributes:
      kind: ``"ldp"``, ``"uldp"``, ``"hlldp"``, ``"bsldp"`` or ``"eldp"``.
      E: float64 ``[d, d]`` privacy matrix (004 Def 2): on every protected output ``y``,
        ``Q(y|x) <= exp(E[x, x']) Q(y|x')``; ``inf`` means unconstrained.
      eps: the nominal epsilon (the largest finite off-diagonal value of ``E``).
      invertible_inputs: bool ``[d]`` for ULDP: inputs allowed to reach invertible (non-protected) outputs
        (``X_N``); ``None`` when every output is protected.
    """

    kind: str
    E: np.ndarray
    eps: float
    invertible_inputs: np.ndarray | None = None

    @classmethod
    def ldp(cls, d: int, eps: Any) -> PrivacySpec:
        """eps-LDP over ``d`` inputs: every output protected, ``E = eps`` off the diagonal."""
        eps = eps_value(eps)
        E = np.full((d, d), eps, dtype=np.float64)
        np.fill_diagonal(E, 0.0)
        return cls("ldp", E, eps, None)

    @classmethod
    def uldp(cls, d: int, sensitive: Any, eps: Any) -> PrivacySpec:
        """(X_S, Y_P, eps)-ULDP (001 Def 2): protected outputs hide every input; only ``X_N`` reaches ``Y_I``."""
        eps = eps_value(eps)
        E = np.full((d, d), eps, dtype=np.float64)
        np.fill_diagonal(E, 0.0)
        nonsens = np.ones(d, dtype=bool)
        nonsens[list(sensitive)] = False
        return cls("uldp", E, eps, nonsens)

    @classmethod
    def eldp(cls, E: Any, kind: str = "eldp", invertible_inputs: Any = None) -> PrivacySpec:
        """E-LDP (004 Def 2) for a privacy matrix ``E float[d, d]`` (``inf``: unconstrained pair)."""
        E = np.asarray(E, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != E.shape[1]:
            raise ValueError(f"Expected E to be a square [d, d] matrix, got shape {E.shape}.")
        off = E[~np.eye(E.shape[0], dtype=bool)]
        finite = off[np.isfinite(off)]
        eps = float(finite.max()) if finite.size else float("inf")
        inv = None if invertible_inputs is None else np.asarray(invertible_inputs, dtype=bool)
        return cls(kind, E, eps, inv)


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
    return PrivacySpec.ldp(d, eps)


def uldp_spec(d: int, sensitive: tuple[int, ...], eps: float) -> PrivacySpec:
    return PrivacySpec.uldp(d, sensitive, eps)


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


def size_text(k: int) -> str:
    """``k`` for a message: exact, as ``2^j`` for a large power of two (``2^100``, not a capped 2^64)."""
    k = int(k)
    if k > 2**40 and k & (k - 1) == 0:
        return f"2^{k.bit_length() - 1}"
    return str(k)


def check_channel_size(name: str, d: int, m: int) -> None:
    if int(d) * int(m) > MAX_CHANNEL_ENTRIES:
        raise ValueError(
            f"{name}: the exact channel has {size_text(d)} x {size_text(m)} entries, more than "
            f"{MAX_CHANNEL_ENTRIES} (2^24); use a smaller domain for exact channels and audits, or sampling-based "
            "checks (ul.simulate, ul.testing) at this size."
        )


def bits_table(m: int) -> np.ndarray:
    """bool[2**m, m]: row ``y`` holds the bits of the integer ``y`` (bit j = (y >> j) & 1)."""
    ys = np.arange(2**m, dtype=np.int64)
    return ((ys[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)


# The members every mechanism declares (``Mechanism.__init_subclass__`` checks them), with what to write.
REQUIRED = {
    "d": "the input domain size: a field `d: int = ul.static_field()` or a property",
    "num_outputs": "the size of the report space: `@property def num_outputs(self) -> int` (or a static field)",
    "report_kind": 'a plain class constant, e.g. `report_kind = "item"` ("item", "bits", or your own name '
                   "with aggregate() and report_index() defined)",
    "perturb_batch": "`def perturb_batch(self, key, xs)`: all users' reports for `xs: int32[n]`",
    "privacy_spec": "`def privacy_spec(self)`: the guarantee, e.g. `ul.PrivacySpec.ldp(self.d, self.eps)`",
}
# Class constants read off the class: annotating one (``report_kind: str = "item"``) would make it a dataclass
# field, a pytree leaf and a constructor argument.
CLASS_CONSTANTS = ("report_kind", "closed_form_family")


def _refuse_annotated_constants(cls: type) -> None:
    notes = cls.__dict__.get("__annotations__", {})
    for name in CLASS_CONSTANTS:
        if name in notes and "ClassVar" not in str(notes[name]):
            raise TypeError(
                f"{cls.__name__}: {name} is annotated ({name}: {notes[name]}), which makes it a dataclass field "
                f"and a pytree leaf; write it as a plain class constant without the annotation, e.g. "
                f"{name} = {getattr(cls, name, None)!r}.")


def _declares(cls: type, name: str) -> bool:
    """Whether ``cls`` or a base other than ``Mechanism`` defines ``name`` (field, property, method, constant)."""
    if name in {f.name for f in dataclasses.fields(cls)}:
        return True
    for base in cls.__mro__:
        if base in (Mechanism, object):
            continue
        if name in base.__dict__:
            return name != "report_kind" or bool(base.__dict__[name])
    return False


def _check_required(cls: type) -> None:
    missing = [name for name in REQUIRED if not _declares(cls, name)]
    if missing:
        lines = "; ".join(f"{name}: {REQUIRED[name]}" for name in missing)
        raise TypeError(f"{cls.__name__} subclasses ul.Mechanism but does not define {', '.join(missing)}. "
                        f"Write {lines}. (A shared base class: `class {cls.__name__}(ul.Mechanism, abstract=True)`.)")


class Mechanism:
    r"""Base class of every mechanism: a frozen dataclass and a JAX pytree, with the protocol's defaults.

    Subclasses declare fields with annotations; ``static_field()`` marks static metadata, every other field is
    a leaf. Do not annotate class-level constants such as ``report_kind`` (plain assignment keeps them out of
    the fields). Validation goes in ``__post_init__`` (use ``object.__setattr__`` to normalise a field).

    Required: ``report_kind``, ``num_outputs``, ``d``, ``perturb_batch(key, xs)`` and ``privacy_spec()``, plus
    ``channel_matrix()`` for exact channels. ``channel_matrix`` may be written with ``jax.numpy`` (it then
    traces under ``jit``/``vmap``); ``ul.channel`` and ``ul.audit`` evaluate it in float64 themselves.
    """

    # Required (``REQUIRED``): declared here, defined by every subclass (``__init_subclass__`` checks).
    d: ClassVar[int]
    num_outputs: ClassVar[int]
    report_kind: ClassVar[str] = ""

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        """Makes ``cls`` a frozen dataclass and a pytree, and checks that it declares the required members.

        ``abstract=True`` (``class Base(ul.Mechanism, abstract=True)``) skips the check for a shared base class
        whose subclasses supply the required members.
        """
        super().__init_subclass__(**kwargs)
        _refuse_annotated_constants(cls)
        own_hash = "__hash__" in cls.__dict__
        dataclasses.dataclass(frozen=True, repr=False)(cls)  # __repr__ below, unless the class defines its own
        if not own_hash:
            cls.__hash__ = Mechanism.__hash__
        _register_fields(cls)
        if not abstract:
            _check_required(cls)

    def __repr__(self) -> str:
        """``Name(field=value, ...)`` with long index sets and arrays summarised (``sensitive=<424 items: 0, 1,
        2, ..., 423>``), so printing a mechanism never floods a terminal."""
        fields = [f for f in dataclasses.fields(self) if f.repr]
        return f"{type(self).__name__}({', '.join(f'{f.name}={_short_repr(getattr(self, f.name))}' for f in fields)})"

    def __hash__(self) -> int:
        """Hash by value: the class, the static fields and the leaves' float64 bytes (equal mechanisms hash
        alike, so they work as dict keys and ``functools.lru_cache`` arguments). A mechanism with traced leaves
        (inside ``jit``/``vmap``) hashes by identity, as its value is unknown."""
        parts: list[Any] = [type(self)]
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.metadata.get(_STATIC, False):
                parts.append(_hashable(v))
            elif isinstance(v, jax.core.Tracer):
                return object.__hash__(self)
            else:
                parts.append(_hashable(v))
        return hash(tuple(parts))

    # ---- required members -------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> Any:
        """Randomizes ``xs: int32[n]`` (all users' randomness in a few batched draws); returns the reports."""
        raise NotImplementedError(f"{type(self).__name__} must define perturb_batch(key, xs).")

    def privacy_spec(self) -> PrivacySpec:
        """The guarantee this mechanism claims (checked by ``ul.audit`` on the exact channel)."""
        raise NotImplementedError(f"{type(self).__name__} must define privacy_spec().")

    def channel_matrix(self) -> tuple[Any, Any]:
        """``(Q float[d, num_outputs], protected bool[num_outputs])``: the exact channel, rows = inputs."""
        raise NotImplementedError(f"{type(self).__name__} has no exact channel (define channel_matrix()).")

    # ---- grids -------------------------------------------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Shape of a ``jax.vmap``-built grid of this mechanism (``()`` for one mechanism): the shape of ``eps``
        (``()`` for a mechanism without an ``eps``, e.g. a fixed test channel; override for other grids)."""
        eps = getattr(self, "eps", None)
        return () if eps is None else tuple(jnp.shape(eps))

    def validate_grid(self, name: str = "mech") -> None:
        """Checks this mechanism, or every point of a grid, against the documented ranges (``eps`` in
        ``[1e-6, 100]``, ``d <= 2**31 - 1``, the constructor's own checks re-run per grid point); raises a
        ``ValueError``/``TypeError`` naming ``name`` and the bad grid index (``ul._validate.check_grid``)."""
        _grid_check.validate_grid(self, name)

    # ---- sampling and statistics -------------------------------------------------------------------------
    @property
    def num_stats(self) -> int:
        """Length of the sufficient statistic ``aggregate`` returns (items: ``num_outputs``; bits: ``d``)."""
        if self.report_kind == "bits":
            return self.d
        return self.num_outputs

    def perturb_one(self, key: jax.Array, x: jax.Array) -> Any:
        """Randomizes one user's value (``perturb_batch`` on a batch of one)."""
        ys = self.perturb_batch(key, jnp.reshape(jnp.asarray(x, jnp.int32), (1,)))
        return jax.tree.map(lambda a: a[0], ys)

    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        """``int32[num_stats]``: histogram of item reports, or per-bit sums of bit-vector reports.

        ``weights`` (0/1 per user) masks padded users.
        """
        if self.report_kind == "item":
            return bincount(ys, self.num_stats, weights)
        if self.report_kind == "bits":
            if isinstance(ys, _compact.CompactBits):
                return _compact.aggregate(ys, weights)
            return bit_sums(ys, weights)
        raise NotImplementedError(f"{type(self).__name__} reports {self.report_kind!r}; define aggregate().")

    def product_likelihood(self) -> tuple[np.ndarray, bool] | None:
        r"""The EM likelihood of bit-vector reports, or ``None`` (EM then uses the channel / hashed likelihood).

        A mechanism returns ``(product bool[d], invertible)`` when its report ``y`` has likelihood
        :math:`P(y|x) \propto t + (1 - t) y_x` (``t = e^{-eps}``) for every ``x`` in ``product`` (the unary
        encodings), and, if ``invertible``, a report with a bit set outside ``product`` identifies its input
        (uRAP's non-sensitive bits). EM then runs on the reported ones (``estimation._em_reports``).
        """
        return None

    def channel_ops(self) -> tuple[Callable, Callable] | None:
        """``(matvec: p -> p Q, rmatvec: v -> Q v)``, traceable and cheaper than the dense channel, or ``None``.

        EM on the output histogram of item reports runs one jitted solver over these; without them it builds the
        dense channel ``channel_matrix()`` once (concrete parameters, small domains).
        """
        return None

    @property
    def num_inputs(self) -> int:
        """Rows of the channel (inputs the mechanism accepts): ``d`` unless a mechanism says otherwise."""
        return self.d

    def log_channel_matrix(self) -> tuple[Any, Any] | None:
        """``(log Q, protected)`` where a mechanism computes it without forming ``Q`` (entries that underflow
        float64 at large eps), or ``None``: the audit then takes logs of ``channel_matrix()``."""
        return None

    def report_likelihood(self, ys: Any) -> tuple[jax.Array, jax.Array, jax.Array] | None:
        r"""Per-report likelihood factors for EM, or ``None`` (default: EM uses the channel's columns on the
        aggregate of item reports, or ``product_likelihood`` for bit vectors).

        Returns ``(L float[n, d], w float[n], N float[d])``: report ``i`` (weight ``w_i``) has likelihood
        proportional to ``L[i, x]``; ``N`` counts invertible reports per item (likelihood ``∝ p_x``). The
        library's mechanisms return the compact ``SupportRatio`` form (``mechanisms.core._likelihood``) instead.
        """
        return None

    def compact_params(self) -> tuple[np.ndarray, jax.Array, jax.Array] | None:
        """``(items_s, own_prob float[d], q)`` when the reports are independent bits: the own bit is 1 w.p.
        ``own_prob[x]``, every bit of ``items_s`` other than ``x`` w.p. ``q``, every other bit is 0. ``None``:
        no compact sampler (``perturb_compact`` then packs the dense reports)."""
        return None

    def perturb_compact(self, key: jax.Array, xs: jax.Array, num_chunks: int | None = None) -> Any:
        """Reports as ``CompactBits`` (positions of the ones), drawn without the ``n x d`` bits when the
        mechanism has ``compact_params``; same law as ``perturb_batch`` (``mechanisms.core._compact``)."""
        params = self.compact_params()
        if params is None:
            return _compact.to_compact(self.perturb_batch(key, xs))
        items_s, own_prob, q = params
        return _compact.sample_ones(key, xs, items_s, own_prob, q, self.num_stats, num_chunks)

    def compact_stats(self) -> bool:
        """Whether ``sample_stats`` (simulate's per-user path) and simulate's report path use the compact
        sampler: a compact sampler, ``d >= COMPACT_MIN_D`` and (for a concrete rate) at most ``d / 8`` ones
        expected. Static: decided from the domain alone when the rate is traced."""
        params = self.compact_params()
        if params is None or self.num_stats < _compact.COMPACT_MIN_D:
            return False
        return (not _validate.is_concrete(params[2])) or self.prefers_compact()

    def prefers_compact(self) -> bool:
        """Whether ``ul.perturb`` returns compact reports (size rule of ``mechanisms.core._compact``)."""
        params = self.compact_params()
        if params is None or not _validate.is_concrete(params[2]):
            return False
        items_s, _, q = params
        return _compact.prefers_compact(self.num_stats, 1.0 + len(items_s) * float(np.asarray(q)))

    def sample_stats(self, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``aggregate(perturb_batch(key, xs), weights)`` in distribution (override to skip the reports).

        Mechanisms with ``compact_params`` and ``compact_stats()`` draw the per-bit sums of
        ``perturb_compact(key, xs)`` instead (same key, same values; O(number of ones)).
        """
        if self.compact_stats():
            items_s, own_prob, q = self.compact_params()
            return _compact.sample_counts(key, xs, items_s, own_prob, q, self.num_stats, weights)[0]
        return self.aggregate(self.perturb_batch(key, xs), weights)

    def check_reports(self, ys: Any) -> None:
        """Raises ``TypeError``/``ValueError`` (naming ``ys``) unless ``ys`` is a batch of this mechanism's reports."""
        from_kind = _REPORT_CHECKS.get(self.report_kind)
        if from_kind is not None:
            from_kind(self, ys)
            return
        want = jax.eval_shape(self.perturb_batch, jax.random.key(0), jax.ShapeDtypeStruct((1,), jnp.int32))
        want_def = jax.tree_util.tree_structure(want)
        got_def = jax.tree_util.tree_structure(ys)
        if got_def != want_def:
            raise TypeError(f"Expected ys to be reports of {type(self).__name__}: {describe_reports(want)}, "
                            f"got {describe_reports(ys)}.")
        for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(ys)):
            if (not hasattr(g, "dtype") or jnp.dtype(g.dtype) != w.dtype or jnp.ndim(g) != w.ndim
                    or tuple(jnp.shape(g))[1:] != tuple(w.shape)[1:]):
                raise TypeError(f"Expected ys to be reports of {type(self).__name__}: {describe_reports(want)} "
                                f"(leading axis = users), got {describe_reports(ys)}.")

    # ---- estimation -----------------------------------------------------------------------------------------
    def stats_matrix(self) -> jax.Array:
        """``A float[d, num_stats]`` with ``E[stats] / n = p @ A``, read off the channel (small domains)."""
        Q = jnp.asarray(self.channel_matrix()[0])
        if self.report_kind == "item" and self.num_stats == self.num_outputs:
            return Q
        if self.report_kind == "bits" and 2**self.num_stats == self.num_outputs:
            return Q @ jnp.asarray(bits_table(self.num_stats), Q.dtype)
        raise NotImplementedError(f"{type(self).__name__}: define stats_matrix() for report_kind={self.report_kind!r}.")

    def support_affine(self) -> tuple[jax.Array, jax.Array] | None:
        """``(a, b)`` with ``E[stats_j] / n = a_j p_j + b_j`` when the statistic is per-item affine, else ``None``."""
        return None

    def debias(self, stats: jax.Array, n: Any) -> jax.Array:
        r"""The empirical (unbiased) estimate :math:`\hat p` from ``stats`` of ``n`` reports (001 eq 3).

        Default: the per-item affine inverse when ``support_affine()`` gives one, otherwise the least-squares
        solution of ``p @ stats_matrix() = stats / n`` (exact channel inversion).
        """
        affine = self.support_affine()
        if affine is not None:
            a, b = affine
            f = jnp.asarray(stats, dtype=a.dtype) / jnp.asarray(n, dtype=a.dtype)
            return (f[: a.shape[0]] - b) / a
        A = self.stats_matrix()
        f = jnp.asarray(stats, dtype=A.dtype) / jnp.asarray(n, dtype=A.dtype)
        return f @ jnp.linalg.pinv(A)

    def debias_variance(self, p: jax.Array, n: Any) -> jax.Array:
        """``float[d]``: per-item variance of ``debias`` in the iid model.

        Follows the mechanism's own ``debias``: a class that overrides ``debias`` (and not this method) gets
        the exact variance of that estimator from its channel (``debias_variance_from_channel``), so
        ``emp+thr``'s null variance and ``ul.theory`` describe the estimator that actually runs.
        """
        if type(self).debias is not Mechanism.debias:
            return self.debias_variance_from_channel(p, n)
        affine = self.support_affine()
        if affine is not None:
            return affine_variance(affine, p, n)
        if self.report_kind != "item":
            raise NotImplementedError(f"{type(self).__name__}: define debias_variance().")
        A = self.stats_matrix()
        W = jnp.linalg.pinv(A)  # [m, d]
        mom = p @ A
        return (mom @ W**2 - (mom @ W) ** 2) / n

    def debias_variance_from_channel(self, p: jax.Array, n: Any) -> jax.Array:
        """iid per-item variance of this mechanism's ``debias`` (assumed affine in ``stats``), from the channel.

        One report ``y`` adds ``S[y]`` to the statistic (items: ``e_y``; bit vectors: their bits), so it adds
        ``G[y] = S[y] @ W`` to ``debias`` with ``W[k] = debias(e_k, 1) - debias(0, 1)``; the variance is
        ``(E[G^2] - E[G]^2) / n`` with ``y ~ p @ Q``. Traceable; small domains (it reads ``channel_matrix``).
        """
        Q = jnp.asarray(self.channel_matrix()[0])
        k = int(self.num_stats)
        if self.report_kind == "item" and k == self.num_outputs:
            S = jnp.eye(k, dtype=Q.dtype)
        elif self.report_kind == "bits" and 2**k == self.num_outputs:
            S = jnp.asarray(bits_table(k), Q.dtype)
        else:
            raise NotImplementedError(f"{type(self).__name__} overrides debias for report_kind="
                                      f"{self.report_kind!r}: define debias_variance() too.")
        one = jnp.ones((), Q.dtype)
        c = self.debias(jnp.zeros(k, Q.dtype), one)
        W = jax.vmap(lambda e: self.debias(e, one))(jnp.eye(k, dtype=Q.dtype)) - c  # [k, d]
        G = S @ W  # [m, d]: one report's contribution
        mom = jnp.asarray(p, Q.dtype) @ Q
        return (mom @ G**2 - (mom @ G) ** 2) / n

    # ---- capabilities with a "none" default -------------------------------------------------------------------
    def count_sampler(self) -> Callable[..., jax.Array] | None:
        """An exact count-level sampler ``fn(key, counts float[d]) -> stats`` (fixed model), or ``None``.

        ``fn`` has exactly the law of ``aggregate(perturb_batch(key, xs))`` for any ``xs`` with
        ``bincount(xs) == counts`` (floats carrying exact integers; the engine runs it under float64). ``None``
        makes the engine draw every user's report (the per-user path). Building blocks: ``mechanisms.core._counts``.
        """
        return None

    def iid_count_sampler(self) -> Callable[..., jax.Array] | None:
        """An exact sampler ``fn(key, n, p float[d]) -> stats`` for ``n`` users drawn iid from ``p``, or ``None``.

        Optional even with a ``count_sampler`` (the engine then draws ``Multinomial(n, p)`` true counts first);
        override it when the iid law is cheaper (one ``Multinomial(n, p Q)``) or the only one available (SS). A
        mechanism with an iid sampler but no ``count_sampler`` should also accept ``P`` independent populations,
        ``n float[P]`` with ``p float[P, d]``, returning the stats of their union (GLUTF's go users need it).
        """
        return None

    def count_draws(self, iid: bool) -> float:
        """Exact draws per repetition of the count sampler (binomials, multinomial cells), for the engine's cost.

        ``simulate(path="auto")`` compares this (times the cost of a binomial) with the per-user path's random
        words (``n`` users) and takes the cheaper exact path; it also sizes the counts path's repetition chunks
        from it. Default ``d + num_stats``: the true counts (``Multinomial(n, p)``, iid model) and O(1) draws per
        statistic. Override when the sampler draws more (``sum_x Multinomial(n_x, Q[x])`` over ``m`` outputs:
        ``d m`` cells).
        """
        return float(self.d + self.num_stats)

    def count_memory(self, iid: bool) -> float | None:
        """Bytes of temporaries one repetition of the count sampler holds at once, or ``None`` (the default).

        ``None``: the engine estimates them from ``count_draws`` (every draw held at once, as in multinomial
        splitting). Override when the draws are sequential (SS's scan holds O(k) bins, not its O(d k) draws), so
        that the repetition chunks and ``path="auto"``'s memory check use the real size.
        """
        return None

    def tunable_params(self) -> tuple[str, ...]:
        """Names of the parameters that tuning may change (besides ``eps``).

        Default: the tunable parameter of ``closed_form_family`` (its ``domain``/``integer`` give the constraint
        that ``ul.tuning`` maps to an unconstrained scale for optax), else none.
        """
        fam = self.closed_form_family
        return () if fam is None or fam.param is None else (fam.param,)

    def comm_bits(self) -> float:
        """Bits a user sends (``log2`` of the report space)."""
        return float(math.log2(self.num_outputs))

    # ---- questions theory, tuning and GLUTF ask ---------------------------------------------------------------
    # A ``Family`` record (``mechanisms/core/_family.py``) with the closed-form risk and tunable parameter, or
    # ``None``: ``ul.theory`` then computes risks exactly from the channel moments (``theory/_exact.py``).
    closed_form_family: ClassVar[Any] = None

    def closed_form(self) -> Any:
        """This instance's closed-form ``Family`` (default: the class's ``closed_form_family``), or ``None``."""
        return self.closed_form_family

    def pure_pq(self) -> tuple[Any, Any] | None:
        """``(p*, q*)`` as traceable JAX values when this is a pure LDP mechanism (003 Def 6), else ``None``.

        GLUTF uses it for its ``f`` (003 eq 9) and debiasing.
        """
        return None

    def pure_uldp_probs(self) -> tuple[Any, Any, Any] | None:
        """``(p*, q*, z*)`` of a pure ULDP mechanism from its own parameters (003 Def 6), else ``None``."""
        return None

    def channel_support(self) -> np.ndarray | None:
        """``float64 [num_outputs, d]``: 1 where channel column ``y`` supports item ``j`` (the per-item statistic).

        Default: item reports support themselves, bit vectors their set bits; ``None`` for other report spaces
        (hashed and set-valued reports define it).
        """
        m, d = int(self.num_outputs), int(self.d)
        if self.report_kind == "item":
            return np.eye(m, d)
        if self.report_kind == "bits" and 2 ** int(self.num_stats) == m and int(self.num_stats) >= d:
            return bits_table(int(self.num_stats))[:, :d].astype(np.float64)
        return None

    def report_index(self, ys: Any) -> np.ndarray:
        """int64 channel column of each report (items as is; bit vectors as ``sum_j bit_j 2^j``).

        Mechanisms with other report spaces define it (their documented column order of ``channel_matrix``).
        """
        if self.report_kind == "item":
            return np.asarray(ys).astype(np.int64)
        if self.report_kind == "bits":
            ys = np.asarray(_compact.to_dense(ys))
            return (ys.astype(np.int64) << np.arange(ys.shape[-1])).sum(axis=-1)
        raise NotImplementedError(f"{type(self).__name__} reports {self.report_kind!r}; define report_index().")

    def with_tuned(self, value: Any, theta_n: Any = None) -> Any:
        """A copy with the closed form's tunable parameter set to ``value`` (``ul.tune``'s result).

        ``theta_n`` is the non-sensitive mass the tuning assumed (kept by mechanisms that record it).
        """
        return replace(self, **{self.closed_form().param: value})

    def glutf_share(self) -> Any:
        r""":math:`\max_{i,m} p_{im}/\sum_t p_{tm}` over this (base) mechanism's outputs in closed form, or
        ``None``: GLUTF then reads it off the exact channel."""
        return None

    def glutf_z_max(self, s: int) -> Any:
        """Closed form of GLUTF's largest valid ``z`` over this base with ``s`` sensitive items, or ``None``."""
        return None

    def glutf_z_published(self) -> Any:
        """003's published (ULDP-violating) ``z`` for this base, or ``None`` when 003 publishes none."""
        return None


def _hashable(v: Any) -> Any:
    """A hashable stand-in for a field value (arrays by shape and float64 bytes; sequences as tuples)."""
    if isinstance(v, Mechanism):
        return hash(v)
    if isinstance(v, (np.ndarray, jax.Array, np.generic)):
        arr = np.asarray(v)
        if arr.dtype.kind in "fiub":
            arr = arr.astype(np.float64)
        return (arr.shape, arr.tobytes())
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, float):
        return (), np.float64(v).tobytes()
    if isinstance(v, int) and not isinstance(v, bool):
        return (), np.float64(v).tobytes() if abs(v) < 2**53 else v
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def affine_variance(affine: tuple[Any, Any], p: jax.Array, n: Any) -> jax.Array:
    """iid per-item variance ``f (1 - f) / (n a^2)``, ``f = a p + b``, of the affine estimator ``(stats/n - b)/a``."""
    a, b = affine
    f = a * p + b
    return f * (1.0 - f) / (jnp.asarray(n, a.dtype) * a**2)


def describe_reports(tree: Any) -> str:
    """``HashReport(seed: uint32[n], value: int32[n])``-style description of a report pytree (``n`` = users)."""
    def leaf(v: Any) -> str:
        if not hasattr(v, "dtype") or not hasattr(v, "shape"):
            return type(v).__name__
        return f"{np.dtype(v.dtype).name}[{', '.join(['n'] + [str(k) for k in tuple(v.shape)[1:]])}]"

    if hasattr(tree, "_fields"):
        return f"{type(tree).__name__}(" + ", ".join(f"{f}: {leaf(getattr(tree, f))}" for f in tree._fields) + ")"
    return leaf(tree)


def _check_item_reports(mech: Mechanism, ys: Any) -> None:
    if isinstance(ys, (list, tuple)) and not hasattr(ys, "_fields"):
        ys = np.asarray(ys)
    if hasattr(ys, "_fields") or not hasattr(ys, "dtype") or np.dtype(ys.dtype).kind not in "iu":
        raise TypeError(f"Expected ys to be item reports of {type(mech).__name__}: int32[n] in "
                        f"[0, {mech.num_outputs}), got {describe_reports(ys)}.")
    _validate.check_items("ys", ys, mech.num_outputs, ndim=1)


def _check_bit_reports(mech: Mechanism, ys: Any) -> None:
    if isinstance(ys, _compact.CompactBits):
        _compact.check(mech, ys)
        return
    if hasattr(ys, "_fields") or not hasattr(ys, "dtype") or jnp.dtype(ys.dtype) != jnp.bool_:
        raise TypeError(f"Expected ys to be bit-vector reports of {type(mech).__name__}: "
                        f"bool[n, {mech.num_stats}], got {describe_reports(ys)}.")
    if ys.ndim != 2 or ys.shape[1] != mech.num_stats:
        raise ValueError(f"Expected ys with shape [n, {mech.num_stats}], got {tuple(ys.shape)}.")


_REPORT_CHECKS = {"item": _check_item_reports, "bits": _check_bit_reports}


def unbatch(mech: Mechanism) -> list[Mechanism]:
    """The elements of a grid of mechanisms (``mech.batch_shape`` leading on every leaf), in C order.

    A single mechanism gives ``[mech]``.
    """
    shape = mech.batch_shape
    if not shape:
        return [mech]
    leaves = jax.tree_util.tree_leaves(mech)
    for leaf in leaves:
        if tuple(jnp.shape(leaf))[: len(shape)] != shape:
            raise ValueError(f"Expected every leaf of the grid {type(mech).__name__} to lead with batch shape "
                             f"{shape}, got a leaf of shape {jnp.shape(leaf)}.")
    return [jax.tree.map(lambda v, i=i: v[i], mech) for i in np.ndindex(*shape)]
