"""The ``leak`` row of ``ul.check``: a black-box lower bound on the eps the sampler really spends
(``ul.audit_sampler``: distinguishing events chosen on one sample, Clopper-Pearson bounds on a fresh one), against
the claimed eps. It sees what the chi-square test cannot: a leak into outputs the channel calls rare (pooled
away by the chi-square test), or a small excess spread over every input, and it gives the number."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

from uldp_jax.checks._report import CheckRow, skip


class Bound(NamedTuple):
    """A black-box bound: ``eps_lower`` at confidence ``1 - alpha`` against ``claimed``; ``ok`` is False where the
    bound exceeds the claim; ``describe`` says how it was measured."""

    eps_lower: float
    claimed: float
    ok: bool
    describe: str


def eps_bound(key: jax.Array, mech: Any, trials: int, alpha: float) -> Bound | CheckRow:
    """``ul.audit_sampler`` on ``mech`` with ``trials`` reports per input at confidence ``1 - alpha`` (or a skip
    row naming why it could not run)."""
    return skip("leak", "ul.audit_sampler is not available on this branch yet")


def check_leak(bound: Bound | CheckRow) -> CheckRow:
    """The ``leak`` row from ``eps_bound``'s result."""
    if isinstance(bound, CheckRow):
        return bound
    status = "pass" if bound.ok else "FAIL"
    verdict = "within" if bound.ok else "above"
    return CheckRow("leak", status, f"black-box eps >= {bound.eps_lower:.4g}, {verdict} the claimed "
                    f"{bound.claimed:.4g} ({bound.describe})")
