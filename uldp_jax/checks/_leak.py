"""The ``leak`` row of ``ul.check``: a black-box lower bound on the eps the sampler really spends, against the
claim. It sees what the chi-square test cannot: a leak into outputs the channel calls rare (pooled away by the
chi-square test), or a small excess spread over every input (too little per input for the chi-square test's
power), and it gives the number.

The method is ``ul.audit_sampler``'s (``privacy._empirical_eps``: for every ordered pair of inputs the claim
constrains, the likelihood-ratio-ordered event of protected outputs chosen on a selection sample, its
Clopper-Pearson bound on a fresh one; the reported pair is the one chosen on the selection sample, so the bound
holds at ``1 - alpha`` without a union over pairs). ``ul.check`` runs it on its own reports rather than through
``ul.audit_sampler``: the selection sample is the sampler row's (already drawn), the events are sets of channel
columns for every report kind (``likelihood().index``: hashed and custom reports included, where
``ul.audit_sampler`` falls back to support cells), and the fresh reports come from the sampler row's compiled
``perturb_batch`` on the same inputs, so nothing new is compiled.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.checks import _sample
from uldp_jax.checks._report import CheckRow, skip
from uldp_jax.mechanisms.core import _records
from uldp_jax.privacy import _empirical_eps as emp

PAIR_CELLS = 1 << 22  # pairs x columns ranked at once when choosing events


class Bound(NamedTuple):
    """A black-box bound: ``eps_lower`` at confidence ``1 - alpha`` against ``claimed``; ``ok`` is False where the
    bound exceeds the claim (or an invertible output was reached by a wrong input); ``describe`` says how."""

    eps_lower: float
    claimed: float
    ok: bool
    describe: str


def column_counts(xs: np.ndarray, cols: np.ndarray, d: int, m: int) -> np.ndarray:
    """``int64[d, m]``: reports of each input in each channel column."""
    return np.bincount(xs.astype(np.int64) * m + cols, minlength=d * m).reshape(d, m)


def fresh_counts(key: jax.Array, mech: Any, xs: np.ndarray, m: int, trials: int) -> tuple[np.ndarray, int]:
    """``(int64[d, m], reports per input)``: column counts of at least ``trials`` fresh reports of each input, in
    batches of the inputs ``xs`` (the sampler row's: one shape, so nothing new is compiled; batch ``c`` keyed
    ``fold_in(key, c)``)."""
    index = _records.likelihood_of(mech).index
    d = int(xs.max()) + 1
    per_batch = xs.shape[0] // d
    counts = np.zeros((d, m), np.int64)
    batches = -(-trials // per_batch)
    for c in range(batches):  # a few batches of users, never a loop over users
        cols = np.asarray(index(_sample.perturb(mech, jax.random.fold_in(key, c), jnp.asarray(xs))), np.int64)
        if cols.shape != xs.shape or cols.min() < 0 or cols.max() >= m:
            raise ValueError(f"fresh reports outside the channel's {m} columns")
        counts += column_counts(xs, cols, d, m)
    return counts, batches * per_batch


def _choose(sel: np.ndarray, n_sel: int, E: np.ndarray, allowed: np.ndarray, alpha: float):
    """``(x, x', event mask bool[m])``: the pair whose selection score most exceeds its claim, and its event."""
    d, m = sel.shape
    xi, xj = np.nonzero(~np.eye(d, dtype=bool) & np.isfinite(E))
    step = max(1, PAIR_CELLS // m)
    best = (-np.inf, 0, 0, None)
    for s in range(0, xi.size, step):  # pairs in chunks: d (d - 1) x m cells may not fit at once
        pi, pj = xi[s:s + step], xj[s:s + step]
        ev = emp.select_events(sel[pi], n_sel, sel[pj], n_sel, allowed, alpha)
        k = int(np.argmax(ev.score - E[pi, pj]))
        if ev.score[k] - E[pi[k], pj[k]] > best[0]:
            best = (ev.score[k] - E[pi[k], pj[k]], int(pi[k]), int(pj[k]), ev.mask[k])
    return best[1:]


def eps_bound(key: jax.Array, mech: Any, xs: np.ndarray, cols: np.ndarray, m: int, protected: np.ndarray,
              trials: int, alpha: float) -> Bound | CheckRow:
    """The black-box bound at confidence ``1 - alpha``: events chosen on the sampler row's reports (inputs ``xs``,
    channel columns ``cols``), bounded on at least ``trials`` fresh reports per input (or a skip row naming why it
    could not run)."""
    d = int(xs.max()) + 1
    sel, n_sel = column_counts(xs, cols, d, m), xs.shape[0] // d
    spec = mech.privacy_spec()
    E = np.asarray(spec.E, np.float64)
    ldp_like = spec.invertible_inputs is None
    allowed = np.ones(m, bool) if ldp_like else np.asarray(protected, bool)
    if not np.any(np.isfinite(E) & ~np.eye(d, dtype=bool)):
        return skip("leak", "the claim constrains no pair of inputs")
    x, x2, mask = _choose(sel, n_sel, E, allowed, alpha)
    try:
        fresh, trials = fresh_counts(key, mech, xs, m, trials)
    except (TypeError, ValueError, NotImplementedError) as err:
        return skip("leak", err)
    bound = float(emp.bound(fresh[x, mask].sum(), trials, fresh[x2, mask].sum(), trials, alpha))
    eps_lower, claimed = max(bound, 0.0), float(E[x, x2])
    breaches = [] if ldp_like else emp.invertible_violations(sel + fresh, np.arange(d), allowed,
                                                             np.asarray(spec.invertible_inputs, bool))
    event = np.flatnonzero(mask)
    event_text = f"{event.size} columns" if event.size > 4 else f"columns {event.tolist()}"
    describe = (f"inputs {x}, {x2}, event {event_text}; {trials} fresh reports per input, events chosen on "
                f"{n_sel}; confidence {1.0 - alpha:.6g}")
    if breaches:
        describe += f"; invertible outputs reached by the wrong inputs (output, inputs): {breaches[:3]}"
    return Bound(eps_lower, claimed, eps_lower <= claimed and not breaches, describe)


def check_leak(bound: Bound | CheckRow) -> CheckRow:
    """The ``leak`` row from ``eps_bound``'s result."""
    if isinstance(bound, CheckRow):
        return bound
    status = "pass" if bound.ok else "FAIL"
    verdict = "within" if bound.eps_lower <= bound.claimed else "above"
    return CheckRow("leak", status, f"black-box eps >= {bound.eps_lower:.4g}, {verdict} the claimed "
                    f"{bound.claimed:.4g} ({bound.describe})")
