"""``Mechanism``'s optional capabilities with a "none" (or generic) default (a mixin of the base class): exact
count samplers (``counts()``), EM's likelihood (``likelihood()``), closed forms, and the questions theory and
GLUTF ask."""

from __future__ import annotations

from typing import Any

import jax

from uldp_jax.mechanisms.core import _family, _records, _report_space, _revealed


class CapabilityDefaults:
    """Optional members of ``Mechanism`` (documented in its table); mechanisms that have them override them."""

    # ---- likelihoods for EM and the audit -----------------------------------------------------------------
    def likelihood(self) -> _records.Likelihood | None:
        """The likelihood forms EM runs on and the channel's report columns, or ``None``: EM then runs on the
        channel's columns (the dense ``channel_matrix()`` for item reports), whose columns are the items or the
        bit patterns.

        A ``Likelihood`` record (``_records.Likelihood(ops=..., product=..., report=..., index=..., support=...)``;
        every field optional): ``ops`` (O(d) channel products for EM on item histograms), ``product`` (a
        product-Bernoulli likelihood of bit vectors), ``report(ys)`` (per-report factors), ``index(ys)`` (the
        channel column of each report), ``support()`` (the items each column supports) and ``log_channel()``
        (the exact channel in log space, for the audit at large eps). Generic code reads
        it through ``_records.likelihood_of``, which fills ``index``/``support`` for item and bit reports. See
        ``Likelihood`` for what each must be.
        """
        return None

    def compact(self) -> _records.Compact | None:
        """How this mechanism draws compact reports (``CompactBits``: the positions of the ones), or ``None``.

        Bit-vector mechanisms with independent bits return ``_records.independent_bits(...)``; composite ones
        (GLUTF, PUM) wrap their bit-vector part's record.
        """
        return None

    # ---- capabilities with a "none" default -------------------------------------------------------------------
    def counts(self) -> _records.Counts | None:
        """This mechanism's exact count-level samplers, or ``None``: the engine then draws every user's report
        (the per-user path).

        A ``Counts`` record (build it with ``_records.counts_record(self, fixed, iid, draws, memory)``, which fills
        the defaults): ``fixed(key, counts)`` for true counts, ``iid(key, n, p)`` for ``n`` users drawn iid from
        ``p`` (either may be ``None``, not both), and the cost the engine weighs against the per-user path
        (``draws(iid)``, ``memory(iid)``). See ``Counts`` for the laws they must have.
        """
        return None

    def reports(self) -> _report_space.Reports | None:
        """This mechanism's report space where it differs from the defaults, or ``None``.

        A ``Reports`` record (``_records.Reports(stats=..., check=..., bits=..., sample=...)``; every field
        optional): the length of ``aggregate``'s statistic (default ``num_outputs`` for items, ``d`` for bit
        vectors), a report check ``check(ys)`` (default: the item / bit forms, else ``perturb_batch``'s
        structure), the bits a user sends (default ``log2(num_outputs)``) and ``sample(key, xs, weights)``, the
        statistic drawn without the reports (default: the compact sampler when ``compact().stats``, else
        ``aggregate(perturb_batch(key, xs), weights)``). Generic code reads it through ``ul.mechanisms.core``'s
        ``num_stats``, ``check_reports``, ``comm_bits`` and ``sample_stats``.
        """
        return None

    # ---- ULDP: protected and invertible reports --------------------------------------------------------------
    def revealed_inputs(self, ys: Any) -> jax.Array:
        """``int32[n]`` for a batch of ``n`` reports: ``-1`` for a protected report (``Y_P``), else the one input
        that can produce it (an invertible report, ``Y_I``; 001 Def 2). Every report is protected under LDP.
        ``revealed_inputs(ys) < 0`` is the protected-report predicate.

        The default reads the exact channel (its protected mask, and an invertible column's one positive row),
        so it needs enumerable reports (items, short bit vectors) and concrete parameters; mechanisms with other
        reports override it with a rule on their structure (GLUTF: the disclosed item; uBD: the same), which
        traces under ``jit``. ``ul.audit_sampler`` reads it to test only protected reports and to check that an
        invertible report comes from the one non-sensitive input it names.

        Raises:
          ValueError: the default on reports it cannot read off the channel (see ``_revealed.from_channel``).
        """
        return _revealed.from_channel(self, ys)


    # ---- questions theory, tuning and GLUTF ask ---------------------------------------------------------------
    # A library class's fixed closed form (a ``Family``, ``mechanisms/core/_family.py``); ``_family.of_class``
    # reads it (``ul.tuning.optimize`` asks a class). A plain class constant: annotating it is refused.
    _closed_form = None

    def closed_form(self) -> _family.Family | None:
        """This instance's closed form: a ``Family`` record (the risk, the tunable parameter ``param`` and its
        domain, and ``tuned(mech, value)``: the copy ``ul.tune`` returns), or ``None``: ``ul.theory`` then
        computes risks exactly from the channel moments (``theory/_exact.py``)."""
        return type(self)._closed_form

    def pure(self) -> _records.Pure | None:
        """003 Def 6's ``(p*, q*, z*)`` (and GLUTF's closed forms for a pure LDP base) as a ``Pure`` record of
        traceable values, or ``None`` for a mechanism that is not pure."""
        return None

    def pure_probs(self) -> tuple[float, float, float]:
        """``(p*, q*, z*)`` as float64 floats (``z*`` is nan for a pure LDP mechanism): ``pure()`` read concretely.

        Kept under this name because outside code calls it (the GLUTF issue's public API); ``pure()`` is the
        traceable record.

        Raises:
          ValueError: the mechanism is not pure (``pure()`` is ``None``, e.g. a GLUTF with ``rule="non_pure"``).
        """
        return _records.pure_floats(self)
