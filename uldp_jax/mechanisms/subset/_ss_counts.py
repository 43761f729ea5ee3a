r"""Exact support counts of subset selection (SS) in the iid model: a binary tree over the items, ``log2 d`` deep.

**Decomposition.** A report of input ``x`` contains ``x`` w.p. ``p*`` (then ``k - 1`` uniform others) and is
otherwise a uniform ``k``-subset of the others. Since ``p* >= k / d``, the same law is the mixture

* w.p. ``beta = (1 - p*) d / (d - k)``: a uniform ``k``-subset of all ``d`` items (**free** users);
* otherwise (**forced**): ``{x}`` plus a uniform ``(k - 1)``-subset of the other items.

**Tree.** The items are split in halves, recursively (``_ss_tree.plan``). A free user that needs ``r`` items of
a node of ``m`` items (``m1`` on the left) has ``L ~ Hypergeometric(m, m1, r)`` of them on the left, and given
``L`` its left and right parts are uniform ``L``- and ``(r - L)``-subsets of the halves, independent. Users of a
node with the same need are exchangeable, so a node is a *histogram* of needs, and the users of need ``r`` split
over ``L`` as one ``Multinomial(h_r, Hypergeometric(m, m1, r))``. Given the split, the two children are
independent problems. A forced user whose ``x`` lies in the node needs ``r`` items of the ``m - 1`` others; in
the iid model ``x ~ p`` restricted to the node, independent of its need, so ``Bin(h_r, p(left) / p(node))`` of
them have ``x`` on the left (then ``L ~ Hypergeometric(m - 1, m1 - 1, r)``; the left child keeps them as forced,
the right child gets ``r - L`` free) and the rest on the right (``Hypergeometric(m - 1, m1, r)``). A leaf (one
item) counts its free users of need 1 and its forced users (their own ``x``). Every draw is exact, so the counts
have exactly the law of the per-user path's ``bit_sums`` (iid model); the depth is ``ceil(log2 d)`` levels.

**Windows and the exact fallback.** A level splits, per node, the ``W_r`` needs from the first occupied one,
and per need the ``W_l`` values of ``L`` around its mean (``_ss_tree``: 8 and 7 standard deviations each way), as
one chain of conditional binomials: the forced users' sides, the lower tail ``L < a`` as one cell (its exact mass
from the plan), the window's values; what is left is the upper tail. Nothing is truncated: needs past the window
take another iteration of the level's ``lax.while_loop`` (one iteration unless a need lies ~8 standard deviations
out), and the users of a tail cell are finished by a second loop (no iteration unless a user lies ~7 standard
deviations out), by sequential conditional binomials over the tail's values from its far end (so the remaining
mass is never a difference of near-equal numbers). Levels whose windows cover every need and value (the deep
ones) have neither loop. Each level has two binomial call sites (compile time grows with ``log2 d``).

The fixed model (given ``bincount(xs)``) would need multivariate hypergeometric draws for the forced users' sides,
so SS has no fixed-model counts path.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core._counts import binomial
from uldp_jax.mechanisms.subset import _ss_tree


def ss_counts_iid(key: jax.Array, mech: Any, n: jax.Array, p: jax.Array) -> jax.Array:
    """``float[d]`` support counts of ``n`` iid users from ``p`` under ``SS(d, eps, k)`` (exact law)."""
    n = jnp.asarray(n, jnp.result_type(float))  # counts are carried as floats (an int n would zero p)
    return ss_counts_mixed(key, mech, n[None], jnp.asarray(p, n.dtype)[None])


def ss_counts_mixed(key: jax.Array, mech: Any, ns: jax.Array, ps: jax.Array) -> jax.Array:
    """Support counts of ``P`` iid populations at once: ``ns[i]`` users drawn from ``ps[i]`` (``float[P, d]``).

    One tree for all populations (one forced histogram each, one shared free histogram), so the counts are their
    exact joint sum; uSS's base uses two (sensitive users from ``p | X_S``, go users uniform on ``X_S``).
    """
    d, k = mech.d, mech.k
    ns = jnp.asarray(ns, jnp.result_type(float))
    dtype = ns.dtype
    ps = jnp.asarray(ps, dtype)
    pops = ns.shape[0]
    p_own = jnp.asarray(mech._pq()[0], dtype)
    beta = jnp.clip((1.0 - p_own) * d / (d - k), 0.0, 1.0)
    levels = _ss_tree.plan(d, k)
    lf = jnp.asarray(_ss_tree.log_factorials(d), dtype)
    items = _ss_tree.leaf_items(d)
    masses = [jnp.where(items >= 0, ps[:, np.maximum(items, 0)], 0.0)]  # [P, nodes] per level, leaves first
    for _ in levels:
        masses.append(masses[-1].reshape(pops, -1, 2).sum(axis=-1))
    masses = masses[::-1]  # masses[t]: the nodes of level t
    k_mix, k_tree = jax.random.split(key)
    free_n = binomial(k_mix, ns, beta)
    free = jnp.zeros((1, k + 1), dtype).at[0, k].add(jnp.sum(free_n))
    forced = jnp.zeros((pops, 1, k + 1), dtype).at[:, 0, k - 1].set(ns - free_n)
    for t, lv in enumerate(levels):
        node, left = masses[t], masses[t + 1][:, 0::2]
        side = jnp.where(node > 0, left / jnp.where(node > 0, node, 1.0), 0.0)  # [P, nodes]: P(x on the left)
        free, forced = _level(jax.random.fold_in(k_tree, t), lv, lf, free[:, : lv.rows], forced[..., : lv.rows], side)
    counts = free[:, 1] + jnp.sum(forced[:, :, 0], axis=0)  # leaves: free users of need 1, forced users' own x
    return jnp.zeros((d,), dtype).at[jnp.asarray(np.where(items >= 0, items, d))].add(counts, mode="drop")


def _level(key, lv, lf, free, forced, side):
    """Splits every node of one level; returns the children's ``free [2N, Rc]`` and ``forced [P, 2N, Rc]``."""
    pops, nodes, rows = forced.shape
    hist = jnp.concatenate([free[None], forced])  # [1 + P, N, R]: class 0 free, class 1 + i forced of population i
    k_rows, k_tails = jax.random.split(key)
    children = jnp.zeros((1 + pops, 2 * nodes, lv.child_rows), hist.dtype)
    if lv.w_rows == lv.rows and not np.any(lv.lump_lo) and not np.any(lv.lump_hi):
        at = jnp.broadcast_to(jnp.arange(rows), (nodes, rows))  # the windows cover everything (static)
        children, _ = _pass(k_rows, lv, lf, hist, at, side, children)
        return children[0], children[1:]

    def window(carry):
        """``W_r`` needs per node from the first occupied one: one iteration unless needs lie further out."""
        i, rest, children, tails = carry
        lo = jnp.minimum(jnp.argmax(jnp.any(rest > 0, axis=0), axis=1), rows - lv.w_rows)
        at = lo[:, None] + jnp.arange(lv.w_rows)  # [N, W_r]
        taken = jnp.take_along_axis(rest, at[None], axis=2)
        children, more = _pass(jax.random.fold_in(k_rows, i), lv, lf, taken, at, side, children)
        rest = rest.at[:, jnp.arange(nodes)[:, None], at].set(0.0)
        return i + 1, rest, children, tails + _rows_to_full(more, at, rows)

    tails = jnp.zeros((2, 1 + 2 * pops, nodes, rows), hist.dtype)
    carry = (jnp.int32(0), hist, children, tails)
    _, _, children, tails = jax.lax.while_loop(lambda c: jnp.any(c[1] > 0), window, carry)
    children = _tail_cells(k_tails, lv, lf, tails, children)
    return children[0], children[1:]


