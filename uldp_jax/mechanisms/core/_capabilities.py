"""``Mechanism``'s optional capabilities with a "none" (or generic) default (a mixin of the base class): exact
count samplers, tuning, closed forms, and the questions EM, theory and GLUTF ask."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact
from uldp_jax.mechanisms.core._pytree import replace


class CapabilityDefaults:
    """Optional members of ``Mechanism`` (documented in its table); mechanisms that have them override them."""

    # ---- likelihoods for EM and the audit -----------------------------------------------------------------
    def product_likelihood(self) -> tuple[np.ndarray, bool] | None:
        r"""The EM likelihood of bit-vector reports, or ``None`` (EM then uses the channel / hashed likelihood).

        A mechanism returns ``(product bool[d], invertible)`` when its report ``y`` has likelihood
        :math:`P(y|x) \propto t + (1 - t) y_x` (``t = e^{-eps}``) for every ``x`` in ``product`` (the unary
        encodings), and, if ``invertible``, a report with a bit set outside ``product`` identifies its input
        (uRAP's non-sensitive bits). EM then runs on the reported ones (``estimation._em_reports``).
        """
        return None

    def channel_ops(self) -> tuple[Callable, Callable] | None:
        """``(matvec: p -> p Q, rmatvec: v -> Q v)``, traceable and cheaper than the dense channel, or ``None``.

        EM on the output histogram of item reports runs one jitted solver over these; without them it builds the
        dense channel ``channel_matrix()`` once (concrete parameters, small domains).
        """
        return None

    def log_channel_matrix(self) -> tuple[Any, Any] | None:
        """``(log Q, protected)`` where a mechanism computes it without forming ``Q`` (entries that underflow
        float64 at large eps), or ``None``: the audit then takes logs of ``channel_matrix()``."""
        return None

    def report_likelihood(self, ys: Any) -> tuple[jax.Array, jax.Array, jax.Array] | None:
        r"""Per-report likelihood factors for EM, or ``None`` (default: EM uses the channel's columns on the
        aggregate of item reports, or ``product_likelihood`` for bit vectors).

        Returns ``(L float[n, d], w float[n], N float[d])``: report ``i`` (weight ``w_i``) has likelihood
        proportional to ``L[i, x]``; ``N`` counts invertible reports per item (likelihood ``∝ p_x``). The
        library's mechanisms return the compact ``SupportRatio`` form (``mechanisms.core._likelihood``) instead.
        """
        return None

    def compact_params(self) -> tuple[np.ndarray, jax.Array, jax.Array] | None:
        """``(items_s, own_prob float[d], q)`` when the reports are independent bits: the own bit is 1 w.p.
        ``own_prob[x]``, every bit of ``items_s`` other than ``x`` w.p. ``q``, every other bit is 0. ``None``:
        no compact sampler (``perturb_compact`` then packs the dense reports)."""
        return None

    def perturb_compact(self, key: jax.Array, xs: jax.Array, num_chunks: int | None = None) -> Any:
        """Reports as ``CompactBits`` (positions of the ones), drawn without the ``n x d`` bits when the
        mechanism has ``compact_params``; same law as ``perturb_batch`` (``mechanisms.core._compact``)."""
        params = self.compact_params()
        if params is None:
            return _compact.to_compact(self.perturb_batch(key, xs))
        items_s, own_prob, q = params
        return _compact.sample_ones(key, xs, items_s, own_prob, q, self.num_stats, num_chunks)

    def compact_stats(self) -> bool:
        """Whether ``sample_stats`` (simulate's per-user path) and simulate's report path use the compact
        sampler: a compact sampler, ``d >= COMPACT_MIN_D`` and (for a concrete rate) at most ``d / 8`` ones
        expected. Static: decided from the domain alone when the rate is traced."""
        params = self.compact_params()
        if params is None or self.num_stats < _compact.COMPACT_MIN_D:
            return False
        return (not _validate.is_concrete(params[2])) or self.prefers_compact()

    def prefers_compact(self) -> bool:
        """Whether ``ul.perturb`` returns compact reports (size rule of ``mechanisms.core._compact``)."""
        params = self.compact_params()
        if params is None or not _validate.is_concrete(params[2]):
            return False
        items_s, _, q = params
        return _compact.prefers_compact(self.num_stats, 1.0 + len(items_s) * float(np.asarray(q)))

    def sample_stats(self, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``aggregate(perturb_batch(key, xs), weights)`` in distribution (override to skip the reports).

        Mechanisms with ``compact_params`` and ``compact_stats()`` draw the per-bit sums of
        ``perturb_compact(key, xs)`` instead (same key, same values; O(number of ones)).
        """
        if self.compact_stats():
            items_s, own_prob, q = self.compact_params()
            return _compact.sample_counts(key, xs, items_s, own_prob, q, self.num_stats, weights)[0]
        return self.aggregate(self.perturb_batch(key, xs), weights)

    # ---- capabilities with a "none" default -------------------------------------------------------------------
    def count_sampler(self) -> Callable[..., jax.Array] | None:
        """An exact count-level sampler ``fn(key, counts float[d]) -> stats`` (fixed model), or ``None``.

        ``fn`` has exactly the law of ``aggregate(perturb_batch(key, xs))`` for any ``xs`` with
        ``bincount(xs) == counts`` (floats carrying exact integers; the engine runs it under float64). ``None``
        makes the engine draw every user's report (the per-user path). Building blocks: ``mechanisms.core._counts``.
        """
        return None

    def iid_count_sampler(self) -> Callable[..., jax.Array] | None:
        """An exact sampler ``fn(key, n, p float[d]) -> stats`` for ``n`` users drawn iid from ``p``, or ``None``.

        Optional even with a ``count_sampler`` (the engine then draws ``Multinomial(n, p)`` true counts first);
        override it when the iid law is cheaper (one ``Multinomial(n, p Q)``) or the only one available (SS). A
        mechanism with an iid sampler but no ``count_sampler`` should also accept ``P`` independent populations,
        ``n float[P]`` with ``p float[P, d]``, returning the stats of their union (GLUTF's go users need it).
        """
        return None

    def count_draws(self, iid: bool) -> float:
        """Exact draws per repetition of the count sampler (binomials, multinomial cells), for the engine's cost.

        ``simulate(path="auto")`` compares this (times the cost of a binomial) with the per-user path's random
        words (``n`` users) and takes the cheaper exact path; it also sizes the counts path's repetition chunks
        from it. Default ``d + num_stats``: the true counts (``Multinomial(n, p)``, iid model) and O(1) draws per
        statistic. Override when the sampler draws more (``sum_x Multinomial(n_x, Q[x])`` over ``m`` outputs:
        ``d m`` cells).
        """
        return float(self.d + self.num_stats)

    def count_memory(self, iid: bool) -> float | None:
        """Bytes of temporaries one repetition of the count sampler holds at once, or ``None`` (the default).

        ``None``: the engine estimates them from ``count_draws`` (every draw held at once, as in multinomial
        splitting). Override when the draws are sequential (SS's scan holds O(k) bins, not its O(d k) draws), so
        that the repetition chunks and ``path="auto"``'s memory check use the real size.
        """
        return None

    def tunable_params(self) -> tuple[str, ...]:
        """Names of the parameters that tuning may change (besides ``eps``).

        Default: the tunable parameter of ``closed_form_family`` (its ``domain``/``integer`` give the constraint
        that ``ul.tuning`` maps to an unconstrained scale for optax), else none.
        """
        fam = self.closed_form_family
        return () if fam is None or fam.param is None else (fam.param,)

    def comm_bits(self) -> float:
        """Bits a user sends (``log2`` of the report space)."""
        return float(math.log2(self.num_outputs))

    # ---- questions theory, tuning and GLUTF ask ---------------------------------------------------------------
    # A ``Family`` record (``mechanisms/core/_family.py``) with the closed-form risk and tunable parameter, or
    # ``None``: ``ul.theory`` then computes risks exactly from the channel moments (``theory/_exact.py``).
    closed_form_family: ClassVar[Any] = None

    def closed_form(self) -> Any:
        """This instance's closed-form ``Family`` (default: the class's ``closed_form_family``), or ``None``."""
        return self.closed_form_family

    def pure_pq(self) -> tuple[Any, Any] | None:
        """``(p*, q*)`` as traceable JAX values when this is a pure LDP mechanism (003 Def 6), else ``None``.

        GLUTF uses it for its ``f`` (003 eq 9) and debiasing.
        """
        return None

    def pure_uldp_probs(self) -> tuple[Any, Any, Any] | None:
        """``(p*, q*, z*)`` of a pure ULDP mechanism from its own parameters (003 Def 6), else ``None``."""
        return None

    def with_tuned(self, value: Any, theta_n: Any = None) -> Any:
        """A copy with the closed form's tunable parameter set to ``value`` (``ul.tune``'s result).

        ``theta_n`` is the non-sensitive mass the tuning assumed (kept by mechanisms that record it).
        """
        return replace(self, **{self.closed_form().param: value})

    def glutf_share(self) -> Any:
        r""":math:`\max_{i,m} p_{im}/\sum_t p_{tm}` over this (base) mechanism's outputs in closed form, or
        ``None``: GLUTF then reads it off the exact channel."""
        return None

    def glutf_z_max(self, s: int) -> Any:
        """Closed form of GLUTF's largest valid ``z`` over this base with ``s`` sensitive items, or ``None``."""
        return None

    def glutf_z_published(self) -> Any:
        """003's published (ULDP-violating) ``z`` for this base, or ``None`` when 003 publishes none."""
        return None
