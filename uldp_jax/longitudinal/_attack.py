"""The longitudinal attack (google/rappor issue #11): a Bayesian adversary guesses a user's fixed value from the
user's ``tau`` reports, with the MAP rule on the exact likelihood of the whole sequence (the memo summed out).

Memoized protocols plateau: the reports reveal at most the permanent response, so success tends to the PRR's
(eps_perm) one-shot success. The naive version (fresh randomness every round at ``eps`` per round) has no
plateau: the reports of a fixed value concentrate on it, and success tends to 1. One scan over ``tau`` rounds
gives the whole curve (every prefix is a shorter run), so a sweep over ``tau`` compiles once.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.longitudinal import _simulate


class AttackCurve(NamedTuple):
    """Simulated MAP success after each round."""

    success: np.ndarray  # float64[tau]: success rate after rounds 1..tau (ties split uniformly)
    se: np.ndarray  # float64[tau]: standard error over the n simulated users


def map_win(ll: jax.Array, x: jax.Array) -> jax.Array:
    """``float[n]``: the MAP guess's probability of hitting ``x`` with ties broken uniformly (the expectation of
    a random tie-break, which has the same mean and less noise than drawing one)."""
    top = jnp.max(ll, axis=1, keepdims=True)
    best = ll >= top - 1e-5 * jnp.maximum(1.0, jnp.abs(top))
    return jnp.take_along_axis(best, x[:, None], 1)[:, 0] / jnp.sum(best, axis=1)


@functools.partial(jax.jit, static_argnames=("mech", "tau", "n"))
def _curve(key, mech, tau, n):
    k_x, k_run = jax.random.split(key)
    x = jax.random.randint(k_x, (n,), 0, mech.d).astype(jnp.int32)
    ukeys, hrows, k_irr = _simulate._setup(k_run, mech, n)

    def step(stats, t):
        y = _simulate._round(mech, ukeys, hrows, k_irr, t, x)
        stats = stats + mech.attack_stat(y, hrows)
        win = map_win(mech.seq_loglik(stats, (t + 1).astype(jnp.float32), hrows), x)
        return stats, (jnp.mean(win), jnp.std(win))

    stats0 = jnp.zeros((n, mech.g if mech.report_kind == "item" else mech.d), jnp.float32)
    _, (mean, sd) = jax.lax.scan(step, stats0, jnp.arange(tau))
    return mean, sd / jnp.sqrt(n)


def attack_curve(key, mech, tau: int, n: int) -> AttackCurve:
    """Simulated success of the MAP adversary against ``tau`` rounds, for ``n`` users with values uniform on
    ``[0, d)`` held fixed (the adversary knows the protocol, the prior and each user's public hash).

    Args:
      key: PRNG key; consumed.
      mech: a memoized protocol, or its ``mech.naive(eps)`` version.
      tau: rounds, ``>= 1``.
      n: simulated users, ``>= 1`` (memory ``O(n d^2)`` per round for the likelihood table).
    """
    key = _validate.check_key(key)
    tau = _validate.check_int("tau", tau, minimum=1)
    n = _validate.check_int("n", n, minimum=1)
    if mech.report_kind not in ("item", "bits"):
        raise ValueError(f"Expected a protocol with an instantaneous round, got report_kind={mech.report_kind!r} "
                         "(dBitFlipPM repeats one report: its success does not change with tau).")
    mean, se = _curve(key, mech, tau, n)
    return AttackCurve(np.asarray(mean, np.float64), np.asarray(se, np.float64))


def compare_attack(key, mech, tau: int, n: int, eps=None) -> dict[str, AttackCurve]:
    """``{"memoized": ..., "naive": ...}``: the attack against ``mech`` and against fresh randomness each round
    at ``eps`` per round (default ``mech.eps_1``: the same cost for one report), on the same users' values."""
    eps = mech.eps_1 if eps is None else eps
    return {"memoized": attack_curve(key, mech, tau, n), "naive": attack_curve(key, mech.naive(eps), tau, n)}
