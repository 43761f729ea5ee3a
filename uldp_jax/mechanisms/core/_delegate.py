"""``ReportsOf``: the report side of a mechanism that reports what another mechanism reports.

A mechanism built around another one (PUM around its common mechanism, one PUM user type around the PUM's, a
mechanism seen under another guarantee) names that mechanism ``reporter``; its report kind, report space,
statistic, aggregate, report checks and channel columns are the reporter's.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


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

    def report_index(self, ys: Any) -> np.ndarray:
        return self.reporter.report_index(ys)
