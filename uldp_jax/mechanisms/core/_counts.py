"""Exact O(d) building blocks of count-level samplers (binomial/multinomial splitting; see ``uldp_jax.fastpath``).

A leaf module: mechanisms build the samplers of their ``counts()`` record from these."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _binomial


def binomial(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """Exact ``Binomial(n, p)`` draws (float ``n``, any shape): one method per cell (``core._binomial``).

    ``p`` is clipped to [0, 1] (``p = 0`` gives 0, ``p = 1`` gives ``n``); ``n = 0`` gives 0. Each call site
    costs seconds of XLA compile time on CPU, so callers batch their draws into few calls.
    """
    return _binomial.binomial(key, n, p)


def _conditional_probs(masses: jax.Array) -> jax.Array:
    """Row-wise ``m_j / sum_{k >= j} m_k`` (0 where the suffix mass is 0): sequential binomial splitting."""
    suffix = jnp.cumsum(masses[..., ::-1], axis=-1)[..., ::-1]
    return jnp.where(suffix > 0, masses / jnp.where(suffix > 0, suffix, 1.0), 0.0)


def _phases(d: int) -> int:
    """Number of splitting phases: more phases = fewer sequential steps (P d^(1/P)), more work (P d)."""
    return 2 if d <= 1024 else (3 if d <= 32768 else 4)


def multinomial(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """Exact ``Multinomial(n, p)`` counts by sequential conditional binomials down a ``w``-ary tree.

    The ``d`` cells are the leaves of a tree of depth ``P`` (``P = 2`` up to d = 1024, then 3, 4) and fan-out
    ``w = ceil(d^(1/P))`` (zero-padded). Phase ``k`` splits every depth-``k`` node's count over its ``w``
    children by the sequential rule ``x_j ~ Bin(rest, m_j / sum_{i >= j} m_i)``, exactly the multinomial's
    conditional law. The phases run as one nested ``lax.scan`` over a fixed ``[w^(P-1), w]`` layout (a single
    binomial call site): ``P w`` sequential steps, ``P d`` draws.

    Args:
      key: PRNG key.
      n: scalar total (float; exact below 2**24 in float32, 2**53 in float64).
      p: ``float[d]`` non-negative masses (normalised implicitly; zero masses get zero counts).

    Returns:
      ``float[d]`` counts summing to ``n``.
    """
    p = jnp.maximum(jnp.asarray(p), 0.0)
    d = p.shape[-1]
    P = _phases(d)
    w = 2
    while w**P < d:
        w += 1
    rows = w ** (P - 1)
    leaves = jnp.zeros((w**P,), p.dtype).at[:d].set(p)
    probs = []
    for k in range(P):  # static loop over the P phases: conditional split probabilities of depth-k nodes
        children = leaves.reshape(w ** (k + 1), -1).sum(axis=1).reshape(w**k, w)
        probs.append(jnp.zeros((rows, w), p.dtype).at[: w**k].set(_conditional_probs(children)))

    def phase(totals, inp):
        k_phase, prob = inp

        def column(rest, col):
            j, pj = col
            x = binomial(jax.random.fold_in(k_phase, j), rest, pj)
            return rest - x, x

        _, counts = jax.lax.scan(column, totals, (jnp.arange(w), prob.T))
        counts = counts.T.reshape(-1)  # [rows * w]: depth-(k+1) nodes first, zeros after
        return counts[:rows], counts

    totals0 = jnp.zeros((rows,), p.dtype).at[0].set(jnp.asarray(n, p.dtype))
    _, counts = jax.lax.scan(phase, totals0, (jax.random.split(key, P), jnp.stack(probs)))
    return counts[-1][:d]


def multinomial_rows(key: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """Exact ``Multinomial(n_i, p)`` for every entry of ``n`` (float ``[r]``), one shared ``p`` (float ``[c]``).

    ``c`` sequential conditional binomial steps (one ``lax.scan``, a single binomial call site); returns
    ``float[r, c]`` with rows summing to ``n``. Meant for small ``c`` (a few cells).
    """
    cond = _conditional_probs(jnp.maximum(jnp.asarray(p, n.dtype), 0.0))

    def column(rest, col):
        j, pj = col
        x = binomial(jax.random.fold_in(key, j), rest, jnp.broadcast_to(pj, rest.shape))
        return rest - x, x

    _, cells = jax.lax.scan(column, n, (jnp.arange(cond.shape[0]), cond))
    return cells.T


def keep_or_common(key: jax.Array, counts: jax.Array, alpha: jax.Array, common: jax.Array) -> jax.Array:
    """Exact output histogram of ``Q[x] = alpha_x e_x + (1 - alpha_x) common`` (keep, else draw from ``common``).

    Args:
      key: PRNG key.
      counts: ``float[d]`` users per input item.
      alpha: ``float[d]`` keep probabilities (``>= 0``).
      common: ``float[m]`` the shared redraw distribution over outputs (``m >= d``; output ``x`` is item x).

    Returns:
      ``float[m]`` report counts.
    """
    k_keep, k_rest = jax.random.split(key)
    kept = binomial(k_keep, counts, alpha)
    rest = multinomial(k_rest, jnp.sum(counts) - jnp.sum(kept), common)
    return rest.at[: counts.shape[0]].add(kept)


def keep_or_common_iid(key: jax.Array, n: jax.Array, p: jax.Array, alpha: jax.Array,
                       common: jax.Array) -> jax.Array:
    """iid model of ``keep_or_common``: each report is iid from ``p Q``, so the histogram is one multinomial."""
    common = common / jnp.sum(common)
    mix = (jnp.sum(p * (1.0 - alpha)) * common).at[: p.shape[0]].add(alpha * p)
    return multinomial(key, n, mix)


def independent_bits(key: jax.Array, counts: jax.Array, own: jax.Array, other: jax.Array) -> jax.Array:
    """Exact support counts of independent bits: bit ``j`` is 1 w.p. ``own_j`` if ``x == j`` else ``other_j``.

    ``stats_j = Bin(n_j, own_j) + Bin(n - n_j, other_j)``, all independent (one batched binomial call).
    """
    d = counts.shape[0]
    draws = binomial(key, jnp.concatenate([counts, jnp.sum(counts) - counts]), jnp.concatenate([own, other]))
    return draws[:d] + draws[d:]


def channel_counts(key: jax.Array, counts: jax.Array, Q: jax.Array) -> jax.Array:
    """Exact output histogram for a generic channel ``Q [d, m]``: ``sum_x Multinomial(n_x, Q[x])`` (O(d m))."""
    keys = jax.random.split(key, counts.shape[0])
    return jnp.sum(jax.vmap(multinomial)(keys, counts, Q), axis=0)


def x64_context():
    """A context enabling 64-bit types locally (``jax.enable_x64`` or the older experimental spelling)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # pragma: no cover - older JAX

    return enable_x64()


