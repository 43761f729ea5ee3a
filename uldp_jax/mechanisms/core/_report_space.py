"""``Reports``, the record ``Mechanism.reports()`` returns: the size of a mechanism's statistic, how its reports
are checked, what one costs to send and how the statistic is drawn without them; with ``num_stats`` and ``comm_bits``, which read it with their defaults
(``_reports.check_reports`` reads ``check``). A leaf module: ``_compact`` and ``_reports`` import it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple


class Reports(NamedTuple):
    """A mechanism's report space (``Mechanism.reports()``; ``None``: every default). Every field is optional.

    ``stats``: the length of the statistic ``aggregate`` returns (default: ``num_outputs`` for item reports, ``d``
    for bit vectors; hashed and set reports count supports per item, ``d``). ``check(ys)``: raises
    ``TypeError``/``ValueError`` naming ``ys`` unless ``ys`` is a batch of this mechanism's reports (default: the
    item / bit-vector forms, else the structure of ``perturb_batch``'s reports; ``_reports.check_reports``).
    ``bits``: the bits one user sends, 003 Def 5 (default ``log2(num_outputs)``). ``sample(key, xs, weights)``: the
    statistic of ``perturb_batch(key, xs)``'s reports drawn without forming them, equal to ``aggregate`` of them
    in law and in bits (default: the compact sampler's per-bit sums when ``compact().stats``, else ``aggregate(
    perturb_batch(key, xs), weights)``; ``_reports.sample_stats``). ``columns()``: ``float[num_outputs,
    stats]``, the statistic one report of each exact channel column adds (default: items and bit vectors, read
    off ``report_kind``); what the exact risks (``ul.theory.estimator_matrix``) use for a statistic of any shape.
    ``support(ys)``: ``bool[n, D]``, the items each report supports, traceable (``ul.audit_sampler``'s support
    events; default: set bits, else each report's own statistic ``> 0``; ``_revealed.supported_items``).
    """

    stats: int | None = None  # len(aggregate(ys)); None: items num_outputs, bits d
    check: Callable[[Any], None] | None = None  # ys -> None or raises; None: item / bit forms or the sampler's
    bits: float | None = None  # bits a user sends; None: log2(num_outputs)
    sample: Callable[..., Any] | None = None  # (key, xs, weights) -> stats; None: compact sums or aggregate(reports)
    columns: Callable[[], Any] | None = None  # () -> float[num_outputs, stats]; None: items / bit vectors
    support: Callable[[Any], Any] | None = None  # ys -> bool[n, D] items supported; None: _revealed's default


def own(mech: Any) -> Reports:
    """``mech.reports()`` (an empty record for ``None``).

    Raises:
      TypeError: if ``reports()`` returns something other than a ``Reports`` record or ``None``.
    """
    rec = mech.reports()
    if rec is None:
        return Reports()
    if not isinstance(rec, Reports):
        raise TypeError(f"Expected {type(mech).__name__}.reports() to return a Reports record "
                        f"(uldp_jax.mechanisms.core._records) or None, got {type(rec).__name__}.")
    return rec


def num_stats(mech: Any) -> int:
    """Length of the statistic ``mech.aggregate`` returns: ``reports().stats``, else ``d`` for bit vectors and
    ``num_outputs`` otherwise."""
    stats = own(mech).stats
    if stats is not None:
        return stats
    if mech.report_kind == "bits":
        return mech.d
    return mech.num_outputs


def comm_bits(mech: Any) -> float:
    """Bits one user sends (003 Def 5): ``reports().bits``, else ``log2(num_outputs)``."""
    bits = own(mech).bits
    return float(math.log2(mech.num_outputs)) if bits is None else bits
