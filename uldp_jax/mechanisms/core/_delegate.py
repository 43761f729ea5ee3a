"""``ReportsOf``: the report side of a mechanism that reports what another mechanism reports.

A mechanism built around another one (PUM around its common mechanism, one PUM user type around the PUM's, a
mechanism seen under another guarantee) names that mechanism ``reporter``; its report kind, report space,
statistic, aggregate, report checks and channel columns (``likelihood().index``) are the reporter's.
"""

from __future__ import annotations

from typing import Any

import jax

from uldp_jax.mechanisms.core import _records


class ReportsOf:
    """Mixin (before ``ul.Mechanism``): the report members, answered by ``self.reporter``."""

    @property
    def reporter(self) -> Any:
        """The mechanism whose reports these are."""
        raise NotImplementedError(f"{type(self).__name__} must define reporter.")

    @property
    def report_kind(self) -> str:
        return self.reporter.report_kind

    @property
    def num_outputs(self) -> int:
        return self.reporter.num_outputs

    @property
    def num_stats(self) -> int:
        return self.reporter.num_stats

    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        return self.reporter.aggregate(ys, weights)

    def check_reports(self, ys: Any) -> None:
        self.reporter.check_reports(ys)

    def likelihood(self) -> _records.Likelihood:
        """The reporter's report columns (``index``); EM's likelihood is this mechanism's own channel."""
        return _records.Likelihood(index=_records.likelihood_of(self.reporter).index)