def count_dtype(n: int) -> Any:
    """The stats dtype for ``n`` users: int32 up to 2**31 - 1, int64 above when x64 is enabled globally."""
    if n <= 2**31 - 1:
        return np.int32
    if jax.config.jax_enable_x64 and n <= 2**53:
        return np.int64
    raise ValueError(
        f"Expected n={n} <= 2**31 - 1 for int32 counts; enable 64-bit JAX "
        "(jax.config.update('jax_enable_x64', True)) to simulate up to 2**53 users on the counts path."
    )


def histogram_counts(key: jax.Array, mech: Any, counts: jax.Array) -> jax.Array:
    """Item reports, stats = output histogram: ``sum_x Multinomial(n_x, Q[x])`` (O(d m) draws, any n).

    ``Q`` is built row by row with the mechanism's ``channel_matvec`` (traceable, unlike ``channel_matrix``).
    """
    Q = jax.vmap(mech.channel_matvec)(jnp.eye(mech.d, dtype=counts.dtype))
    return channel_counts(key, counts, Q.astype(counts.dtype))


def histogram_iid(key: jax.Array, mech: Any, n: jax.Array, p: jax.Array) -> jax.Array:
    """iid item reports are iid from ``p Q``: the histogram is one ``Multinomial(n, p Q)`` (HR: O(K log K))."""
    return multinomial(key, n, jnp.asarray(mech.channel_matvec(p), p.dtype))