def _jobs(lv, pops):
    """Static job layout: type (0 free, 1 forced x-left, 2 forced x-right), left/right child classes, and for
    each job the job whose side draw it completes (x-right job ``i`` takes the rest of x-left job ``i``)."""
    jtype = np.array([0] + [1] * pops + [2] * pops)
    left = np.array([0] + [1 + i for i in range(pops)] + [0] * pops)
    right = np.array([0] + [0] * pops + [1 + i for i in range(pops)])
    mate = np.array([0] + [1 + i for i in range(pops)] + [1 + i for i in range(pops)])
    return jtype, left, right, mate


def _pmf(lf, M, M1, r, l):
    """Hypergeometric pmf (traced, float64 table lookups), 0 outside the support."""
    M2 = M - M1
    ok = (l >= jnp.maximum(0, r - M2)) & (l <= jnp.minimum(r, M1)) & (r <= M) & (r >= 0) & (M1 >= 0) & (M2 >= 0)
    g = lambda i: lf[jnp.clip(i, 0, lf.shape[0] - 1)]
    c = lambda a, b: g(a) - g(b) - g(a - b)
    return jnp.where(ok, jnp.exp(c(M1, l) + c(M2, r - l) - c(M, r)), 0.0)


def _pass(key, lv, lf, taken, at, side, children):
    """Splits the needs ``at [N, W]`` (``taken [1 + P, N, W]`` users) as one chain of conditional binomials.

    Step 0 draws the forced users' sides (``Bin(h, side)`` on the left, the rest on the right), step 1 the lower
    tail ``L < a``, steps ``2 ..`` the window's values ``a + j`` (``p_j / P(L >= a + j)``); what is left is the
    upper tail. One binomial call site. Returns the children and the tail cells ``[2, J, N, W]``.
    """
    pops = taken.shape[0] - 1
    jtype, cl, cr, mate = _jobs(lv, pops)
    h0 = taken[mate]  # [J, N, W]: free, forced (x-left), forced (x-right)
    combo = lv.combo
    M = jnp.asarray(lv.jm[jtype][:, combo])[:, :, None]  # [J, N, 1]
    M1 = jnp.asarray(lv.jm1[jtype][:, combo])[:, :, None]
    ix = (jtype[:, None, None], combo[None, :, None], at[None])
    a = jnp.asarray(lv.start)[ix]
    lump_lo = jnp.asarray(lv.lump_lo, h0.dtype)[ix]
    lump_hi = jnp.asarray(lv.lump_hi, h0.dtype)[ix]
    l = a[..., None] + jnp.arange(lv.w_split)  # [J, N, W, W_l]
    r = at[None, :, :, None]
    pmf = _pmf(lf, M[..., None], M1[..., None], r, l)
    suffix = lump_hi[..., None] + jnp.cumsum(pmf[..., ::-1], axis=-1)[..., ::-1]
    cond = jnp.where(suffix > 0, pmf / jnp.where(suffix > 0, suffix, 1.0), 0.0)
    sides = jnp.where((jtype == 1)[:, None, None], jnp.concatenate([side[:1] * 0, side, side])[..., None], 0.0)
    sides = jnp.broadcast_to(sides, h0.shape)
    probs = jnp.concatenate([sides[None], lump_lo[None], jnp.moveaxis(cond, -1, 0)])  # [2 + W_l, J, N, W]
    left_job = jnp.asarray(np.where(jtype == 2, mate, np.arange(len(jtype))))

    def cell(rest, inp):
        i, pr = inp
        x = binomial(jax.random.fold_in(key, i), rest, pr)
        taken_left = jnp.where((jtype == 1)[:, None, None], x, rest)
        split = jnp.where((jtype == 2)[:, None, None], rest - x[left_job], taken_left)
        return jnp.where(i == 0, split, rest - x), x

    upper, cells = jax.lax.scan(cell, h0, (jnp.arange(lv.w_split + 2), probs))
    x = jnp.moveaxis(cells[2:], 0, -1)  # [J, N, W, W_l]
    children = _scatter(children, x, l, r, cl, cr)
    return children, jnp.stack([cells[1], upper])


