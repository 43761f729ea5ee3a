"""The records ``Mechanism``'s grouped optional capabilities return (``None`` when a mechanism has none).

``pure()`` answers 003's questions about a pure mechanism (GLUTF's and the closed forms'); ``compact()`` says how
a bit-vector mechanism draws compact reports; ``estimator()`` describes the linear estimator ``debias`` (its
per-item affine form, its variance). Each record is one member on the base, so a capability that comes
with several answers adds one name to the protocol, not five.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core import _pure_uldp as _th


class Pure(NamedTuple):
    """A pure mechanism's probabilities (003 Def 6), traceable JAX values (``Mechanism.pure()``).

    A report supports the user's own item w.p. ``p`` and each other sensitive item w.p. ``q``; a pure ULDP
    mechanism also reports a non-sensitive item as itself w.p. ``z``. The last three fields are GLUTF's questions
    to a pure LDP base (``z is None``): closed forms that spare it reading the base's exact channel.
    """

    p: Any  # p*: float[] (a grid: the grid's shape)
    q: Any  # q*
    z: Any = None  # z* of a pure ULDP mechanism; None: pure LDP (a valid GLUTF base)
    share: Any = None  # max_{i,m} p_im / sum_t p_tm over the outputs; None: GLUTF reads it off the channel
    z_max: Callable[[int], Any] | None = None  # s -> GLUTF's largest valid z over s sensitive items; None: channel
    z_published: Any = None  # 003's published (ULDP-violating) z for this base; None: 003 publishes none


class Compact(NamedTuple):
    """How a bit-vector mechanism draws compact reports (``CompactBits``, the positions of the ones)
    (``Mechanism.compact()``; ``mechanisms.core._compact``)."""

    perturb: Callable[..., Any]  # (key, xs, *args, num_chunks=None) -> reports; perturb_batch's law, no n x d bits
    preferred: bool  # ul.perturb returns compact reports (d >= COMPACT_MIN_D, at most d / 8 ones expected)
    stats: bool = False  # sample_stats and simulate's report path draw through the compact sampler
    params: tuple[np.ndarray, Any, Any] | None = None  # (items_s, own_prob float[d], q): independent bits


class Estimator(NamedTuple):
    r"""What ``emp``, ``emp+thr`` and ``ul.theory`` ask about the linear estimator ``debias`` (``Mechanism.estimator()``;
    ``None``: the channel's least-squares inverse, its variance from the channel).

    ``affine``: ``(a float[d], b float[d])`` with :math:`E[stats_j] / n = a_j p_j + b_j` (the default ``debias``
    is then :math:`(stats / n - b) / a`, O(d)). ``variance``: ``(p, n) -> float[d]``, the iid per-item variance
    of ``debias`` where neither the affine form nor the channel gives it (a mechanism whose own ``debias`` runs a
    transform, e.g. the Hadamard family's FWHT). Read them through ``mechanisms.core._estimation``'s ``affine``,
    ``debias_variance`` and ``stats_matrix``.
    """

    affine: tuple[Any, Any] | None = None
    variance: Callable[[Any, Any], Any] | None = None


def independent_bits(d: int, items_s: np.ndarray, own_prob: Any, q: Any) -> Compact:
    """The ``Compact`` record of reports with independent bits over ``d`` items: the own bit is 1 w.p.
    ``own_prob[x]``, every bit of ``items_s`` other than ``x`` w.p. ``q``, every other bit is 0.

    ``stats``: a domain of at least ``COMPACT_MIN_D`` and, for a concrete rate, at most ``d / 8`` ones expected
    (decided from the domain alone when the rate is traced).
    """

    def perturb(key: Any, xs: Any, num_chunks: int | None = None) -> _compact.CompactBits:
        return _compact.sample_ones(key, xs, items_s, own_prob, q, d, num_chunks)

    concrete = _validate.is_concrete(q)
    preferred = concrete and _compact.prefers_compact(d, 1.0 + len(items_s) * float(np.max(np.asarray(q))))
    stats = d >= _compact.COMPACT_MIN_D and (not concrete or preferred)
    return Compact(perturb, preferred, stats, (items_s, own_prob, q))


def pure_floats(mech: Any) -> tuple[float, float, float]:
    """``mech.pure()``'s ``(p*, q*, z*)`` as float64 floats (leaves cast to float64 under x64; ``z*`` is nan for
    a pure LDP mechanism), for checks against exact channels.

    Raises:
      ValueError: if ``mech`` is not pure (``pure()`` is ``None``).
    """
    with _th.x64():
        mech64 = jax.tree_util.tree_map(lambda v: jnp.asarray(np.asarray(v, np.float64)), mech)
        pure = mech64.pure()
        if pure is None:
            raise ValueError(f"{type(mech).__name__} is not pure (pure() is None), e.g. a GLUTF with "
                             "rule='non_pure' (003 eq 10).")
        z = float("nan") if pure.z is None else float(pure.z)
        return float(pure.p), float(pure.q), z
