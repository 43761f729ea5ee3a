r"""Exact count sampler of GLUTF mechanisms (003 Alg. 1) whose base has one (uUE; GLUTF over GRR, UE, RAPPOR).

A non-sensitive user of item ``x`` ends in one of three cells, independently of everything else:

* alone (``1 - f``): reports ``x`` only;
* pair (``f - f (1 - z)``): a base output of a uniform sensitive ``x'`` plus ``x``;
* protected-only (``f (1 - z)``): a base output of a uniform sensitive ``x'``.

So per non-sensitive item the cell counts are one ``Multinomial(n_x, (1 - f, f z, f (1 - z)))``; the base
runs on the sensitive users plus the ``G`` "go" users (pair + protected), whose ``x'`` are iid uniform, i.e.
base true counts ``n_S + Multinomial(G, uniform over X_S)``, and the base statistic is then the base's own
exact count sampler on those counts (UE: independent binomial bits; GRR: keep-or-redraw). The statistic is

* ``rule="pure"`` (003 eqs 22, 29): base support counts at ``X_S``; alone + pair counts at ``X_N``;
* ``rule="non_pure"`` (003 eq 30): base support counts of the protected-only reports (sensitive users and the
  protected-only cell) at ``X_S``; alone counts at ``X_N``; their number ``|Y'|`` last.

In the iid model an SS base (uSS) has no fixed-count sampler, but its sensitive users are iid from ``p | X_S``
and its go users iid uniform on ``X_S``: two iid populations, which SS's item scan takes at once
(``glutf_iid``, through the base's ``counts().iid`` on two populations). Every step is an exact multinomial/binomial split of independent per-user events, so the
result has exactly the law of ``aggregate(perturb_batch(key, xs))`` given the true counts (up to the float32
resolution of the per-user path's uniforms, see ``uldp_jax.engine``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _records, _spec
from uldp_jax.mechanisms.core._counts import multinomial, multinomial_rows


def glutf_counts(key: jax.Array, mech: Any, counts: jax.Array) -> jax.Array:
    """Exact statistic of a GLUTF mechanism given true counts ``float[d]`` (see the module docstring)."""
    s_idx, n_idx = _split(mech)
    k_cells, k_go, k_base = jax.random.split(key, 3)
    cells, go = _cells(k_cells, mech, counts[n_idx])
    base_in = counts[s_idx] + multinomial(k_go, go, jnp.ones((len(s_idx),), counts.dtype))
    base_stats = _records.counts_of(mech.base).fixed(k_base, base_in)
    return _assemble(mech, cells, base_stats, jnp.sum(counts[s_idx]))


def glutf_iid(key: jax.Array, mech: Any, n: jax.Array, p: jax.Array) -> jax.Array:
    """Exact statistic of ``n`` iid users from ``p``; a base with only an iid sampler (SS) runs on two populations.

    The sensitive users are ``Bin(n, p(X_S))`` iid draws from ``p | X_S`` and the go users iid uniform on
    ``X_S``, so the base's ``counts().iid`` takes both at once as populations (``n float[2]``,
    ``p float[2, s]``; SS's item scan, ``mechanisms.subset._ss_counts.ss_counts_mixed``); bases with a fixed-count
    sampler draw the true counts ``Multinomial(n, p)`` and run ``glutf_counts``.
    """
    base = _records.counts_of(mech.base)
    if base.fixed is not None:
        k_true, k_mech = jax.random.split(key)
        return glutf_counts(k_mech, mech, multinomial(k_true, n, p))
    s_idx, n_idx = _split(mech)
    n = jnp.asarray(n, jnp.result_type(float))  # counts are carried as floats (an int n would zero p)
    p = jnp.asarray(p, n.dtype)
    k_true, k_cells, k_base = jax.random.split(key, 3)
    mass_s = jnp.sum(p[s_idx])
    true = multinomial(k_true, n, jnp.append(p[n_idx], mass_s))  # non-sensitive items, then all of X_S
    cells, go = _cells(k_cells, mech, true[:-1])
    uniform = jnp.full((len(s_idx),), 1.0 / len(s_idx), p.dtype)
    p_s = jnp.where(mass_s > 0, p[s_idx] / jnp.where(mass_s > 0, mass_s, 1.0), uniform)
    base_stats = base.iid(k_base, jnp.stack([true[-1], go]), jnp.stack([p_s, uniform]))
    return _assemble(mech, cells, base_stats, true[-1])


def _split(mech: Any) -> tuple[np.ndarray, np.ndarray]:
    sens = _spec.sensitive_mask(mech.d, mech.sensitive)
    return np.flatnonzero(sens), np.flatnonzero(~sens)


def _cells(key: jax.Array, mech: Any, counts_n: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Alone / pair / protected-only cell counts ``[|X_N|, 3]`` and the number of go users."""
    f = jnp.asarray(mech.f(), counts_n.dtype)
    fp = jnp.asarray(mech.f_protected(), counts_n.dtype)
    cells = multinomial_rows(key, counts_n, jnp.stack([1.0 - f, f - fp, fp]))
    go = jnp.sum(cells[:, 1] + cells[:, 2]) if mech.rule == "pure" else jnp.sum(cells[:, 2])
    return cells, go


def _assemble(mech: Any, cells: jax.Array, base_stats: jax.Array, n_sensitive: jax.Array) -> jax.Array:
    s_idx, n_idx = _split(mech)
    alone, pair, prot = cells[:, 0], cells[:, 1], cells[:, 2]
    pure = mech.rule == "pure"
    stats = jnp.zeros((mech.d,), base_stats.dtype).at[s_idx].set(base_stats)
    stats = stats.at[n_idx].set(alone + pair if pure else alone)
    if pure:
        return stats
    return jnp.append(stats, n_sensitive + jnp.sum(prot))
