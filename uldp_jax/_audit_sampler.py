"""``ul.audit_sampler``: a black-box lower bound on the privacy loss any sampler spends, from its reports alone.

``ul.audit`` reads a mechanism's exact channel and so trusts that ``perturb_batch`` draws from it; this audit trusts
nothing but the reports. It draws reports of every tested input, chooses for every pair of inputs the event that
best separates them on one sample and bounds ``log P(S|x) / P(S|x')`` on a fresh one with Clopper-Pearson intervals
(``privacy._empirical_eps``), the method of LDP-Auditor (Arcolezi and Gambs, PETS 2024) with chosen instead of fixed
events. It accepts a library or user mechanism, a JAX function ``(key, xs) -> reports`` (drawn in batches on the
device, like a mechanism) or a plain Python callable ``x -> report`` (another library's client, called in a loop).
Under a ULDP claim only protected reports make events (a mechanism's ``revealed_inputs``, or ``protected=``) and
every invertible report seen is checked to come from the one non-sensitive input it reveals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from uldp_jax import _audit_draws as draws
from uldp_jax import _audit_forms as forms
from uldp_jax import _audit_host as host_reports
from uldp_jax import _progress, _validate
from uldp_jax.mechanisms.core import counts_of, grid_shape, num_stats, validate_grid
from uldp_jax.privacy import _empirical_eps as emp
from uldp_jax.privacy._sampler_report import SamplerAudit

DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)  # the deltas of SamplerAudit.eps_delta (plus the claim's)
_CELL_TEXT = {3: "supports x and x'", 2: "supports x, not x'", 1: "supports x', not x", 0: "supports neither",
              4: "an invertible report"}


def _pair_cells(counts: draws.Counts, mode: str, pi: np.ndarray, pj: np.ndarray, xi: np.ndarray,
                xj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b) int64[P, cells]``: each pair's counts under ``x`` and ``x'`` on the same cells."""
    if mode == "outputs":
        return counts.table[pi], counts.table[pj]
    S1, S0, N1, P, _ = counts.table
    n = counts.n
    # cell 2 s_x + s_x' among protected reports (P of n); cell 4: the invertible ones. Under x from row i with
    # probe x'; under x' from row j with probe x (s_x', s_x swapped)
    a = np.stack([P[pi] - N1[pi] - S0[pi, xj], S0[pi, xj], N1[pi] - S1[pi, xj], S1[pi, xj], n - P[pi]], axis=1)
    b = np.stack([P[pj] - N1[pj] - S0[pj, xi], N1[pj] - S1[pj, xi], S0[pj, xi], S1[pj, xi], n - P[pj]], axis=1)
    return a, b


def _draw(kind: str, sampler: Any, mode: str, m: int, width: int, key: jax.Array, inputs: np.ndarray, trials: int,
          host: host_reports.HostReports | None, path: str = "reports", predicate: Any = None, d: int = 0):
    if kind == "python":
        return host_reports.host_draws(host, inputs, trials)
    if path == "counts":
        return draws.count_sampler_draws(sampler, key, inputs, trials)
    if kind == "mechanism":
        if mode == "outputs":
            return draws.device_draws(sampler, draws.mechanism_cells, None, mode, m, width, key, inputs, trials)
        return draws.device_draws(sampler, draws.mechanism_support, predicate, mode, m, width, key, inputs, trials, d)
    if mode == "outputs":
        return draws.device_draws(None, draws.function_cells, sampler, mode, m, width, key, inputs, trials)
    return draws.device_draws(None, draws.function_support, (sampler, predicate), mode, m, width, key, inputs,
                              trials, d)


