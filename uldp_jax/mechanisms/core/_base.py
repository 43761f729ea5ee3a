"""The mechanism protocol: ``Mechanism``, a frozen-dataclass pytree base class (``static_field`` and the pytree
machinery live in ``_pytree``, ``PrivacySpec`` in ``_spec``, the required-member checks in ``_protocol``, the
estimation defaults in ``_estimation`` and the optional capabilities in ``_capabilities``).

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
``aggregate(ys, weights)``            histogram of items / column sums of bits            hashed, Hadamard reports
``reports()``                         ``None``: a statistic of ``num_outputs`` (items)    hashed / set reports,
                                      or ``d`` (bits) entries, reports checked in the     PUM, GLUTF (stats, check,
                                      item / bit forms or ``perturb_batch``'s             bits); uRAP (sample: no
                                      structure, ``log2(num_outputs)`` bits a report,     n x d bits); uBD
                                      the statistic drawn as ``aggregate(perturb_batch(   (support: items, not its
                                      key, xs), w)`` (the compact sampler when            per-size statistic)
                                      ``compact().stats``), the items a report supports
                                      (set bits, or its own statistic > 0); else a
                                      ``Reports`` record (``stats``, ``check(ys)``,
                                      ``bits``, ``sample``, ``support(ys)``)
``estimator()``                       ``None``: ``debias`` by least squares on the        RR, UE, SS, OLH, Wheel,
                                      channel, variance from it; else an ``Estimator``    E-LDP, GLUTF, HR family
                                      record (the mechanism's own ``debias(stats, n)``,   (own ``debias``: HR family,
                                      per-item affine form, iid variance of ``debias``)   GLUTF)
``counts()``                          ``None``: the engine uses the per-user path; else   GRR, uRR, UE, uRAP, E-LDP,
                                      a ``Counts`` record: exact samplers ``fixed(key,    HR family, SS, GLUTF over a
                                      counts)``, ``iid(key, n, p)`` and their cost        base that has one
                                      (``draws``, ``memory`` per repetition)
``likelihood()``                      ``None``: EM on the channel's columns (items, bit   GRR, uRR, HR family (ops);
                                      patterns); else a ``Likelihood`` record: ``ops``    UE, uRAP (product); SS,
                                      (O(d) ``p Q``, ``Q v``), ``product`` (bit           OLH, Wheel, GLUTF, GRR, UE
                                      vectors), ``report(ys)`` (per-report factors),      (report); hashed / set
                                      ``index(ys)``, ``support()`` (report columns),      reports (index, support);
                                      ``log_channel()`` (the audit's log channel),        UE family, GLUTF (log);
                                      ``inputs`` (the channel's rows; ``d``)              PUM (``d + num_tags``)
``compact()``                         ``None``: no compact reports (else a ``Compact``    UE, uRAP, uUE, PUM
                                      record: sampler, preferred form, parameters)
``closed_form()``                     the class's ``_closed_form`` (``None``: risks       mechanisms with a paper
                                      exact from channel moments); a ``Family`` record    (a class constant), GLUTF
                                      (risk, tunable ``param``, ``tuned(mech, value)``)   family (per instance)
``pure()``                            ``None``: not pure; else a ``Pure`` record (003     GRR, uRR, UE, uRAP, OLH,
                                      Def 6's p*, q*, z*; GLUTF's closed forms)           SS, Wheel, GLUTF family
``pure_probs()``                      ``pure()`` as float64 ``(p*, q*, z*)`` (the GLUTF   --
                                      issue's public name; raises if not pure)
``revealed_inputs(ys)``               ``int32[n]``: -1 for a protected report (``Y_P``),  uRR, uRAP, GLUTF family,
                                      else the input an invertible one reveals; read off  uBD
                                      the exact channel (enumerable reports, concrete
                                      parameters)
====================================  ==================================================  ============================

Generic code (``ul.perturb``, ``ul.estimate``, ``ul.simulate``, ``ul.audit``, ``ul.theory``) calls these members
and never asks a mechanism for its class name. It reads the records through functions of a mechanism in
``ul.mechanisms.core``, which fill the defaults: ``num_stats(mech)``, ``check_reports(mech, ys)``,
``comm_bits(mech)``, ``sample_stats(mech, key, xs, weights)`` and ``supported_items(mech, ys)`` (``reports()``), ``debias(mech, stats, n)`` (``estimator()``), and, for grids,
``grid_shape(mech)`` (the shape of ``eps``) and ``validate_grid(mech, name)``. A class that still defines one
of these names (or another member folded into a record, e.g. ``log_channel_matrix``: ``likelihood()``) is
refused when it is defined, with what to write instead. See README, "Your own mechanism", for a complete example.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, dataclass_transform

import jax
import jax.numpy as jnp

from uldp_jax.mechanisms.core import _compact, _protocol, _pytree, _report_space, _reports
from uldp_jax.mechanisms.core._capabilities import CapabilityDefaults
from uldp_jax.mechanisms.core._estimation import EstimationDefaults
from uldp_jax.mechanisms.core._spec import PrivacySpec


# For type checkers and IDEs (PEP 681): a subclass is a frozen dataclass (``__init_subclass__`` makes it one), its
# fields declared with ``dataclasses.field`` or ``static_field``, so ``ul.GRR(5, 1.0)`` checks against GRR's fields.
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, _pytree.static_field))
class Mechanism(EstimationDefaults, CapabilityDefaults):
    r"""Base class of every mechanism: a frozen dataclass and a JAX pytree, with the protocol's defaults.

    Subclasses declare fields with annotations; ``static_field()`` marks static metadata, every other field is
    a leaf. Do not annotate class-level constants such as ``report_kind`` (plain assignment keeps them out of
    the fields). Validation goes in ``__post_init__`` (use ``object.__setattr__`` to normalise a field).

    Required: ``report_kind``, ``num_outputs``, ``d``, ``perturb_batch(key, xs)`` and ``privacy_spec()``, plus
    ``channel_matrix()`` for exact channels. ``channel_matrix`` may be written with ``jax.numpy`` (it then
    traces under ``jit``/``vmap``); ``ul.channel`` and ``ul.audit`` evaluate it in float64 themselves.
    """

    # Required (``_protocol.REQUIRED``): declared here, defined by every subclass (``__init_subclass__`` checks).
    if TYPE_CHECKING:  # for type checkers: what README's mechanism writes (a field ``d``, a property ``num_outputs``)
        d: int

        @property
        def num_outputs(self) -> int: ...
    else:  # at run time: declared, not defined (a dataclass would read a base-class value as a field's default)
        d: ClassVar[int]
        num_outputs: ClassVar[int]
    report_kind: ClassVar[str] = ""

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        """Makes ``cls`` a frozen dataclass and a pytree, and checks that it declares the required members.

        ``abstract=True`` (``class Base(ul.Mechanism, abstract=True)``) skips the check for a shared base class
        whose subclasses supply the required members.
        """
        super().__init_subclass__(**kwargs)
        _protocol.refuse_annotated_constants(cls)
        _protocol.refuse_folded_members(cls, Mechanism)
        own_hash = "__hash__" in cls.__dict__
        dataclasses.dataclass(frozen=True, repr=False)(cls)  # __repr__ below, unless the class defines its own
        if not own_hash:
            cls.__hash__ = Mechanism.__hash__
        _pytree.register_fields(cls)
        if not abstract:
            _protocol.check_required(cls, Mechanism)

    def __repr__(self) -> str:
        """``Name(field=value, ...)`` with long index sets and arrays summarised (``sensitive=<424 items: 0, 1,
        2, ..., 423>``), so printing a mechanism never floods a terminal."""
        fields = [f"{f.name}={_pytree.short_repr(getattr(self, f.name))}" for f in dataclasses.fields(self) if f.repr]
        return f"{type(self).__name__}({', '.join(fields)})"

    def __hash__(self) -> int:
        """Hash by value: the class, the static fields and the leaves' float64 bytes (equal mechanisms hash
        alike, so they work as dict keys and ``functools.lru_cache`` arguments). A mechanism with traced leaves
        (inside ``jit``/``vmap``) hashes by identity, as its value is unknown."""
        parts: list[Any] = [type(self)]
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.metadata.get(_pytree.STATIC, False):
                parts.append(_pytree.hashable(v))
            elif isinstance(v, jax.core.Tracer):
                return object.__hash__(self)
            else:
                parts.append(_pytree.hashable(v))
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

    # ---- sampling and statistics -------------------------------------------------------------------------
    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        """``int32[num_stats]``: histogram of item reports, or per-bit sums of bit-vector reports.

        ``weights`` (0/1 per user) masks padded users.
        """
        if self.report_kind == "item":
            return _reports.bincount(ys, _report_space.num_stats(self), weights)
        if self.report_kind == "bits":
            if isinstance(ys, _compact.CompactBits):
                return _compact.aggregate(ys, weights)
            return _reports.bit_sums(ys, weights)
        raise NotImplementedError(f"{type(self).__name__} reports {self.report_kind!r}; define aggregate().")
