"""``SamplerAudit``: what ``ul.audit_sampler`` found, as fields, a readable report and a plot (NumPy; no sampling)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True, repr=False)
class SamplerAudit:
    r"""Result of ``ul.audit_sampler``: an empirical lower bound on the privacy loss a sampler spends.

    Every bound holds with probability at least ``confidence`` (Clopper-Pearson on a fresh sample, events chosen on
    a separate selection sample). ``ok`` is False exactly where the overall bound exceeds the claim: the sampler
    then violates its claim at that confidence. ``ok`` True means only "no violation found with these trials".

    Attributes:
      eps_lower: overall lower bound on eps (at ``delta``), float; 0 when no event carries evidence.
      claimed: the claimed eps of the attaining pair (``spec.E[x, x']``; the spec's eps for LDP and ULDP).
      ok: the bound does not exceed the claim (and no invertible output was seen breached, for ULDP).
      confidence: level of every bound (``1 - alpha``).
      pvalue: p-value of the claim on the overall event: the smallest ``1 - confidence`` at which the bound would
        exceed ``claimed`` (conservative; 1.0 when none would). ``ok`` is ``pvalue > 1 - confidence``.
      delta: the approximate-LDP ``delta`` the bound is taken at (0: pure LDP).
      pair: ``(x, x')`` attaining the overall bound (chosen on the selection sample).
      event: the outputs of its event (a tuple of report columns), or its description (``"supports x, not x'"``).
      pairs: ``int[P, 2]`` every tested ordered pair.
      pair_eps: ``float64[P]`` each pair's bound (each at ``confidence`` on its own).
      pair_claimed: ``float64[P]`` each pair's claimed eps.
      eps_delta: ``((delta, eps), ...)``: the overall event's bound at several ``delta`` (approximate LDP).
      invertible_ok: no non-protected output was seen from a sensitive input or from two inputs (ULDP).
      invertible_breaches: ``((output, inputs), ...)`` the breaches seen: a non-protected report column and the
        inputs that reached it (``events_from="outputs"``), or, with support events, the input an invertible
        report named (``-1``: not named) and the input it came from.
      event_counts: ``(A, B, n)``: fresh reports of ``x`` and of ``x'`` in the overall event, of ``n`` each.
      trials: reports drawn in all (both samples, all inputs).
      select_trials: reports per input in the selection sample.
      fresh_trials: reports per input in the fresh sample.
      curve: ``(trials float64[K], eps float64[K])``: the overall event's bound on the first reports of the fresh
        sample (``trials``: all reports drawn by then); each point holds at ``confidence`` on its own.
      events_from: ``"outputs"`` (likelihood-ratio-ordered sets of report columns) or ``"support"`` (cells of the
        reports' support of ``x`` and ``x'``: bit vectors, hashed reports, subsets).
      kind: the claim's kind (``ldp``, ``uldp``, ``eldp``, ...).
      sampler: what was audited, in words.
    """

    eps_lower: float
    claimed: float
    ok: bool
    confidence: float
    pvalue: float
    delta: float
    pair: tuple[int, int]
    event: Any
    pairs: np.ndarray
    pair_eps: np.ndarray
    pair_claimed: np.ndarray
    eps_delta: tuple[tuple[float, float], ...]
    invertible_ok: bool
    invertible_breaches: tuple[tuple[int, tuple[int, ...]], ...]
    event_counts: tuple[int, int, int]
    trials: int
    select_trials: int
    fresh_trials: int
    curve: tuple[np.ndarray, np.ndarray]
    events_from: str
    kind: str
    sampler: str

    @property
    def eps_point(self) -> tuple[float, float]:
        """``(log(A / B), se)``: the overall event's empirical log-ratio (a point estimate, not a bound) and its
        delta-method standard error ``sqrt(1/A - 1/n + 1/B - 1/n)`` (``inf`` where a count is 0)."""
        A, B, n = self.event_counts
        if A == 0 or B == 0:
            return (float("inf") if A else float("nan"), float("inf"))
        return float(np.log(A / B)), float(np.sqrt(max(1 / A - 1 / n + 1 / B - 1 / n, 0.0)))

    @property
    def verdict(self) -> str:
        """``"consistent with the claim"`` or ``"violates the claim at confidence c"``."""
        if self.ok:
            return "consistent with the claim"
        return f"violates the claim at confidence {self.confidence:g}"

    def table(self, max_rows: int = 12) -> str:
        """The pairs with the largest bounds, one line each: ``x  x'  eps_lower  claimed``."""
        order = np.argsort(-np.where(np.isfinite(self.pair_eps), self.pair_eps, -1e300), kind="stable")
        lines = ["  pairs (each bound at the confidence on its own; their maximum is not a bound, the overall one is):",
                 f"  {'x':>5} {'x_':>5}  {'eps_lower':>10}  {'claimed':>8}"]
        for i in order[:max_rows]:
            x, x_ = self.pairs[i]
            lines.append(f"  {x:>5} {x_:>5}  {_fmt(self.pair_eps[i]):>10}  {self.pair_claimed[i]:>8.4g}")
        if len(order) > max_rows:
            lines.append(f"  ... {len(order) - max_rows} more pairs (SamplerAudit.pairs, .pair_eps)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        what = "(eps, delta)" if self.delta > 0 else "eps"
        head = (f"audit_sampler({self.sampler}): {self.kind} claim eps={self.claimed:.4g}"
                + (f", delta={self.delta:g}" if self.delta > 0 else ""))
        lines = [head,
                 f"  empirical {what} lower bound {_fmt(self.eps_lower)} at confidence {self.confidence:g} "
                 f"(pair {self.pair}, event {_event_text(self.event)})",
                 f"  verdict: {self.verdict} (p-value of the claim {self.pvalue:.3g})",
                 f"  {self.trials:,} reports ({self.select_trials:,} per input to choose events, "
                 f"{self.fresh_trials:,} per input to bound them); events from {self.events_from}"]
        if not self.invertible_ok:
            y, who = self.invertible_breaches[0]
            if self.events_from == "outputs":
                lines.append(f"  invertibility breached: output {y} seen from inputs {who} "
                             f"({len(self.invertible_breaches)} outputs)")
            else:
                named = f"naming input {y}" if y >= 0 else "(input not named)"
                lines.append(f"  invertibility breached: an invertible report {named} seen from input {who[0]} "
                             f"({len(self.invertible_breaches)} breaches)")
        if self.delta > 0 or len(self.eps_delta) > 1:
            lines.append("  (delta, eps): " + ", ".join(f"({dl:g}, {_fmt(e)})" for dl, e in self.eps_delta))
        lines.append(self.table())
        return "\n".join(lines)

    __str__ = __repr__

    def plot(self, ax: Any = None) -> Any:
        """Plots the overall bound against the number of reports drawn, with the claimed eps (needs matplotlib).

        Returns:
          The matplotlib ``Axes``.
        """
        import matplotlib.pyplot as plt  # the [plot] extra; imported on use

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.2))
        n, eps = self.curve
        ax.plot(n, np.maximum(eps, 0.0), marker="o", label=f"lower bound (confidence {self.confidence:g})")
        ax.axhline(self.claimed, color="k", linestyle="--", label=f"claimed eps = {self.claimed:.3g}")
        ax.set_xscale("log")
        ax.set_xlabel("reports drawn")
        ax.set_ylabel("empirical eps")
        ax.set_title(f"{self.sampler}: {self.verdict}", fontsize=9)
        ax.legend(fontsize=8)
        return ax


def _fmt(v: float) -> str:
    return "inf" if v == np.inf else ("none" if not np.isfinite(v) else f"{v:.4g}")


def _event_text(event: Any) -> str:
    if isinstance(event, str):
        return event
    cells = tuple(event)
    if len(cells) > 6:
        return f"{{{', '.join(map(str, cells[:6]))}, ... ({len(cells)} outputs)}}"
    return "{" + ", ".join(map(str, cells)) + "}"
