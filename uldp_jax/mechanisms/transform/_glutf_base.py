r"""What GLUTF reads off a base without closed forms (a user's mechanism), once, at construction, outside tracing.

GLUTF's largest valid z needs the base's share :math:`\max_{i,m} p_{im}/\sum_t p_{tm}` over its actual outputs
(docs/errata.md#003-theorem-1-glutfs-valid-z) and its EM needs the base's per-report likelihood. The library's
bases give both in closed form (``Pure.share``; ``likelihood().report`` or ``product``). For any other base they
are read here from its exact channel, in float64, and kept as leaves of the GLUTF mechanism, so ``perturb``,
``simulate`` and EM never build a channel under ``jit``/``vmap`` (where it cannot be read) and never build one past
the channel-size guard (``_reports.check_channel_size``: refused with the reason, not allocated).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _pure_uldp as _th, _records, _reports
from uldp_jax.mechanisms.core._reports import MAX_CHANNEL_ENTRIES  # noqa: F401  (GLUTF's size test)


def needs_share(base: Any, z_rule: str) -> bool:
    """Whether GLUTF's z (``z_rule="max"``) needs a share the base does not give in closed form."""
    pure = base.pure()
    return z_rule == "max" and (pure is None or pure.share is None)


def needs_ratio(base: Any) -> bool:
    """Whether GLUTF's EM needs the base's support ratio read off its channel (no per-report likelihood)."""
    rec = _records.likelihood_of(base)
    return rec.report is None and rec.product is None


def _concrete(base: Any) -> bool:
    return all(_validate.is_concrete(leaf) for leaf in jax.tree_util.tree_leaves(base))


def _channel(base: Any, s: int, what: str) -> np.ndarray:
    name = f"GLUTF over {type(base).__name__}"
    if not _concrete(base):
        raise ValueError(f"{name}: {what} is read off the base's exact channel, which cannot be built inside "
                         "jit/vmap. Build a grid from concrete points (jax.tree.map(jnp.stack, *[ul.glutf(...) "
                         "for eps in grid]); ul.study does), or give the base's closed form (Pure.share).")
    try:
        _reports.check_channel_size(name, s, int(base.num_outputs))
    except ValueError as e:
        raise ValueError(f"{e} GLUTF needs {what}: give the base's closed form (pure() with share=..., "
                         "uldp_jax.mechanisms.core._records.Pure) or pass share= to ul.glutf.") from e
    with _th.x64():  # the leaves in float64: a float32 channel's share would loosen z's bound by an ulp
        base64 = jax.tree_util.tree_map(lambda v: jnp.asarray(np.asarray(v, np.float64)), base)
        return np.asarray(base64.channel_matrix()[0], np.float64)


def channel_share(base: Any, s: int) -> np.float64:
    r""":math:`\max_{i,m} p_{im}/\sum_t p_{tm}` over the base's outputs (float64, exact channel).

    Raises:
      ValueError: a traced base, or a channel past the size guard (with what to supply instead).
    """
    Q = _channel(base, s, "the base's share max_{i,m} p_im / sum_t p_tm (z's bound)")
    tot = Q.sum(axis=0)
    keep = tot > 0
    return np.float64((Q[:, keep] / tot[keep]).max())


def check_share(base: Any, s: int, share: Any) -> np.float64:
    """A caller's ``share``: in ``(0, 1]``, and not below the channel's where the channel can be read (a smaller
    share gives a larger z, which would break ULDP).

    Raises:
      ValueError: a share outside ``(0, 1]`` or below the exact one.
    """
    v = float(np.asarray(share))
    if not (0.0 < v <= 1.0):
        raise ValueError(f"Expected share={share!r} in (0, 1] (max_i,m p_im / sum_t p_tm).")
    if _concrete(base) and int(base.num_outputs) * s <= _reports.MAX_CHANNEL_ENTRIES:
        exact = float(channel_share(base, s))
        if v < exact * (1.0 - 1e-9):
            raise ValueError(f"share={v!r} is below the base's exact share {exact!r} (its channel): z would exceed "
                             "its valid bound and GLUTF would not be ULDP.")
    return np.float64(v)


def channel_ratio(base: Any, s: int) -> np.float64 | None:
    """The base's support ratio ``t`` (``P(y|x) = C(y) (t + (1 - t) 1[x in S(y)])`` for every output ``y``, one
    ``t``) from its exact channel and support; ``None`` when its channel has no such form (GLUTF's EM then
    refuses, naming the likelihood to define)."""
    S = _records.likelihood_of(base).support()
    if S is None:
        return None
    Q = _channel(base, s, "the base's support ratio (EM's likelihood)")
    S = np.asarray(S, bool)  # [m, s]
    ratios = []
    for col, sup in zip(Q.T, S):
        on, off = col[sup], col[~sup]
        if on.size == 0 or off.size == 0:
            continue
        if np.ptp(on) > 1e-9 * on.max() or np.ptp(off) > 1e-9 * max(off.max(), 1e-300) or on.max() <= 0:
            return None
        ratios.append(off.max() / on.max())
    if not ratios:
        return np.float64(1.0)
    ratios = np.asarray(ratios)
    return np.float64(ratios[0]) if np.ptp(ratios) <= 1e-9 * ratios.max() else None
