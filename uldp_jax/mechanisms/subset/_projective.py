r"""Points of the projective space :math:`P^{t-1}(\mathbb F_q)` (``q`` prime) as integers, for PGR and HPGR.

A point is a canonical vector of :math:`\mathbb F_q^t` (its first non-zero coordinate is 1), numbered as in
minilek/private_frequency_oracles ``util.cc``: by the position of the leading 1 from the right (``b`` free trailing
coordinates come after the ``(q^b - 1)/(q - 1)`` points with fewer), then by the trailing digits in base ``q``,
most significant first. There are ``K = (q^t - 1)/(q - 1)`` points; the hyperplane orthogonal to a point holds
``cset = (q^{t-1} - 1)/(q - 1)`` of them and two hyperplanes share ``cint = (q^{t-2} - 1)/(q - 1)``.

Everything is int32 arithmetic: the constructor keeps ``q^t < 2^31`` (so ``q^2 < 2^31`` too).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _uniform

INT32_LIMIT = 2**31


def is_prime(q: int) -> bool:
    return q >= 2 and all(q % f for f in range(2, int(q**0.5) + 1))


def exact_sums(q: int, t: int) -> bool:
    """Whether ``hyperplane``'s sums (below ``t q^2``) are exact in float32 (and indices fit int32)."""
    return t * q * q < 2**24 and q**t < INT32_LIMIT


def next_prime(q: int) -> int:
    """The smallest prime ``>= q``."""
    q = max(int(q), 2)
    while not is_prime(q):
        q += 1
    return q


def dimension(d: int, q: int) -> int:
    """The smallest ``t >= 2`` with ``(q^t - 1)/(q - 1) >= d``."""
    t = 2
    while (q**t - 1) // (q - 1) < d:
        t += 1
    return t


def num_points(q: int, t: int) -> int:
    return (q**t - 1) // (q - 1)


def inverse_table(q: int) -> np.ndarray:
    """``int32[q]``: multiplicative inverses mod ``q`` (entry 0 unused, set to 0)."""
    inv = np.zeros(q, np.int64)
    inv[1:] = [pow(a, q - 2, q) for a in range(1, q)]
    return inv.astype(np.int32)


