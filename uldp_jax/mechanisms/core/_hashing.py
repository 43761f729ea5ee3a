"""Seeded hash families shared by the local-hashing mechanisms (OLH, Wheel, and their ULDP versions).

A user draws a seed; the seed is part of the report and names the hash function ``H_seed`` applied to every
item. All arithmetic is ``uint32`` with wrap-around and is written once for NumPy and ``jax.numpy`` (``xp``), so
the exact channels (NumPy, float64) see bit-for-bit the hash values the JAX samplers use.

Families:
  * ``"hash"``: ``H_seed(x) = mix32(seed, x)``, a murmur3-style finaliser; seeds are uniform on ``[0, F)`` with
    ``F = num_hashes`` (``None``: all ``2**32`` seeds). Pairwise collision probabilities are ``1/g`` up to
    ``O(2**-32)`` terms for the full seed range; a small ``F`` gives an explicit finite family for exact channels.
  * ``"full"``: every function ``[0, d) -> [0, g)``, ``H_seed(x) = (seed // g**x) % g`` for ``seed`` in
    ``[0, g**d)`` (``g**d < 2**31``): exactly independent hash values, so OLH is exactly pure (``q* = 1/g``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _pytree, _report_space, _reports

FAMILIES = ("hash", "full")
# Most seeds a "hash" family may name explicitly (int32 sampling); None means all 2**32.
MAX_EXPLICIT_HASHES = 2**31 - 1
# Channels enumerate at most this many hash functions.
MAX_CHANNEL_HASHES = 2**16

_C1 = 0x9E3779B9
_C2 = 0x85EBCA6B
_C3 = 0xC2B2AE35
_C4 = 0x27D4EB2F


def _xp(a: Any):
    return np if isinstance(a, np.ndarray) or np.isscalar(a) else jnp


def mix32(seed: Any, x: Any) -> Any:
    """``uint32`` hash of ``(seed, x)`` (broadcasting); identical under NumPy and ``jax.numpy``."""
    xp = _xp(seed)
    if xp is np:
        with np.errstate(over="ignore"):
            return _mix32(np, seed, x)
    return _mix32(jnp, seed, x)


def _mix32(xp, seed: Any, x: Any) -> Any:
    u = xp.uint32
    seed = xp.asarray(seed).astype(u)
    x = xp.asarray(x).astype(u)
    h = seed * u(_C1) + (x + u(1)) * u(_C4)
    h = h ^ (h >> u(16))
    h = h * u(_C2)
    h = h ^ (h >> u(13))
    h = h * u(_C3)
    h = h ^ (h >> u(16))
    h = (h ^ (seed >> u(7))) * u(_C2)
    return h ^ (h >> u(15))


def unit_interval(h: Any) -> Any:
    """Maps ``uint32`` hashes to ``[0, 1)`` on the grid ``k * 2**-24`` (exact in float32 and float64)."""
    xp = _xp(h)
    dtype = np.float64 if xp is np else jnp.float32
    return (h >> xp.uint32(8)).astype(dtype) * (2.0**-24)


def check_family(family: Any) -> str:
    if family not in FAMILIES:
        raise ValueError(f"Expected family={family!r} in {FAMILIES}.")
    return family


def draw_seeds(key: jax.Array, shape: tuple[int, ...], num_hashes: int | None) -> jax.Array:
    """Uniform seeds in ``[0, num_hashes)`` as ``uint32`` (all ``2**32`` values when ``None``)."""
    if num_hashes is None:
        return jax.random.bits(key, shape, jnp.uint32)
    return jax.random.randint(key, shape, 0, num_hashes, dtype=jnp.int32).astype(jnp.uint32)


def full_powers(g: int, d: int) -> np.ndarray:
    """``uint32[d]`` with ``g**x`` (for the ``"full"`` family; requires ``g**d <= 2**32``)."""
    return np.array([g**x for x in range(d)], dtype=np.uint64).astype(np.uint32)


def hash_values(family: str, g: int, d: int, seeds: Any, items: Any) -> Any:
    """``H_seed(x)`` in ``[0, g)`` as ``uint32`` (broadcasting ``seeds`` against ``items``)."""
    xp = _xp(seeds)
    u = xp.uint32
    seeds = xp.asarray(seeds).astype(u)
    if family == "full":
        powers = xp.asarray(full_powers(g, d))[xp.asarray(items)]
        return (seeds // powers) % u(g)
    return mix32(seeds, items) % u(g)


def check_num_hashes(family: str, num_hashes: Any, g: int, d: int) -> int | None:
    """Validates the family size: ``g**d`` for ``"full"``; ``None`` (2**32) or an int for ``"hash"``."""
    if family == "full":
        size = g**d
        if size > MAX_EXPLICIT_HASHES:
            raise ValueError(f"family='full' needs g**d < 2**31, got g={g}, d={d}; use family='hash'.")
        if num_hashes is not None and num_hashes != size:
            raise ValueError(f"Expected num_hashes={num_hashes!r} to be None or g**d={size} with family='full'.")
        return size
    if num_hashes is None:
        return None
    return _validate.check_int("num_hashes", num_hashes, minimum=1, maximum=MAX_EXPLICIT_HASHES)


def tuned_g(mech: Any, g: Any, theta_n: Any = None) -> Any:
    """OLH's and uLH's closed-form ``rebuild``: a copy with ``g`` set (the ``"full"`` family's size ``g**d``
    follows it) and, for uLH, the assumed ``theta_n`` recorded."""
    changes = {"g": g, "num_hashes": None if mech.family == "full" else mech.num_hashes}
    if theta_n is not None:
        changes["theta_n"] = theta_n
    return _pytree.replace(mech, **changes)


class SeededHash:
    """Mixin of the mechanisms whose report names a hash function by its seed (OLH, Wheel): ``num_hashes`` seeds,
    ``None`` meaning all ``2**32``; a report supports the items it hashes near, so the statistic is the per-item
    support count (``stats = d``), and a report costs the seed's ``log2 F`` bits plus the class's
    ``value_bits()``."""

    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]``: per-item support counts, the sums of the class's ``support(ys)`` (``weights``: 0/1 per
        user)."""
        return _reports.bit_sums(self.support(ys), weights)

    def reports(self) -> _report_space.Reports:
        """003 Def 5: the value's bits (``value_bits()``) plus ``log2 F`` for the seed; statistic of length ``d``."""
        return _report_space.Reports(stats=self.d, bits=float(self.value_bits() + np.log2(float(self.family_size))))

    @property
    def family_size(self) -> int:
        """The number of hash functions a seed names."""
        return 2**32 if self.num_hashes is None else self.num_hashes
