r"""Exact support counts of subset selection (SS) in the iid model: one scan over the ``d`` items.

**Decomposition.** A report of input ``x`` contains ``x`` w.p. ``p*`` (then ``k - 1`` uniform others) and is
otherwise a uniform ``k``-subset of the others. Since ``p* >= k / d`` (``eps >= 0``), the same law is the mixture

* w.p. ``beta = (1 - p*) d / (d - k)``: a uniform ``k``-subset of all ``d`` items (it holds ``x`` w.p. ``k / d``);
* otherwise ("forced"): ``{x}`` plus a uniform ``(k - 1)``-subset of the other items.

(Both parts give ``P(x in Y) = beta k / d + 1 - beta = p*`` and uniform others given whether ``x`` is in.) The
uniform users do not depend on ``x`` at all, so only the forced users need their ``x`` tracked.

**Scan.** Items ``j = 0 .. d - 1`` are visited in order; every user is binned by how many items it still needs:

* ``free`` users (uniform users, and forced users whose ``x`` is already passed) need ``r`` of the ``d - j``
  items left and take item ``j`` w.p. ``r / (d - j)`` (sequential sampling of a uniform subset);
* ``ahead`` users (forced, ``x >= j``), one row per population, need ``r`` of the ``d - 1 - j`` items left other
  than ``x``. In the iid model ``x`` is independent of the subset, so each has ``x = j`` w.p.
  ``p_j / sum_{i >= j} p_i``: ``M_r ~ Bin(A_r, .)`` move (they report their own item ``j`` and become free with
  the same need); the others take ``j`` w.p. ``r / (d - 1 - j)``.

Every draw is an exact binomial of the joint law (users of one bin are exchangeable), so the counts have exactly
the law of the per-user path's ``bit_sums`` (iid model). Cost: ``d`` scan steps, independent of ``n``, each with
``2 P + 1`` binomials per occupied bin (``P`` populations), drawn in windows of ~8 standard deviations of a
user's need (``window_width``; as many disjoint windows as the occupied range needs, so nothing is skipped).
The fixed model (given ``bincount(xs)``) would need multivariate hypergeometric moves (which of the
exchangeable ``ahead`` users hold ``x = j``), so SS has no fixed-model counts path.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core._counts import _conditional_probs, binomial


def ss_counts_iid(key: jax.Array, mech: Any, n: jax.Array, p: jax.Array) -> jax.Array:
    """``float[d]`` support counts of ``n`` iid users from ``p`` under ``SS(d, eps, k)`` (exact law)."""
    n = jnp.asarray(n, jnp.result_type(float))  # counts are carried as floats (an int n would zero p)
    return ss_counts_mixed(key, mech, n[None], jnp.asarray(p, n.dtype)[None])


def ss_counts_mixed(key: jax.Array, mech: Any, ns: jax.Array, ps: jax.Array) -> jax.Array:
    """Support counts of ``P`` iid populations at once: ``ns[i]`` users drawn from ``ps[i]`` (``float[P, d]``).

    One scan for all populations (one ``ahead`` row each, one shared ``free`` row), so the counts are their exact
    joint sum; uSS's base uses two (sensitive users from ``p | X_S``, go users uniform on ``X_S``).
    """
    d, k = mech.d, mech.k
    ns = jnp.asarray(ns, jnp.result_type(float))
    dtype = ns.dtype
    pops = ns.shape[0]
    p_own = jnp.asarray(mech._pq()[0], dtype)
    beta = jnp.clip((1.0 - p_own) * d / (d - k), 0.0, 1.0)
    k_mix, k_scan = jax.random.split(key)
    uniform = binomial(k_mix, ns, beta)
    width = window_width(d, k)
    bins = k + 1 + width  # width zero bins pad the last window
    need = jnp.arange(bins, dtype=dtype)
    free0 = jnp.zeros((bins,), dtype).at[k].set(jnp.sum(uniform))
    ahead0 = jnp.zeros((pops, bins), dtype).at[:, k - 1].set(ns - uniform)
    move = _conditional_probs(jnp.asarray(ps, dtype))  # [pop, j]: P(x = j | x >= j)

    def window(carry):
        """Moves and takes on the bins ``[lo + i w, lo + (i + 1) w)`` (disjoint windows: exact)."""
        i, lo, j, key_j, ahead, free, took_a, took_f, moved = carry
        start = lo + i * width
        sl = lambda a: jax.lax.dynamic_slice_in_dim(a, start, width, axis=-1)
        upd = lambda a, v: jax.lax.dynamic_update_slice_in_dim(a, v, start, axis=-1)
        k_move, k_take = jax.random.split(jax.random.fold_in(key_j, i))
        a_w, r = sl(ahead), sl(need)
        m = binomial(k_move, a_w, move[:, j][:, None])
        left = (d - j).astype(dtype)
        users = jnp.concatenate([a_w - m, sl(free)[None]])  # [pop + 1, width]: ahead (not moved), free
        prob = jnp.concatenate([jnp.broadcast_to(r / jnp.maximum(left - 1.0, 1.0), a_w.shape), (r / left)[None]])
        t = binomial(k_take, users, prob)
        ahead, free = upd(ahead, users[:-1]), upd(free, users[-1])
        return (i + 1, lo, j, key_j, ahead, free, upd(took_a, t[:-1]), upd(took_f, t[-1]),
                upd(moved, sl(moved) + jnp.sum(m, axis=0)))

    def step(carry, inp):
        ahead, free = carry
        j, key_j = inp
        occupied = jnp.any(ahead > 0, axis=0) | (free > 0)
        lo = jnp.argmax(occupied)
        hi = occupied.shape[0] - 1 - jnp.argmax(occupied[::-1])
        n_win = jnp.where(jnp.any(occupied), (hi - lo) // width + 1, 0)
        zeros = jnp.zeros_like(free)
        init = (jnp.int32(0), lo, j, key_j, ahead, free, jnp.zeros_like(ahead), zeros, zeros)
        _, _, _, _, ahead, free, took_a, took_f, moved = jax.lax.while_loop(lambda c: c[0] < n_win, window, init)
        count = jnp.sum(took_a) + jnp.sum(took_f) + jnp.sum(moved)  # own items of the movers, then takes
        shift = lambda a, t: a - t + jnp.pad(t[..., 1:], [(0, 0)] * (t.ndim - 1) + [(0, 1)])  # takers: r -> r - 1
        return (shift(ahead, took_a), shift(free, took_f) + moved), count

    _, counts = jax.lax.scan(step, (ahead0, free0), (jnp.arange(d), jax.random.split(k_scan, d)))
    return counts


def scan_draws(d: int, k: int, pops: int = 1) -> float:
    """Binomials per repetition (estimate): ``d`` steps, ``2 P + 1`` rows, two windows of occupied bins."""
    return float(d * (2 * pops + 1) * min(k + 1, 2 * window_width(d, k)))


def scan_bytes(d: int, k: int, pops: int = 1) -> float:
    """Temporaries of one repetition (estimate): the scan's carries and window buffers (float64, ~16 copies of
    ``(P + 1) x bins``), its ``d`` keys and per-item outputs."""
    return float(8 * (16 * (pops + 1) * (k + 1 + window_width(d, k)) + 4 * d))


def window_width(d: int, k: int) -> int:
    """Bins per window: ~8 standard deviations of a user's need (hypergeometric, largest at mid-scan)."""
    kk = min(k, d - k)
    sd = math.sqrt(kk * (d - kk) / (4.0 * max(d - 1, 1)))
    return int(min(k + 1, max(32, 8 * math.ceil(sd))))  # d = 625, k = 168: 48 bins, 2 windows a step
