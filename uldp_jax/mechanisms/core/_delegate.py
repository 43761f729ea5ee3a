"""``ReportsOf``: the report side of a mechanism that reports what another mechanism reports.

A mechanism built around another one (PUM around its common mechanism, one PUM user type around the PUM's, a
mechanism seen under another guarantee) names that mechanism ``reporter``; its report kind, report space,
statistic, aggregate, report checks (``reports()``) and channel columns (``likelihood().index``) are the
reporter's.
"""

from __future__ import annotations

from typing import Any

import jax

from uldp_jax.mechanisms.core import _records, _report_space, _reports


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

    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        return self.reporter.aggregate(ys, weights)

    def reports(self) -> _report_space.Reports:
        """The reporter's statistic and report check (the bits sent keep their default, ``log2 num_outputs``)."""
        return _report_space.Reports(stats=_report_space.num_stats(self.reporter),
                                     check=lambda ys: _reports.check_reports(self.reporter, ys))

    def likelihood(self) -> _records.Likelihood:
        """The reporter's report columns (``index``); EM's likelihood is this mechanism's own channel."""
        return _records.Likelihood(index=_records.likelihood_of(self.reporter).index)
