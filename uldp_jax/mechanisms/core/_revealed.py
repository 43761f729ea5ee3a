"""The default of ``Mechanism.revealed_inputs``: which reports are protected, read off the exact channel.

A ULDP mechanism's reports split into protected ones (``Y_P``: every input may produce them, each within
``e^eps`` of every other) and invertible ones (``Y_I``: one non-sensitive input produces each, so the report
reveals it; 001 Def 2). For enumerable reports (items, short bit vectors) the exact channel says which is which:
a column outside its protected mask is invertible and its one positive row is the input it reveals. Mechanisms
with larger report spaces (GLUTF's ``<y_1, x>`` pairs, uBD's disclosed items) override ``revealed_inputs`` with
a rule on their reports' structure, which also traces under ``jit`` (this default needs concrete parameters).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _compact, _report_space, _reports


def num_reports(ys: Any) -> int:
    """The leading dimension of a report batch (any pytree of reports)."""
    return int(jnp.shape(jax.tree.leaves(ys)[0])[0])


def from_channel(mech: Any, ys: Any) -> jax.Array:
    """``int32[n]``: ``-1`` for each protected report, else the one input its channel column has (see module doc).

    Raises:
      ValueError: a traced mechanism (the channel needs concrete parameters), or a ULDP mechanism whose reports
        are neither items nor bit vectors, or whose exact channel is too large to build.
    """
    name = type(mech).__name__
    if any(isinstance(v, jax.core.Tracer) for v in jax.tree.leaves(mech)):
        raise ValueError(f"{name}.revealed_inputs: the default reads the exact channel, which needs concrete "
                         "parameters (not a mechanism traced inside jit/vmap); override revealed_inputs(ys) with a "
                         "rule on the reports' structure (as GLUTF and UBD do), or, in ul.audit_sampler, use "
                         "events='outputs' (enumerable reports: the channel's mask).")
    if mech.privacy_spec().invertible_inputs is None:  # every report is protected (LDP, E-LDP)
        return jnp.full((num_reports(ys),), -1, jnp.int32)
    if mech.report_kind not in ("item", "bits"):
        raise ValueError(f"{name}'s reports ({mech.report_kind!r}) are not items or bit vectors, so the exact "
                         "channel cannot say which are protected: define revealed_inputs(ys) (int32[n]: -1 for a "
                         "protected report, else the input an invertible report reveals).")
    _reports.check_channel_size(name, int(mech.d), int(mech.num_outputs))
    Q, protected = mech.channel_matrix()
    Q, protected = np.asarray(Q, np.float64), np.asarray(protected, bool)
    # an invertible column's one positive row (the first where the channel itself breaks invertibility: ul.audit
    # reports that)
    owner = np.where(protected, -1, np.argmax(Q > 0, axis=0)).astype(np.int32)
    if mech.report_kind == "item":
        cols = jnp.asarray(ys).astype(jnp.int32)
    else:
        bits = jnp.asarray(_compact.to_dense(ys)).astype(jnp.int32)
        cols = (bits << jnp.arange(bits.shape[-1], dtype=jnp.int32)).sum(axis=-1)
    return jnp.asarray(owner)[cols]


def supported_items(mech: Any, ys: Any) -> jax.Array:
    """``bool[n, D]``: the items each of ``n`` reports supports (``reports().support``; traceable), a
    post-processing of each report. Default: a bit vector's set bits, else each report's own statistic
    (``aggregate`` of that one report) being positive, which is per item for hashed reports, subsets and GLUTF;
    a mechanism whose statistic is laid out otherwise (uBD: one block per subset size) sets ``support``."""
    own = _report_space.own(mech).support
    if own is not None:
        return jnp.asarray(own(ys)).astype(bool)
    if mech.report_kind == "bits":
        return jnp.asarray(_compact.to_dense(ys)).astype(bool)
    one = lambda y: mech.aggregate(jax.tree.map(lambda a: a[None], y))  # noqa: E731
    return jax.vmap(one)(ys) > 0
