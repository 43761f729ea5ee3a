r"""Exact support counts of subset selection (SS) in the iid model: one scan over the ``d - 1`` other-item labels.

A report of input ``x`` is ``{x}`` w.p. ``p*`` plus a uniform ``k_o``-subset of ``[d] \ {x}`` (``k_o = k - 1``
when the own item is in, else ``k``). Name the ``d - 1`` other items by *labels* ``0 .. d - 2``: label ``l`` is
item ``l`` when ``l < x`` and item ``l + 1`` when ``l >= x``. The subset is then a uniform ``k_o``-subset of the
labels, whose law does not depend on ``x``: scanning the labels in order, a user who holds ``r`` of them so far
takes label ``l`` w.p. ``(k_o - r) / (d - 1 - l)`` (sequential sampling of a uniform subset). So the users are
exchangeable groups, tracked as histograms over ``r``:

* two groups by ``k_o`` (own item in: ``Bin(n, p*)`` users; out: the rest);
* within each, status ``A`` (``x > l``: label ``l`` is item ``l``) or ``B`` (``x <= l``: item ``l + 1``).

Before label ``l`` the ``A`` users with ``x = l`` move to ``B``. In the iid model every user's ``x`` is drawn
from ``p`` independently of the label process, so each ``A`` user (``x >= l``) has ``x = l`` w.p.
``p_l / sum_{j >= l} p_j``, independently: ``M_r ~ Bin(A_r, p_l / tail_l)`` per bin. The own-item counts are
those moves in the own-in group (``x = d - 1`` for the ``A`` users left at the end). Then the users of bin ``r``
that take label ``l`` are ``Bin(A_r, (k_o - r) / (d - 1 - l))`` (and likewise for ``B``); they count for item
``l`` (``A``) or ``l + 1`` (``B``) and move to bin ``r + 1``. For ``k_o > (d - 1) / 2`` the complement
(``d - 1 - k_o`` labels) is tracked instead and the users that do *not* take a label count.

Every draw is an exact binomial of the joint law, so the counts have exactly the law of the per-user path's
``bit_sums`` (iid model). Cost: ``d - 1`` scan steps, independent of ``n``; each step draws its binomials only
on the occupied bins, in windows of ~8 standard deviations of a user's label count (``window_width``; as many
disjoint windows as the occupied range needs, so nothing is ever skipped): about 6 x 100 draws a step at
``d = 625, k = 168`` instead of 6 x 169. The fixed model (given ``bincount(xs)``) would need multivariate
hypergeometric moves (which of the exchangeable ``A`` users hold ``x = l``), so SS has no fixed-model counts path.
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

    One scan for all populations (rows ``(population, own item in/out)``), so the counts are their exact joint
    sum; uSS's base uses two (sensitive users from ``p | X_S``, go users uniform on ``X_S``).
    """
    d, k = mech.d, mech.k
    ns = jnp.asarray(ns, jnp.result_type(float))
    dtype = ns.dtype
    pops = ns.shape[0]
    p_own = jnp.asarray(mech._pq()[0], dtype)
    k_own, k_scan = jax.random.split(key)
    n_in = binomial(k_own, ns, p_own)
    ko = np.tile([k, k - 1], pops)  # others per user, rows (population, group): own item out, own item in
    flip = 2 * ko > d - 1
    kk = np.where(flip, d - 1 - ko, ko)  # labels tracked per row (the complement when flipped)
    bins = int(kk.max()) + 1
    width = window_width(d, int(kk.max()))
    need = jnp.asarray(kk[:, None] - np.arange(bins + width)[None, :], dtype)  # labels still to take per (row, r)
    move = jnp.repeat(_conditional_probs(jnp.asarray(ps, dtype)), 2, axis=0)  # [row, l]: P(x = l | x >= l)
    own_row = jnp.asarray(np.tile([0.0, 1.0], pops), dtype)[:, None]
    row_users = jnp.stack([ns - n_in, n_in], axis=1).reshape(-1)
    A0 = jnp.zeros((2 * pops, bins + width), dtype).at[:, 0].set(row_users)  # width zero bins pad
    flipped = jnp.asarray(flip)[None, :, None]

    def window(carry):
        """Moves and takes on the bins ``[lo + i w, lo + (i + 1) w)`` (disjoint windows: exact)."""
        i, lo, l, key_l, A, B, took, moved_in = carry
        start = lo + i * width
        sl = lambda a: jax.lax.dynamic_slice_in_dim(a, start, width, axis=-1)
        k_move, k_take = jax.random.split(jax.random.fold_in(key_l, i))
        a_w = sl(A)
        moved = binomial(k_move, a_w, move[:, l][:, None])
        users = jnp.stack([a_w - moved, sl(B) + moved])  # [status, row, r]
        t = binomial(k_take, users, sl(need) / (d - 1 - l).astype(dtype))
        upd = lambda a, v: jax.lax.dynamic_update_slice_in_dim(a, v, start, axis=-1)
        A, B = upd(A, users[0]), upd(B, users[1])
        return i + 1, lo, l, key_l, A, B, upd(took, t), moved_in + jnp.sum(moved * own_row)

    def step(carry, inp):
        A, B = carry
        l, key_l = inp
        occupied = jnp.any((A > 0) | (B > 0), axis=0)
        lo = jnp.argmax(occupied)
        hi = occupied.shape[0] - 1 - jnp.argmax(occupied[::-1])
        n_win = jnp.where(jnp.any(occupied), (hi - lo) // width + 1, 0)
        init = (jnp.int32(0), lo, l, key_l, A, B, jnp.zeros((2,) + A.shape, dtype), jnp.zeros((), dtype))
        _, _, _, _, A, B, took, own = jax.lax.while_loop(lambda c: c[0] < n_win, window, init)
        users = jnp.stack([A, B])
        counted = jnp.sum(jnp.where(flipped, users - took, took), axis=(1, 2))  # items l (A) and l + 1 (B)
        shifted = users - took + jnp.pad(took, ((0, 0), (0, 0), (1, 0)))[..., :-1]
        return (shifted[0], shifted[1]), (counted[0], counted[1], own)

    labels = jnp.arange(d - 1)
    (A, _), (to_a, to_b, own) = jax.lax.scan(step, (A0, jnp.zeros_like(A0)),
                                             (labels, jax.random.split(k_scan, d - 1)))
    counts = jnp.zeros((d,), dtype).at[:-1].add(to_a + own).at[1:].add(to_b)
    return counts.at[-1].add(jnp.sum(A * own_row))


def window_width(d: int, kk: int) -> int:
    """Bins per window: ~8 standard deviations of a user's label count (hypergeometric, largest at mid-scan)."""
    sd = math.sqrt(kk * (d - 1 - kk) / (4.0 * max(d - 2, 1)))
    return int(min(kk + 1, max(32, 8 * math.ceil(sd))))  # d = 625, k = 168: 48 bins, 2 windows a step