def _scatter(children, x, l, r, cl, cr):
    """Adds ``x [J, N, W, W_l]`` users to the left child at need ``l`` and the right child at need ``r - l``."""
    classes, two_n, rc = children.shape
    nodes = two_n // 2
    node = jnp.arange(nodes)[None, :, None, None]
    col = lambda c: jnp.clip(c, 0, rc - 1)
    il = ((jnp.asarray(cl)[:, None, None, None] * two_n + 2 * node) * rc + col(l))
    ir = ((jnp.asarray(cr)[:, None, None, None] * two_n + 2 * node + 1) * rc + col(r - l))
    flat = children.reshape(-1).at[il.reshape(-1)].add(x.reshape(-1)).at[ir.reshape(-1)].add(x.reshape(-1))
    return flat.reshape(children.shape)


def _rows_to_full(tails, at, rows):
    """``[2, J, N, W]`` tail cells at rows ``at`` into ``[2, J, N, R]``."""
    two, jobs, nodes, w = tails.shape
    full = jnp.zeros((two, jobs, nodes, rows), tails.dtype)
    return full.at[:, :, jnp.arange(nodes)[:, None], at].add(tails)


def _tail_cells(key, lv, lf, tails, children, slots: int = 32):
    """Fallback 2: users in a tail cell, ``slots`` cells at a time, each by sequential conditional binomials over
    its tail's values from the far end (so the remaining mass is never a difference of near-equal numbers)."""
    two, jobs, nodes, rows = tails.shape
    pops = (jobs - 1) // 2
    jtype, cl, cr, _ = _jobs(lv, pops)
    combo = lv.combo
    M_t = jnp.asarray(lv.jm[jtype][:, combo])  # [J, N]
    M1_t = jnp.asarray(lv.jm1[jtype][:, combo])
    start = jnp.asarray(lv.start)[jtype][:, combo]  # [J, N, R]
    mass = jnp.stack([jnp.asarray(lv.lump_lo, tails.dtype)[jtype][:, combo],
                      jnp.asarray(lv.lump_hi, tails.dtype)[jtype][:, combo]])  # [2, J, N, R]

    def batch(carry):
        i, tails, children = carry
        flat = tails.reshape(-1)
        (idx,) = jnp.nonzero(flat > 0, size=slots, fill_value=flat.size)
        live = idx < flat.size
        idx_c = jnp.minimum(idx, flat.size - 1)
        upper, j, n, r = jnp.unravel_index(idx_c, tails.shape)
        count = jnp.where(live, flat[idx_c], 0.0)
        M, M1, a = M_t[j, n], M1_t[j, n], start[j, n, r]
        lmin, lmax = jnp.maximum(0, r - (M - M1)), jnp.minimum(r, M1)
        first = jnp.where(upper == 1, lmax, lmin)
        last = jnp.where(upper == 1, a + lv.w_split, a - 1)
        step = jnp.where(upper == 1, -1, 1)

        def cell(c, s):
            left_users, rem, kids = c
            l = first + step * s
            active = (step * (last - l) >= 0) & live
            pm = _pmf(lf, M, M1, r, l)
            pr = jnp.where(l == last, 1.0, jnp.where(rem > 0, pm / jnp.where(rem > 0, rem, 1.0), 0.0))
            x = binomial(jax.random.fold_in(jax.random.fold_in(key, i), s), left_users, jnp.where(active, pr, 0.0))
            kids = _scatter_cells(kids, x, l, r, n, jnp.asarray(cl)[j], jnp.asarray(cr)[j])
            return (left_users - x, rem - jnp.where(active, pm, 0.0), kids), None

        init = (count, mass[upper, j, n, r], children)
        (_, _, children), _ = jax.lax.scan(cell, init, jnp.arange(lv.child_rows))
        return i + 1, flat.at[idx].set(0.0, mode="drop").reshape(tails.shape), children

    _, _, children = jax.lax.while_loop(lambda c: jnp.any(c[1] > 0), batch, (jnp.int32(0), tails, children))
    return children


def _scatter_cells(children, x, l, r, node, cl, cr):
    """Adds ``x [S]`` users (rows ``r``, left values ``l``, parents ``node``, child classes ``cl``/``cr``)."""
    classes, two_n, rc = children.shape
    col = lambda c: jnp.clip(c, 0, rc - 1)
    il = (cl * two_n + 2 * node) * rc + col(l)
    ir = (cr * two_n + 2 * node + 1) * rc + col(r - l)
    return children.reshape(-1).at[il].add(x).at[ir].add(x).reshape(children.shape)


def count_draws(d: int, k: int, pops: int = 1) -> float:
    """Binomials per repetition (the fast passes; ``_ss_tree.draws``)."""
    return _ss_tree.draws(d, k, pops)


def count_bytes(d: int, k: int, pops: int = 1) -> float:
    """Temporaries of one repetition (``_ss_tree.temp_bytes``)."""
    return _ss_tree.temp_bytes(d, k, pops)
