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

Every step is an exact multinomial/binomial split of independent per-user events, so the result has exactly
the law of ``aggregate(perturb_batch(key, xs))`` given the true counts (up to the float32 resolution of the
per-user path's uniforms, see ``uldp_jax.simulate``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax._fastpath._blocks import multinomial, multinomial_rows
from uldp_jax._fastpath._registry import count_sampler, register_count_sampler
from uldp_jax.mechanisms import _base
from uldp_jax.mechanisms._glutf import GLUTF
from uldp_jax.mechanisms._ulh import ULH
from uldp_jax.mechanisms._uss import USS
from uldp_jax.mechanisms._uue import UUE
from uldp_jax.mechanisms._uwheel import UWheel


def glutf_counts(key: jax.Array, mech: Any, counts: jax.Array) -> jax.Array:
    """Exact statistic of a GLUTF mechanism given true counts ``float[d]`` (see the module docstring)."""
    sens = _base.sensitive_mask(mech.d, mech.sensitive)
    s_idx, n_idx = np.flatnonzero(sens), np.flatnonzero(~sens)
    f = jnp.asarray(mech.f(), counts.dtype)
    fp = jnp.asarray(mech.f_protected(), counts.dtype)
    k_cells, k_go, k_base = jax.random.split(key, 3)
    cells = multinomial_rows(k_cells, counts[n_idx], jnp.stack([1.0 - f, f - fp, fp]))
    alone, pair, prot = cells[:, 0], cells[:, 1], cells[:, 2]
    pure = mech.rule == "pure"
    go = jnp.sum(pair + prot) if pure else jnp.sum(prot)
    base_in = counts[s_idx] + multinomial(k_go, go, jnp.ones((len(s_idx),), counts.dtype))
    base_stats = count_sampler(mech.base)(k_base, mech.base, base_in)
    stats = jnp.zeros((mech.d,), counts.dtype).at[s_idx].set(base_stats)
    stats = stats.at[n_idx].set(alone + pair if pure else alone)
    if pure:
        return stats
    return jnp.append(stats, jnp.sum(counts[s_idx]) + jnp.sum(prot))


def _base_has_counts(mech: Any) -> bool:
    return count_sampler(mech.base) is not None


for _cls in (GLUTF, UUE, USS, ULH, UWheel):  # applies whenever the base has an exact count sampler
    register_count_sampler(_cls, glutf_counts, when=_base_has_counts)
