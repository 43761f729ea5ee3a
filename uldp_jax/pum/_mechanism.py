"""Personalized ULDP mechanism with semantic tags (PUM, 001 §5.1).

A PUM is a common (Z_S, Y_P, eps)-utility-optimized mechanism ``Q_cmn`` over the intermediate domain
``Z = X ∪ {bot_1, ..., bot_K}`` (item ``d + k`` is ``bot_{k+1}``), with ``Z_S = X_S ∪ bots``, composed with a
per-user pre-processor ``f_pre^(i)`` (001 eq 19) that maps the user's own sensitive items of tag ``k`` to
``bot_k`` and every other item to itself.

Per-user sensitive sets are compact: ``personal`` is ``int[n, K]`` (one item per tag) or ``int[n, K, r]`` (up to
``r`` items per tag), ``-1`` meaning "none"; memory is ``O(n K r)``, never ``O(n d)``. When one user lists an
item under two tags, the lowest tag index wins (``f_pre`` must be a function).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _delegate, _pytree, _records, _report_space, _spec
from uldp_jax.mechanisms.rr import URR
from uldp_jax.mechanisms.unary import URAP

_BASES = {"urr": URR, "urap": URAP}


def preprocess(d: int, xs: jax.Array, personal: jax.Array) -> jax.Array:
    """The pre-processors ``f_pre^(i)`` (001 eq 19), batched: ``int32`` intermediate items in ``[0, d + K)``.

    Args:
      d: size of ``X``.
      xs: ``int32[...]`` true items in ``[0, d)``.
      personal: ``int[..., K]`` or ``int[..., K, r]`` with the leading shape of ``xs``: each user's own
        sensitive items per tag (``-1`` = none).

    Returns:
      ``int32[...]``: ``d + k`` where ``xs`` is one of the user's items of tag ``k`` (lowest ``k`` wins),
      else ``xs``.
    """
    xs = jnp.asarray(xs, jnp.int32)
    personal = jnp.asarray(personal, jnp.int32)
    extra = personal.ndim - xs.ndim
    if extra == 2:
        match = jnp.any(personal == xs[..., None, None], axis=-1)
    elif extra == 1:
        match = personal == xs[..., None]
    else:
        raise ValueError(f"Expected personal with rank {xs.ndim + 1} or {xs.ndim + 2}, got shape {personal.shape}.")
    tag = jnp.argmax(match, axis=-1).astype(jnp.int32)
    return jnp.where(jnp.any(match, axis=-1), d + tag, xs).astype(jnp.int32)


def preprocess_np(d: int, xs: np.ndarray, personal: np.ndarray) -> np.ndarray:
    """NumPy twin of ``preprocess`` for exact channels and audits (never shares code with the sampler)."""
    xs = np.asarray(xs, np.int64)
    personal = np.asarray(personal, np.int64)
    if personal.ndim == xs.ndim + 1:
        personal = personal[..., None]
    match = np.any(personal == xs[..., None, None], axis=-1)
    return np.where(match.any(axis=-1), d + match.argmax(axis=-1), xs)


class PUM(_delegate.ReportsOf, _base.Mechanism):
    r"""Personalized ULDP mechanism with ``num_tags`` semantic tags (001 §5.1), ``Q^(i) = Q_cmn o f_pre^(i)``.

    ``Q_cmn`` is a (Z_S, eps)-uRR (``base="urr"``), a (Z_S, eps)-uRAP (``base="urap"``), or any mechanism
    instance of this library over ``Z`` (``d + num_tags`` items) whose sensitive set is ``X_S ∪ bots`` (or an
    LDP mechanism over ``Z``). ``ul.channel(mech)`` and ``ul.audit(mech)`` see ``Q_cmn``; the composite channel
    of one user type is ``mech.user(personal).channel_matrix()``.

    Privacy: user ``i`` gets (X_S ∪ X_S^(i), Y_P, eps)-ULDP (001 Prop 9), and for any users ``i, j``, input ``x``
    and protected report ``y``, ``Q^(i)(y|x) <= e^eps Q^(j)(y|x)`` (001 Prop 10), so protected reports hide
    ``X_S^(i)``. Items in ``X_N \ X_S^(i)`` may be reported invertibly (which reveals they are not sensitive
    for the user). Both are checked on exact channels by ``ul.pum.audit_pum``.

    Attributes:
      d: size of ``X`` (static); ``ul.perturb`` takes items in ``[0, d)``.
      sensitive: sorted tuple ``X_S`` (static; may be empty).
      num_tags: number of bots / semantic tags ``K >= 1`` (static).
      cmn: the common mechanism over ``Z`` (a pytree child: its leaves, e.g. ``eps``, are this PUM's leaves).

    References:
      Murakami & Kawamoto (USENIX Security 2019), §5.
    """

    d: int = _pytree.static_field()
    sensitive: Any = _pytree.static_field()
    num_tags: int = _pytree.static_field()
    cmn: Any

    def __init__(self, d: Any, sensitive: Any, num_tags: Any, eps: Any = None, base: Any = "urr"):
        d, sensitive, num_tags, z_s = _check_sizes(d, sensitive, num_tags)
        if isinstance(base, str):
            if base.lower() not in _BASES:
                raise ValueError(f"Expected base={base!r} in {sorted(_BASES)} or a mechanism instance over Z.")
            if eps is None:
                raise TypeError("Expected eps=None to be a privacy budget > 0 when base is a name.")
            cmn = _BASES[base.lower()](d + num_tags, z_s, eps)
        else:
            cmn = _check_base(base, d, num_tags, z_s, eps)
        for name, value in (("d", d), ("sensitive", sensitive), ("num_tags", num_tags), ("cmn", cmn)):
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __post_init__(self):
        """Checks the fields (the constructor's last step; ``ul.replace`` runs it on the replaced fields)."""
        d, sensitive, num_tags, z_s = _check_sizes(self.d, self.sensitive, self.num_tags)
        _check_base(self.cmn, d, num_tags, z_s, None, "cmn")
        for name, value in (("d", d), ("sensitive", sensitive), ("num_tags", num_tags)):
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"PUM(d={self.d}, sensitive={self.sensitive}, num_tags={self.num_tags}, cmn={self.cmn!r})"

    # ---- protocol attributes (delegated to Q_cmn) ----
    @property
    def eps(self) -> Any:
        return self.cmn.eps

    @property
    def num_z(self) -> int:
        """Size of the intermediate domain ``Z`` (``d + num_tags``)."""
        return self.d + self.num_tags

    def likelihood(self) -> _records.Likelihood:
        """The reports' channel columns are ``Q_cmn``'s; the channel's rows are the ``d + num_tags`` items of ``Z``
        (a user's tag enters as a bot item)."""
        return super().likelihood()._replace(inputs=self.num_z)

    @property
    def bots(self) -> tuple[int, ...]:
        return tuple(range(self.d, self.num_z))

    @property
    def reporter(self) -> Any:
        """Reports are the common mechanism's (over ``Z``)."""
        return self.cmn

    # ---- sampling ----
    def check_personal(self, personal: Any, xs_shape: tuple[int, ...]) -> jax.Array:
        """Checks the shape (always) and values (when concrete) of ``personal``; returns it as an array."""
        if isinstance(personal, (list, tuple)):
            personal = np.asarray(personal)
        if not hasattr(personal, "dtype") or np.dtype(personal.dtype).kind not in "iu":
            raise TypeError(f"Expected personal to be an integer array, got {getattr(personal, 'dtype', personal)!r}.")
        lead = tuple(xs_shape)
        shape = tuple(personal.shape)
        if personal.ndim not in (len(lead) + 1, len(lead) + 2) or shape[: len(lead)] != lead:
            raise ValueError(f"Expected personal with shape {lead + ('num_tags',)} or {lead + ('num_tags', 'r')}, "
                             f"got {shape}.")
        if shape[len(lead)] != self.num_tags:
            raise ValueError(f"Expected personal to have num_tags={self.num_tags} tag columns (axis {len(lead)}), "
                             f"got {shape[len(lead)]}: a tag index >= num_tags or a missing tag.")
        if _validate.is_concrete(personal) and personal.size:
            arr = np.asarray(personal)
            bad = arr[(arr < -1) | (arr >= self.d)]
            if bad.size:
                raise ValueError(f"Expected every entry of personal in [0, {self.d}) or -1 (none), got {bad[0]}.")
            in_xs = np.isin(arr, np.asarray(self.sensitive, np.int64))
            if in_xs.any():
                raise ValueError(f"Expected personal items outside sensitive (X_S, already protected for all users), "
                                 f"got item {arr[in_xs][0]}.")
        return jnp.asarray(personal, jnp.int32)

    def preprocess(self, xs: jax.Array, personal: jax.Array) -> jax.Array:
        """``f_pre^(i)(x_i)`` for every user: ``int32`` items of ``Z`` (see module ``preprocess``)."""
        return preprocess(self.d, xs, personal)

    def perturb_batch(self, key: jax.Array, xs: jax.Array, personal: Any) -> Any:
        """Randomizes ``xs: int32[...]`` with each user's pre-processor, then ``Q_cmn`` (batched draws).

        Args:
          key: PRNG key; consumed.
          xs: ``int32[...]`` true items in ``[0, d)``.
          personal: ``int[..., num_tags]`` or ``int[..., num_tags, r]``: each user's items per tag, ``-1`` = none.

        Returns:
          ``Q_cmn`` reports of the intermediate items (``int32[...]`` for uRR, ``bool[..., d + K]`` for uRAP).
        """
        personal = self.check_personal(personal, jnp.shape(xs))
        return self.cmn.perturb_batch(key, self.preprocess(xs, personal))

    def perturb_one(self, key: jax.Array, x: jax.Array, personal: Any) -> Any:
        return self.perturb_batch(key, jnp.asarray(x), personal)

    def compact(self) -> Any:
        """``CompactBits`` reports (the positions of the ones), preferred as the common mechanism's (a uRAP over a
        large ``Z``): its compact sampler on each user's pre-processed item, the same law as ``perturb_batch``
        without the ``n x (d + K)`` bits; ``perturb(key, xs, personal, num_chunks=None)``."""
        cmn = self.cmn.compact()
        if cmn is None:
            return None

        def perturb(key: jax.Array, xs: jax.Array, personal: Any, num_chunks: int | None = None) -> Any:
            personal = self.check_personal(personal, jnp.shape(xs))
            return cmn.perturb(key, self.preprocess(xs, personal), num_chunks)

        return _records.Compact(perturb, cmn.preferred)

    def estimator(self) -> Any:
        """Refuses: PUM's reports estimate ``r`` over ``Z`` (use ``ul.pum_estimate``)."""
        raise TypeError(
            "PUM reports estimate r over Z, and p needs the bot distributions: use "
            "ul.pum_estimate(mech, ys, prior=..., method=...) instead of ul.estimate / ul.simulate."
        )

    # ---- exact channels ----
    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """``Q_cmn`` over ``Z`` (rows ``0..d-1`` items, ``d..d+K-1`` bots) with its protected mask."""
        return self.cmn.channel_matrix()

    def privacy_spec(self) -> _spec.PrivacySpec:
        """The common mechanism's guarantee over ``Z``: (Z_S, Y_P, eps)-ULDP."""
        return self.cmn.privacy_spec()

    def reports(self) -> _records.Reports:
        """``Q_cmn``'s statistic, report check and bits sent."""
        return super().reports()._replace(bits=_report_space.comm_bits(self.cmn))

    def user(self, personal: Any) -> "PUMUser":
        """One user type's mechanism ``Q^(i)`` over ``X`` (``personal``: ``int[K]`` or ``int[K, r]``)."""
        return PUMUser(self, self.check_personal(personal, ()))


def _check_sizes(d: Any, sensitive: Any, num_tags: Any) -> tuple[int, tuple[int, ...], int, tuple[int, ...]]:
    """Checked ``d``, ``sensitive`` (leaving ``X_N`` non-empty) and ``num_tags``, with ``Z_S = X_S ∪ bots``."""
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    sensitive = _validate.check_index_set("sensitive", sensitive, d, allow_empty=True)
    if len(sensitive) == d:
        raise ValueError(f"Expected sensitive to leave X_N non-empty, got all d={d} items.")
    num_tags = _validate.check_int("num_tags", num_tags, minimum=1)
    return d, sensitive, num_tags, tuple(sensitive) + tuple(range(d, d + num_tags))


def _check_base(base: Any, d: int, num_tags: int, z_s: tuple[int, ...], eps: Any, name: str = "base") -> Any:
    """Checks the common mechanism ``base`` over ``Z`` (``name``: the argument or field that holds it)."""
    for attr in ("perturb_batch", "channel_matrix", "privacy_spec", "aggregate"):
        if not hasattr(base, attr):
            raise TypeError(f"Expected {name}={base!r} to be 'urr', 'urap' or a uldp_jax mechanism over Z.")
    if getattr(base, "d", None) != d + num_tags:
        raise ValueError(f"Expected {name} over Z with d + num_tags = {d + num_tags} items, got {name}.d="
                         f"{getattr(base, 'd', None)}.")
    if hasattr(base, "sensitive") and tuple(sorted(base.sensitive)) != z_s:
        raise ValueError(f"Expected {name}.sensitive = X_S ∪ bots = {z_s}, got {tuple(base.sensitive)}.")
    if eps is not None:
        if not (_validate.is_concrete(eps) and _validate.is_concrete(base.eps)
                and np.allclose(np.asarray(eps, np.float64), np.asarray(base.eps, np.float64), rtol=1e-12)):
            raise ValueError(f"Expected eps={eps!r} to match {name}.eps={base.eps!r} (or pass eps=None).")
    return base


class PUMUser(_delegate.ReportsOf, _base.Mechanism):
    """One user type of a PUM: ``Q^(i) = Q_cmn o f_pre^(i)`` over ``X``, samplable and auditable.

    ``ul.audit(pum.user(personal))`` checks 001 Prop 9: (X_S ∪ X_S^(i), Y_P, eps)-ULDP, with the items of
    ``X_N \\ X_S^(i)`` allowed on invertible outputs.
    """

    pum: Any
    personal: Any

    @property
    def d(self) -> int:
        return self.pum.d

    @property
    def reporter(self) -> Any:
        """A user's reports are ``Q_cmn``'s (its statistic is over ``Z = X ∪ bot``)."""
        return self.pum.cmn

    @property
    def sensitive(self) -> tuple[int, ...]:
        """``X_S ∪ X_S^(i)``, sorted."""
        own = np.asarray(self.personal).ravel()
        return tuple(sorted(set(self.pum.sensitive) | {int(v) for v in own if v >= 0}))

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> Any:
        xs = jnp.asarray(xs, jnp.int32)
        personal = jnp.broadcast_to(self.personal, xs.shape + self.personal.shape)
        return self.pum.cmn.perturb_batch(key, preprocess(self.d, xs, personal))

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        Q, protected = self.pum.cmn.channel_matrix()
        z = preprocess_np(self.d, np.arange(self.d), np.broadcast_to(np.asarray(self.personal),
                                                                      (self.d,) + tuple(self.personal.shape)))
        return np.asarray(Q, np.float64)[z], np.asarray(protected, bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        spec = self.pum.cmn.privacy_spec()
        if spec.invertible_inputs is None:  # an LDP Q_cmn: nothing is invertible, every row eps-close: LDP
            return _spec.PrivacySpec.ldp(self.d, spec.eps)
        return _spec.uldp_spec(self.d, self.sensitive, spec.eps)

