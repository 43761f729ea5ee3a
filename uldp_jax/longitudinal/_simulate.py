"""User value models over ``tau`` rounds and the memoized samplers (one jitted scan over rounds).

Key schedule (fixed, so the same key gives the same run whatever is asked of it): ``key -> (k_perm, k_irr,
k_hash)``; user ``i``'s memo key is ``fold_in(k_perm, i)`` and its permanent response for cell ``c`` is drawn
from ``fold_in(that, c)``: the memo is a pure function of (user, cell), so a user who returns to a value reuses
its permanent response with no state carried. Round ``t``'s instantaneous responses come from
``fold_in(k_irr, t)``; the public hash of user ``i`` from ``fold_in(k_hash, i)``.

Rounds are the leading axis of a ``lax.scan``; users are vectorised (``vmap``/batched draws); no Python loop.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate


def check_trajectory(xs, d: int, name: str = "xs") -> jax.Array:
    """Validates ``int[n, tau]`` values in ``[0, d)`` with ``n, tau >= 1``; returns ``int32``."""
    xs = _validate.check_items(name, xs, d, ndim=2)
    if xs.shape[0] < 1 or xs.shape[1] < 1:
        raise ValueError(f"Expected {name} of shape [n >= 1, tau >= 1], got {tuple(xs.shape)}.")
    return jnp.asarray(xs, jnp.int32)


def fixed_values(x0, tau: int, d: int) -> jax.Array:
    """``int32[n, tau]``: each user holds ``x0[i]`` in every round."""
    tau = _validate.check_int("tau", tau, minimum=1)
    x0 = _validate.check_items("x0", x0, d, ndim=1)
    return jnp.broadcast_to(jnp.asarray(x0, jnp.int32)[:, None], (x0.shape[0], tau))


def changing_values(key, x0, tau: int, d: int, prob) -> jax.Array:
    """``int32[n, tau]``: round 0 is ``x0``; each later round a user moves, w.p. ``prob``, to a value drawn
    uniformly from the ``d - 1`` others (independently across users and rounds)."""
    key = _validate.check_key(key)
    tau = _validate.check_int("tau", tau, minimum=1)
    x0 = jnp.asarray(_validate.check_items("x0", x0, d, ndim=1), jnp.int32)
    prob = float(_validate.as_param("prob", prob, lower=0.0, upper=1.0, lower_open=False, upper_open=False))
    return _changing(key, x0, tau, d, prob)


@functools.partial(jax.jit, static_argnames=("tau", "d"))
def _changing(key, x0, tau, d, prob):
    def step(x, t):
        k_move, k_to = jax.random.split(jax.random.fold_in(key, t))
        move = jax.random.uniform(k_move, x.shape) < prob
        to = (x + 1 + jax.random.randint(k_to, x.shape, 0, d - 1)) % d
        x = jnp.where(move, to, x).astype(jnp.int32)
        return x, x

    _, rest = jax.lax.scan(step, x0, jnp.arange(1, tau))
    return jnp.concatenate([x0[:, None], rest.T], axis=1)


def _setup(key, mech, n):
    k_perm, k_irr, k_hash = jax.random.split(key, 3)
    users = jnp.arange(n)
    ukeys = jax.vmap(jax.random.fold_in, (None, 0))(k_perm, users)
    hrows = jax.vmap(lambda i: mech.hash_row(jax.random.fold_in(k_hash, i)))(users)
    return ukeys, hrows, k_irr


def _round(mech, ukeys, hrows, k_irr, t, x):
    """One round: every user's memo for its current value's cell, then fresh instantaneous responses."""
    cells = jax.vmap(mech.cell)(hrows, x)
    z = jax.vmap(mech.perm)(ukeys, cells)
    return mech.irr(jax.random.fold_in(k_irr, t), z)


@functools.partial(jax.jit, static_argnames=("mech",))
def _counts(key, mech, xs):
    ukeys, hrows, k_irr = _setup(key, mech, xs.shape[0])

    def step(_, tx):
        t, x = tx
        y = _round(mech, ukeys, hrows, k_irr, t, x)
        return None, jnp.sum(mech.support(y, hrows), axis=0, dtype=jnp.int32)

    return jax.lax.scan(step, None, (jnp.arange(xs.shape[1]), xs.T))[1]


@functools.partial(jax.jit, static_argnames=("mech",))
def _reports(key, mech, xs):
    ukeys, hrows, k_irr = _setup(key, mech, xs.shape[0])

    def step(_, tx):
        t, x = tx
        return None, _round(mech, ukeys, hrows, k_irr, t, x)

    return jax.lax.scan(step, None, (jnp.arange(xs.shape[1]), xs.T))[1], hrows


def simulate_counts(key, mech, xs) -> jax.Array:
    """Per-round support counts ``int32[tau, m]`` of a memoized run on trajectories ``xs: int[n, tau]``.

    Only counts leave the scan (O(tau m) memory), which is what the per-round estimator needs.
    """
    return _counts(_validate.check_key(key), mech, check_trajectory(xs, mech.d))


def sample_reports(key, mech, xs):
    """Every report of a memoized run: ``(ys, hrows)`` with ``ys`` of shape ``[tau, n, ...]`` (items or bits)
    and ``hrows`` the users' public hash tables (``None`` without hashing). Same key schedule as
    ``simulate_counts``, so ``support`` of these reports sums to its counts."""
    return _reports(_validate.check_key(key), mech, check_trajectory(xs, mech.d))


def estimate_rounds(mech, counts, n: int) -> jax.Array:
    """``float[tau, m]`` unbiased per-round estimates from ``simulate_counts``' output."""
    n = _validate.check_int("n", n, minimum=1)
    return mech.estimate(jnp.asarray(counts, jnp.float32), n)


def variance_rounds(mech, f, n: int, iid: bool = False) -> np.ndarray:
    """Closed-form variance of ``estimate_rounds`` for true frequencies ``f`` (``[m]`` or ``[tau, m]``)."""
    n = _validate.check_int("n", n, minimum=1)
    return mech.variance(f, n, iid=iid)