def audit_sampler(key: jax.Array, sampler: Any, *, spec: Any = None, d: int | None = None, trials: int = 1_000_000,
                  confidence: float = 0.99, delta: float = 0.0, inputs: Any = None, num_outputs: int | None = None,
                  protected: Any = None, support: Callable | None = None, vectorized: bool = False,
                  events: str = "auto", select_fraction: float = 0.2, path: str = "reports",
                  progress: Any = "auto", name: str | None = None) -> SamplerAudit:
    r"""Empirical lower bound on the privacy loss a sampler spends, with its confidence, pair and event.

    For every ordered pair ``(x, x')`` of tested inputs that the claim constrains, an event ``S`` (a set of
    protected outputs, or a cell of the reports' support of ``x`` and ``x'``) is chosen on a selection sample and
    :math:`\log((\underline P(S|x) - \delta) / \overline P(S|x'))` is bounded on a fresh sample (Clopper-Pearson,
    each side at ``(1 - confidence) / 2``). The overall bound is that of the pair chosen on the selection sample,
    so it too holds at ``confidence``: a correct sampler gets ``ok=False`` with probability at most
    ``1 - confidence``.

    Args:
      key: PRNG key (consumed by mechanisms and JAX functions; a Python callable draws with its own generator).
      sampler: a ``ul.Mechanism`` (its claim: ``privacy_spec()``), a JAX function ``(key, xs int32[n]) -> reports``
        (``int[n]`` items or ``[n, D]`` bits) or a Python callable ``x -> report`` (an int, a 0/1 sequence, or any
        hashable report; ``vectorized=True``: ``xs int[n] -> reports``).
      spec: the claim: a ``ul.PrivacySpec`` (LDP, ULDP, E-LDP) or the claimed eps (LDP); default the mechanism's.
      d: number of inputs (required unless ``sampler`` is a mechanism).
      trials: reports drawn in all (both samples, all tested inputs).
      confidence: level of every bound, in (0, 1).
      delta: the claim's delta (approximate LDP); bounds are taken at it.
      inputs: the inputs to test (default: all when ``d <= 64``, else ``(0, d - 1)``).
      num_outputs: item reports lie in ``[0, num_outputs)`` (default ``d``; a Python callable's: as seen).
      protected: the protected outputs of a ULDP claim: ``bool[num_outputs]`` (enumerable reports), or a callable
        ``reports -> bool[n]`` (True: protected) or ``-> int[n]`` (``-1``: protected, else the input an invertible
        report reveals), which support events need for a JAX function or Python callable. Default for a
        mechanism: its channel mask (outputs events) or ``revealed_inputs`` (support events).
      support: for a Python callable with a large report space: ``reports (a list) -> bool[n, D]``, the items each
        report supports (e.g. ``H_seed(j) == v`` for hashed reports); events are then cells of that support.
      vectorized: the Python callable takes an array of inputs.
      events: ``"auto"``, ``"outputs"`` (sets of report columns) or ``"support"`` (support cells). ``"auto"``:
        outputs for items and for bit vectors of at most 8 bits (16 under a ULDP claim), support cells otherwise
        (under a ULDP claim: cells of the protected reports; the invertible ones are checked to name their input).
      select_fraction: share of each input's reports used to choose the events.
      path: ``"reports"`` (``perturb_batch``, one report a trial) or, for a mechanism with item reports and an exact
        count sampler (``counts().fixed``: GRR, uRR, the Hadamard family), ``"counts"``: the histograms that sampler
        draws (the one ``ul.simulate``'s counts path uses), O(d) work per batch instead of O(n).
      progress: ``"auto"``, True, False or ``"stderr"`` (as ``ul.simulate``).
      name: how the report names the sampler.

    Returns:
      A ``SamplerAudit`` (``eps_lower``, ``claimed``, ``ok``, per-pair bounds; prints as a table; ``.plot()``).

    Raises:
      TypeError: a sampler of none of the three forms, no key, or no spec/d for a non-mechanism.
      ValueError: bad trials, confidence, delta, inputs, events, a grid of mechanisms, reports outside the
        report space, or a ULDP claim on a user's sampler without ``protected=`` (or with a column mask where
        support events need a callable).
    """
    key = _validate.check_key(key)
    trials = _validate.check_int("trials", trials, minimum=100)
    _validate.as_param("confidence", confidence, lower=0.0, upper=1.0)
    _validate.as_param("delta", delta, lower=0.0, upper=1.0, lower_open=False)
    _validate.as_param("select_fraction", select_fraction, lower=0.0, upper=1.0)
    if events not in ("auto", "outputs", "support"):
        raise ValueError(f"Expected events={events!r} to be 'auto', 'outputs' or 'support'.")
    progress = _progress.check(progress)
    if path not in ("reports", "counts"):
        raise ValueError(f"Expected path={path!r} to be 'reports' or 'counts'.")
    alpha, delta = 1.0 - float(confidence), float(delta)
    kind = forms.sampler_kind(sampler)
    host = None
    if kind == "mechanism":
        validate_grid(sampler)
        if grid_shape(sampler):
            raise ValueError("Expected one mechanism, got a grid; audit each point, e.g. "
                             "jax.tree.map(lambda v: v[i], mech).")
        d = int(sampler.d)
        rows = int(np.shape(sampler.privacy_spec().E)[0])
        if spec is None and rows != d:  # e.g. a PUM: its guarantee is over Z (items and bots), its input is (x, tags)
            raise ValueError(f"{type(sampler).__name__}'s guarantee covers {rows} inputs, not its d={d} items, so its "
                             "perturb_batch(key, xs) is not what the guarantee describes: audit the mechanism that "
                             "samples those inputs (for a PUM: mech.cmn over Z, or one user's mechanism).")
        spec = forms.resolve_spec(sampler.privacy_spec() if spec is None else spec, d, type(sampler).__name__)
        mode, m, width = forms.mechanism_form(sampler, events)
        if path == "counts" and not (mode == "outputs" and sampler.report_kind == "item"
                                     and counts_of(sampler) is not None
                                     and counts_of(sampler).fixed is not None
                                     and int(num_stats(sampler)) == m):
            raise ValueError(f"path='counts': {type(sampler).__name__} has no exact count sampler of its report "
                             "histogram (counts().fixed over item reports); use path='reports'.")
    elif path == "counts":
        raise ValueError("path='counts' needs a ul.Mechanism with an exact count sampler.")
    else:
        label = getattr(sampler, "__name__", type(sampler).__name__)
        d = _validate.check_int("d", d, minimum=2) if d is not None else None
        spec = forms.resolve_spec(spec, d, label)
        d = int(np.shape(spec.E)[0])
        if kind == "jax":
            mode, m, width = forms.function_form(sampler, d, num_outputs, events)
        else:
            uldp = spec.invertible_inputs is not None
            if protected is not None and not callable(protected) and (support is not None or events == "support"):
                forms.support_predicate(spec, kind, protected)  # a column mask with support events: refused
            host = host_reports.HostReports(sampler, bool(vectorized), support, num_outputs, events,
                                     protected if callable(protected) else None, uldp, d)
            mode, m, width = "?", num_outputs or 0, 1
    name = name or (repr(sampler) if kind == "mechanism" else getattr(sampler, "__name__", type(sampler).__name__))
    tested = forms.tested_inputs(inputs, d)
    I = len(tested)
    per_input = trials // I
    n_sel = int(min(per_input - 1, max(1, round(select_fraction * per_input))))
    n_fresh = per_input - n_sel
    if n_sel < 1 or n_fresh < 1:
        raise ValueError(f"Expected trials={trials} to leave reports of each of the {I} inputs for both samples.")

    predicate = forms.support_predicate(spec, kind, protected) if mode == "support" and kind != "python" else None
    bar = _progress.make_progress(progress, I * per_input, desc="audit_sampler")
    k_sel, k_fresh = jax.random.fold_in(key, 0), jax.random.fold_in(key, 1)
    sel = None
    for c in _draw(kind, sampler, mode, m, width, k_sel, tested, n_sel, host, path, predicate, d):
        sel = draws.add(sel, c)
        bar.update(I * c.n)
    if kind == "python":
        mode = host.mode
    fresh_chunks = _draw(kind, sampler, mode, m, width, k_fresh, tested, n_fresh, host, path, predicate, d)

    E = np.asarray(spec.E, np.float64)
    pi, pj = np.nonzero(~np.eye(I, dtype=bool) & np.isfinite(E[np.ix_(tested, tested)]))
    xi, xj = tested[pi], tested[pj]
    claimed = E[xi, xj]
    a, b = _pair_cells(sel, mode, pi, pj, xi, xj)
    allowed = np.ones(a.shape[1], bool)
    if mode == "outputs":
        mask = forms.protected_mask(spec, sampler, kind, protected, a.shape[1] if kind == "python" else m, host)
        allowed = allowed if mask is None else mask
    else:
        allowed[4] = False  # the invertible reports' cell (empty without a ULDP claim)
    chosen = emp.select_events(a, sel.n, b, sel.n, allowed if mode == "support" else _pad(allowed, a.shape[1]),
                               alpha, delta)
    best = int(np.argmax(chosen.score - claimed))

    fresh, curve = None, []  # curve: (reports drawn, A, B, n) of the overall event after each chunk
    for c in fresh_chunks:
        fresh = draws.add(fresh, c)
        bar.update(I * c.n)
        fa, fb = _pair_cells(fresh, mode, pi[best:best + 1], pj[best:best + 1], xi[best:best + 1], xj[best:best + 1])
        w = max(fa.shape[1], chosen.mask.shape[1])
        ev = _widen(chosen.mask[best:best + 1], w)[0]
        curve.append((I * (sel.n + fresh.n), _widen(fa, w)[0][ev].sum(), _widen(fb, w)[0][ev].sum(), fresh.n))
    bar.close()

    a2, b2 = _pair_cells(fresh, mode, pi, pj, xi, xj)
    width_all = max(a2.shape[1], chosen.mask.shape[1])
    mask_all = _widen(chosen.mask, width_all)
    events_all = emp.Events(mask_all, chosen.score)
    a2, b2 = _widen(a2, width_all), _widen(b2, width_all)
    pair_eps = emp.event_bounds(events_all, a2, fresh.n, b2, fresh.n, alpha, delta)
    A = float(a2[best][mask_all[best]].sum())
    B = float(b2[best][mask_all[best]].sum())
    deltas = np.array(sorted(set(DELTAS) | {delta}))
    eps_delta = tuple(zip(deltas.tolist(), emp.bound(A, fresh.n, B, fresh.n, alpha, deltas).tolist()))
    eps_lower = max(float(pair_eps[best]), 0.0)
    pvalue = emp.claim_pvalue(A, fresh.n, B, fresh.n, float(claimed[best]), delta)

    breaches: list = []
    if spec.invertible_inputs is not None:
        total = draws.add(sel, fresh).table
        inv_inputs = np.asarray(spec.invertible_inputs, bool)
        if mode == "outputs":
            breaches = emp.invertible_violations(total, tested, _pad(allowed, total.shape[1]), inv_inputs)
        else:
            breaches = emp.revealed_violations(total[4], tested, inv_inputs)
    if mode == "outputs":
        event = tuple(int(y) for y in np.flatnonzero(mask_all[best]))
    else:
        event = " or ".join(_CELL_TEXT[c] for c in np.flatnonzero(mask_all[best])[::-1])
    return SamplerAudit(
        eps_lower=eps_lower, claimed=float(claimed[best]), ok=bool(eps_lower <= claimed[best] and not breaches),
        confidence=float(confidence), pvalue=pvalue, delta=delta, pair=(int(xi[best]), int(xj[best])), event=event,
        pairs=np.stack([xi, xj], axis=1), pair_eps=np.maximum(pair_eps, 0.0), pair_claimed=claimed,
        eps_delta=eps_delta, invertible_ok=not breaches, invertible_breaches=tuple(breaches),
        event_counts=(int(A), int(B), int(fresh.n)),
        trials=I * per_input, select_trials=n_sel, fresh_trials=n_fresh,
        curve=_curve(curve, alpha, delta), events_from=mode,
        kind=spec.kind, sampler=name)


def _curve(points: list, alpha: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """The overall event's bound after each fresh chunk, in one vectorised Clopper-Pearson call."""
    drawn, A, B, n = (np.asarray(v, np.float64) for v in zip(*points))
    return drawn, np.asarray(emp.bound(A, n, B, n, alpha, delta), np.float64)


def _widen(t: np.ndarray, m: int) -> np.ndarray:
    """Pads ``[P, m0]`` with zero columns to ``[P, m]`` (a Python callable's report space grows as it reports)."""
    return t if t.shape[1] >= m else np.pad(t, ((0, 0), (0, m - t.shape[1])))


def _pad(mask: np.ndarray, m: int) -> np.ndarray:
    """A protected mask over ``m`` columns (outputs first seen later are unprotected only if the mask says so)."""
    return mask if mask.shape[0] >= m else np.pad(mask, (0, m - mask.shape[0]), constant_values=True)