def index_to_vec(j: jax.Array, q: int, t: int) -> jax.Array:
    """``int32[..., t]``: the canonical vectors of point indices ``j: int32[...]`` (``util.cc``'s order)."""
    starts = np.array([num_points(q, b) for b in range(t)], np.int64)  # first index with b free coordinates
    b = jnp.sum(j[..., None] >= jnp.asarray(starts[1:], jnp.int32), axis=-1)  # free trailing coordinates
    r = j - jnp.asarray(starts, jnp.int32)[b]
    pos = jnp.arange(t, dtype=jnp.int32)
    lead = t - 1 - b
    place = jnp.asarray([q ** (t - 1 - c) for c in range(t)], jnp.int32)  # q^(t-1-c) < q^t < 2^31
    digits = (r[..., None] // place) % q
    return jnp.where(pos > lead[..., None], digits, (pos == lead[..., None]).astype(jnp.int32))


def vec_to_index(v: jax.Array, q: int, t: int) -> jax.Array:
    """``int32[...]``: the index of canonical vectors ``v: int32[..., t]``."""
    place = jnp.asarray([q ** (t - 1 - c) for c in range(t)], jnp.int32)
    value = jnp.sum(v * place, axis=-1)  # < q^t < 2^31
    lead = jnp.argmax(v != 0, axis=-1)
    top = place[lead]  # q^b: the leading 1's place
    return value - top + (top - 1) // (q - 1)


def canonicalize(v: jax.Array, q: int, inv: jax.Array) -> jax.Array:
    """Scales non-zero vectors ``v: int32[..., t]`` so their first non-zero coordinate is 1."""
    lead = jnp.take_along_axis(v, jnp.argmax(v != 0, axis=-1)[..., None], axis=-1)
    return (v * inv[lead]) % q


def dot(u: jax.Array, v: jax.Array, q: int) -> jax.Array:
    """``<u, v> mod q`` over the last axis (each product below ``q^2 < 2^31``, summed mod ``q`` as it goes)."""
    acc = jnp.zeros(jnp.broadcast_shapes(u.shape[:-1], v.shape[:-1]), jnp.int32)
    for c in range(u.shape[-1]):
        acc = (acc + u[..., c] * v[..., c]) % q
    return acc


def complete(free: jax.Array, u: jax.Array, lead: jax.Array, target: jax.Array, q: int) -> jax.Array:
    """``int32[..., t]``: the vector with coordinates ``free: int32[..., t - 1]`` off position ``lead`` (where
    ``u`` has its leading 1) and there the value making ``<x, u> = target mod q``."""
    t = u.shape[-1]
    cols = []
    for c in range(t):
        left = free[..., c] if c < t - 1 else jnp.zeros_like(free[..., 0])
        right = free[..., c - 1] if c > 0 else jnp.zeros_like(free[..., 0])
        cols.append(jnp.where(c < lead, left, right))
    x = jnp.stack(cols, axis=-1)
    x = jnp.where(jnp.arange(t) == lead[..., None], 0, x)
    rest = dot(x, u, q)
    fill = (target - rest) % q
    return jnp.where(jnp.arange(t) == lead[..., None], fill[..., None], x)


def placed_index_table(q: int, t: int) -> np.ndarray:
    """``int32[t, cset]``: row ``g`` holds the index of the canonical vector of :math:`P^{t-2}` number ``slot``
    with a 0 inserted at position ``g`` (the vectors of ``hyperplane`` before their solved coordinate)."""
    cset = num_points(q, t - 1)
    with jax.ensure_compile_time_eval():
        w = np.asarray(index_to_vec(jnp.arange(cset, dtype=jnp.int32), q, t - 1), np.int64)
    place = np.array([q ** (t - 1 - c) for c in range(t)], np.int64)
    rows = []
    for g in range(t):
        x = np.insert(w, g, 0, axis=1)
        lead = np.argmax(x != 0, axis=1)
        top = place[lead]
        rows.append(x @ place - top + (top - 1) // (q - 1))
    return np.stack(rows).astype(np.int32)


def hyperplane(u: jax.Array, q: int, t: int, inv: jax.Array, table: jax.Array) -> jax.Array:
    r"""``int32[B, cset]``: the indices of the points orthogonal to canonical vectors ``u: int32[B, t]``.

    Solve for ``u``'s *last* non-zero coordinate ``g``: the other coordinates run over the points ``w`` of
    :math:`P^{t-2}` and :math:`x_g = -u_g^{-1}\sum_{c<g} u_c w_c` (``u`` is 0 after ``g``). The result is
    already canonical (if ``w``'s leading 1 lies after ``g``, the sum is empty and ``x_g = 0``), so its index is
    ``table[g, slot] + x_g q^{t-1-g}`` (``placed_index_table``), and the sums for all slots are one matrix
    product ``u W^T`` (exact in float32: every sum is below ``t q^2 < 2^24``, checked by the caller).
    """
    cset = num_points(q, t - 1)
    w = index_to_vec(jnp.arange(cset, dtype=jnp.int32), q, t - 1).astype(jnp.float32)  # [cset, t - 1]
    g = (t - 1) - jnp.argmax(u[:, ::-1] != 0, axis=-1)  # last non-zero coordinate
    head = jnp.where(jnp.arange(t - 1) < g[:, None], u[:, : t - 1], 0).astype(jnp.float32)
    sums = jnp.dot(head, w.T, precision=jax.lax.Precision.HIGHEST,  # no TF32 on GPUs: integers need all 24 bits
                   preferred_element_type=jnp.float32).astype(jnp.int32) % q  # [B, cset]
    ug = jnp.take_along_axis(u, g[:, None], axis=-1)
    xg = ((q - sums) % q) * inv[ug] % q
    power = jnp.asarray([q ** (t - 1 - c) for c in range(t)], jnp.int32)[g]
    return table[g] + xg * power[:, None]


def draw(key: jax.Array, v: jax.Array, on: jax.Array, q: int, t: int) -> jax.Array:
    r"""``int32[...]``: a uniform point on (``on``) or off the hyperplane of canonical vectors ``v: int32[..., t]``.

    On: a uniform point of :math:`P^{t-2}` for the coordinates off ``v``'s leading 1, that one solved for
    :math:`\langle u, v\rangle = 0`. Off: a uniform vector of :math:`\mathbb F_q^{t-1}` there and a uniform
    non-zero value of the product (each off point has one representative per value), then canonical form.
    Exact uniform integers (``_uniform``), no rejection.
    """
    k_on, k_free, k_val = jax.random.split(key, 3)
    shape = on.shape
    lead = jnp.argmax(v != 0, axis=-1)
    on_free = index_to_vec(_uniform.uniform_ints(k_on, num_points(q, t - 1), shape), q, t - 1)
    r = _uniform.uniform_ints(k_free, q ** (t - 1), shape)
    place = jnp.asarray([q ** (t - 2 - c) for c in range(t - 1)], jnp.int32)
    value = jnp.where(on, 0, 1 + _uniform.uniform_ints(k_val, q - 1, shape))
    u = complete(jnp.where(on[..., None], on_free, (r[..., None] // place) % q), v, lead, value, q)
    return vec_to_index(canonicalize(u, q, jnp.asarray(inverse_table(q))), q, t)
