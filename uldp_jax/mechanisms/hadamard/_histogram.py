"""What the Hadamard family shares: item reports over Hadamard cells, sampled at count level by multinomials.

HR, HighLowHR, BlockHR and HadamardResponse report one cell of a (block-)Hadamard code. Their exact count
samplers are the same for all four: the report histogram is ``sum_x Multinomial(n_x, Q[x])`` (fixed model) or
one ``Multinomial(n, p Q)`` (iid model), with ``Q``'s rows and ``p Q`` from the mechanism's own fast
Walsh-Hadamard ``channel_matvec`` (``mechanisms.core._counts``). Their estimate is a transform too, so they share
one ``estimator()``: each class's own ``decode`` and the variance of its closed form; and EM runs on the histogram
through the same fast ``channel_matvec`` / ``channel_rmatvec`` (one ``likelihood()``).
"""

from __future__ import annotations

from uldp_jax.mechanisms.core import _counts, _records


class HadamardCounts:
    """Mixin for the Hadamard family's shared members (put it before ``Mechanism`` in the bases)."""

    def estimator(self) -> _records.Estimator:
        """``debias`` is the class's ``decode(stats, n)``, a fast Walsh-Hadamard transform (no per-item affine form);
        its iid per-item variance is the class's closed form ``item_variance(p, n)``."""
        return _records.Estimator(variance=self.item_variance, debias=self.decode)

    def likelihood(self) -> _records.Likelihood:
        """EM on the histogram: ``(p -> p Q, v -> Q v)`` by fast Walsh-Hadamard transforms (``channel_matvec``,
        ``channel_rmatvec``)."""
        return _records.Likelihood(ops=(self.channel_matvec, self.channel_rmatvec))

    def counts(self) -> _records.Counts:
        """Exact: the report histogram is ``sum_x Multinomial(n_x, Q[x])`` over the Hadamard cells (``d x
        num_outputs`` cells); iid: one ``Multinomial(n, p Q)`` (``p Q`` by fast Walsh-Hadamard transforms,
        ``d + num_outputs`` draws)."""
        return _records.counts_record(
            self,
            fixed=lambda key, counts: _counts.histogram_counts(key, self, counts),
            iid=lambda key, n, p: _counts.histogram_iid(key, self, n, p),
            draws=lambda iid: float(self.d + self.num_outputs) if iid else float(self.d * self.num_outputs))
