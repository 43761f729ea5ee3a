"""Privacy audits from exact channels: LDP, ULDP (001 Def 2), HLLDP, BSLDP and E-LDP (004 Defs 2-4).

Audits read exact float64 channel matrices; they never look at a sampler. Tolerance: a constraint
``log Q(y|x) - log Q(y|x') <= E[x, x']`` is accepted when it holds up to ``tol * max(1, E[x, x'])`` with
``tol = 1e-9`` by default (float64 channels are accurate to ~1e-15 relative); ``tol`` may be tightened but
never loosened beyond ``MAX_TOL = 1e-6``.

The audit checks what it is given before judging it: the channel must be a probability matrix (see
``ul.privacy.channel``: shape, finite non-negative entries, rows summing to 1 within 1e-9), with a bool
protected mask over its outputs; the mechanism's claimed guarantee must be well formed (an ``[d, d]`` E matrix
matching the channel's rows, a finite positive eps). A guarantee without invertible outputs (LDP, HLLDP,
BSLDP: ``invertible_inputs=None``) is checked on every output, whatever the channel's mask says. Anything else is refused with a
``ValueError`` naming the defect; no argument turns a malformed channel into a pass.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from uldp_jax.mechanisms.core import _base, _grid_check, _records, _reports, _spec
from uldp_jax.privacy import _channel

# Largest accepted ``tol``: beyond it a channel 1e-6 over its bound would pass as private.
MAX_TOL = 1e-6
_KINDS = ("ldp", "uldp", "hlldp", "bsldp", "eldp")


class AuditReport(NamedTuple):
    """Result of ``audit``.

    Attributes:
      eps: worst log-ratio ``log Q(y|x)/Q(y|x')`` over protected outputs ``y`` and the input pairs the
        guarantee constrains (finite ``E[x, x']``): the mechanism's actual epsilon.
      ok: the mechanism meets the guarantee (every pair constraint, plus invertibility for ULDP).
      kind: the guarantee checked (``ldp``, ``uldp``, ``hlldp``, ``bsldp``, ``eldp``).
      nominal_eps: the epsilon the mechanism claims.
      tight: some constrained pair attains its bound ``E[x, x']`` within tolerance (for LDP and ULDP:
        ``eps == nominal_eps``).
      eps_ldp: worst log-ratio over all outputs and all input pairs (``inf`` when some output separates
        inputs; equals ``eps`` for LDP mechanisms).
      invertible_ok: every non-protected output with positive mass is reached by exactly one input, which is
        non-sensitive (001 Def 2 (1)); True when there are no such outputs.
      num_protected, num_invertible, num_null: output counts (null: probability 0 under every input).
      worst_pair: ``(x, x')`` attaining ``eps``.
      excess: largest ``log-ratio - E[x, x']`` over constrained pairs (<= 0 when private).
      tol: tolerance used.
      source: ``"channel"`` (the exact finite channel) or ``"density"``: real-valued reports (SHE), whose
        log-ratios are the exact suprema of the report density's ratio (``likelihood().density``); no finite
        channel is formed, so the output counts are 0.
    """

    eps: float
    ok: bool
    kind: str
    nominal_eps: float
    tight: bool
    eps_ldp: float
    invertible_ok: bool
    num_protected: int
    num_invertible: int
    num_null: int
    worst_pair: tuple[int, int]
    excess: float
    tol: float
    source: str = "channel"


def pairwise_log_ratios(Q: np.ndarray, columns: np.ndarray | None = None, log: bool = False) -> np.ndarray:
    """``L[x, x'] = max_y log Q(y|x) - log Q(y|x')`` over ``columns`` (0/0 ignored, c/0 = inf); ``log=True``
    when ``Q`` already holds ``log Q`` (ratios of entries below float64's range stay exact)."""
    if columns is not None:
        Q = Q[:, columns]
    d, m = Q.shape
    L = np.full((d, d), -np.inf)
    if m == 0:
        return L
    if log:
        logq = Q
    else:
        with np.errstate(divide="ignore"):
            logq = np.log(Q)
    with np.errstate(invalid="ignore"):
        for x in range(d):
            L[x] = _row_max(logq, x)
    np.fill_diagonal(L, 0.0)
    return L


def _row_max(logq: np.ndarray, x: int) -> np.ndarray:
    """``max_y log Q(y|x) - log Q(y|x')`` for every ``x'``."""
    diff = logq[x][None, :] - logq  # [d, m]
    diff = np.where(np.isneginf(logq[x])[None, :], -np.inf, diff)  # Q(y|x) = 0: no constraint.
    return np.where(np.isnan(diff), -np.inf, diff).max(axis=1)


def check_privacy_matrix(E: Any, d: int, name: str = "E") -> np.ndarray:
    """Validates an E matrix: float ``[d, d]``, non-negative, no NaN (``inf`` allowed), constraining some pair."""
    raw = np.asarray(E) if not isinstance(E, (str, bytes)) else None
    if raw is None or raw.dtype.kind not in "biuf":  # complex, str, object: np.float64 would drop or reject parts
        raise TypeError(f"Expected {name} to be a real float [{d}, {d}] matrix, got "
                        f"{type(E).__name__ if raw is None else f'dtype {raw.dtype}'}.")
    try:
        E = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Expected {name} to be a float [{d}, {d}] matrix.") from e
    if E.shape != (d, d):
        raise ValueError(f"Expected {name} to have shape ({d}, {d}), got {E.shape}.")
    if np.any(np.isnan(E)) or np.any(E < 0):
        raise ValueError(f"Expected {name} to have non-negative entries and no NaN.")
    if not np.any(np.isfinite(E) & ~np.eye(d, dtype=bool)):
        raise ValueError(f"Expected {name} to constrain some pair x != x' (a finite off-diagonal entry); "
                         "an all-inf E promises nothing to audit.")
    return E


def check_spec(spec: Any, d: int, protected: np.ndarray, name: str) -> None:
    """Checks a mechanism's claimed guarantee against its channel (``d`` rows, ``protected`` mask)."""
    if not isinstance(spec, _spec.PrivacySpec):
        raise ValueError(f"{name}.privacy_spec() returned {type(spec).__name__}, expected a PrivacySpec.")
    if spec.kind not in _KINDS:
        raise ValueError(f"{name}.privacy_spec() has kind={spec.kind!r}, expected one of {_KINDS}.")
    check_privacy_matrix(spec.E, d, name=f"{name}.privacy_spec().E")
    if not (isinstance(spec.eps, (float, int, np.floating, np.integer)) and np.isfinite(spec.eps)
            and spec.eps > 0):
        raise ValueError(f"{name}.privacy_spec() has eps={spec.eps!r}, expected a finite float > 0.")
    if spec.invertible_inputs is not None:
        inv = np.asarray(spec.invertible_inputs)
        if inv.dtype != np.bool_ or inv.shape != (d,):
            raise ValueError(f"{name}.privacy_spec().invertible_inputs must be bool [{d}], got "
                             f"{inv.dtype} {inv.shape}.")
    check_spec_consistent(spec, d, name)


def check_spec_consistent(spec: _spec.PrivacySpec, d: int, name: str) -> None:
    """The claim must mean what its kind says, so that the verdict holds against the nominal eps.

    Every kind: ``eps`` lies within the finite off-diagonal entries of ``E`` (E-LDP kinds name the largest or,
    as ``BinaryCA``, the smallest). LDP and ULDP (001 Def 2): ``E`` is ``eps`` on every pair; LDP has no
    invertible inputs; ULDP names its invertible inputs (``X_N``) and keeps at least one input sensitive.
    """
    E = np.asarray(spec.E, dtype=np.float64)
    off = E[~np.eye(d, dtype=bool)]
    finite = off[np.isfinite(off)]
    lo, hi, eps = float(finite.min()), float(finite.max()), float(spec.eps)
    if eps < lo * (1 - 1e-12) or eps > hi * (1 + 1e-12):
        raise ValueError(f"{name}.privacy_spec() claims eps={eps!r} outside the range [{lo!r}, {hi!r}] of its E's "
                         "finite off-diagonal entries; the nominal eps must be one of E's bounds.")
    if spec.kind in ("ldp", "uldp") and not np.allclose(off, float(spec.eps), rtol=1e-12, atol=0.0):
        raise ValueError(f"{name}.privacy_spec() has kind={spec.kind!r} but E is not eps={float(spec.eps)!r} on "
                         "every pair x != x'; use PrivacySpec.eldp(E) for an E-LDP claim.")
    if spec.kind == "ldp" and spec.invertible_inputs is not None:
        raise ValueError(f"{name}.privacy_spec() has kind='ldp' with invertible inputs; an LDP claim protects "
                         "every output (use PrivacySpec.uldp for invertible outputs).")
    if spec.kind == "uldp":
        if spec.invertible_inputs is None:
            raise ValueError(f"{name}.privacy_spec() has kind='uldp' without invertible_inputs (X_N); build it "
                             "with PrivacySpec.uldp(d, sensitive, eps).")
        if np.all(np.asarray(spec.invertible_inputs)):
            raise ValueError(f"{name}.privacy_spec() has kind='uldp' with no sensitive input; such a claim "
                             "promises nothing (001 Def 2 needs a non-empty X_S).")


def log_channel(mech: Any, ch: _channel.Channel) -> np.ndarray:
    """``log Q``: the mechanism's own log-space channel when it has one (checked against ``ch``), else
    ``log(ch.Q)``. Bit-product channels underflow float64 at large ``d * eps``; their log form does not."""
    got = _channel.log_channel_matrix(mech)
    if got is None:
        with np.errstate(divide="ignore"):
            return np.log(ch.Q)
    name = type(mech).__name__
    logq, protected = got
    if logq.shape != ch.Q.shape or not np.array_equal(np.asarray(protected), ch.protected):
        raise ValueError(f"{name}.likelihood().log_channel returned shape {logq.shape} or a protected mask that "
                         f"differs from channel_matrix ({ch.Q.shape}).")
    if np.any(np.isnan(logq)) or np.any(logq > 1e-12):
        raise ValueError(f"{name}.likelihood().log_channel returned NaN or a log-probability above 0.")
    check_log_consistent(logq, ch.Q, name)
    return logq


def check_log_consistent(logq: np.ndarray, Q: np.ndarray, name: str) -> None:
    """``log Q`` must agree with ``Q`` wherever float64 can tell: in log space (relative 1e-9) on normal
    entries, to one subnormal step (1e-323) on subnormal and zero entries. So a ratio hidden in tiny entries
    (an ``atol`` of 1e-300 let ``e^9`` through) is refused; below float64's range the log form is the only
    record of the channel and is trusted (the UE family and GLUTF compute it in closed form)."""
    normal = Q >= np.finfo(np.float64).tiny
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(logq - np.log(np.where(normal, Q, 1.0)))
    bad_log = normal & ~(err <= 1e-9 * np.maximum(1.0, np.abs(np.log(np.where(normal, Q, 1.0)))))
    bad_tiny = ~normal & ~(np.abs(np.exp(logq) - Q) <= 1e-323)
    if np.any(bad_log) or np.any(bad_tiny):
        x, y = np.argwhere(bad_log | bad_tiny)[0]
        raise ValueError(f"{name}.likelihood().log_channel disagrees with channel_matrix at [{x}, {y}]: "
                         f"log Q = {logq[x, y]!r}, Q = {Q[x, y]!r} (exp(log Q) != Q).")


# Largest audit work, d * d * m log-ratio evaluations (GRR(2048): 2^33, minutes; GRR(4096) is refused).
MAX_AUDIT_WORK = 2**33


def check_audit_work(mech: Any) -> None:
    """Refuses, before the channel is built, an audit of more than ``MAX_AUDIT_WORK`` log-ratios (O(d^2 m))."""
    if not isinstance(mech, _base.Mechanism):
        return
    cols = _channel.expected_columns(mech)
    if cols is None:
        return
    _channel.check_size(mech)  # the channel's own size guard speaks first
    d = _channel.num_inputs(mech)
    if d * d * cols > MAX_AUDIT_WORK:
        raise ValueError(f"audit of {type(mech).__name__}: {d} x {d} x {_reports.size_text(cols)} log-ratios, more "
                         f"than {MAX_AUDIT_WORK} (2^33); audit the mechanism at a smaller domain (its guarantee's "
                         "form does not depend on d) or rely on its privacy_spec().")


def check_tol(tol: Any) -> float:
    """``tol`` must be a real number in ``(0, MAX_TOL]``: a tolerance may tighten the audit, never void it."""
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)):
        raise TypeError(f"Expected tol={tol!r} to be a real number.")
    if not (0 < tol <= MAX_TOL):
        raise ValueError(f"Expected tol={tol!r} in (0, {MAX_TOL:g}].")
    return float(tol)


def audit(mech: _base.Mechanism, E: Any = None, tol: float = 1e-9) -> AuditReport:
    """Audits ``mech`` against the guarantee it claims, or against a given E matrix (E-LDP, 004 Def 2).

    Args:
      mech: a mechanism with an exact channel.
      E: optional float ``[d, d]`` privacy matrix; when given, every output is treated as protected and
        the verdict is E-LDP.
      tol: relative tolerance on each log-ratio constraint, in ``(0, MAX_TOL]``.

    Returns:
      An ``AuditReport``. For a ``jax.vmap``-built grid of mechanisms (``grid_shape(mech)`` non-empty) every
      grid point is audited on its own and each field becomes a NumPy array with the grid's shape leading
      (``worst_pair``: ``[*shape, 2]``), e.g. ``ul.audit(grid).ok.all()``.

    Raises:
      ValueError: for a malformed channel or claimed guarantee (see the module docstring), a channel or
        ``[d, d]`` matrix too large to enumerate (checked before allocating), or a bad ``E``/``tol``.
    """
    check_tol(tol)
    if isinstance(mech, _base.Mechanism):
        _grid_check.validate_grid(mech)
    shape = _grid_check.grid_shape(mech) if isinstance(mech, _base.Mechanism) else ()
    if shape:
        return _stack_reports([_audit_point(m, i, E, tol) for i, m in zip(np.ndindex(*shape), _reports.unbatch(mech))],
                              shape)
    density = _records.likelihood_of(mech).density if isinstance(mech, _base.Mechanism) else None
    if density is not None:  # real-valued reports: no finite channel
        return _density_audit(mech, density(), E, tol)
    check_audit_work(mech)
    ch = _channel.channel(mech)
    Q = ch.Q
    d = Q.shape[0]
    _reports.check_channel_size(f"audit of {type(mech).__name__}: the [d, d] ratio matrix", d, d)
    spec = mech.privacy_spec()
    check_spec(spec, d, ch.protected, type(mech).__name__)
    if E is not None:
        E = check_privacy_matrix(E, d)
        kind, protected, inv_inputs = "eldp", np.ones(Q.shape[1], bool), None
        finite = E[np.isfinite(E) & ~np.eye(d, dtype=bool)]
        nominal = float(finite.min()) if finite.size else float("inf")
    else:
        E, kind, protected, inv_inputs, nominal = spec.E, spec.kind, ch.protected, spec.invertible_inputs, spec.eps
        if inv_inputs is None:  # no invertible outputs claimed: the guarantee holds on every output
            protected = np.ones(Q.shape[1], bool)
    logq = log_channel(mech, ch)
    mass = logq.max(axis=0) > -np.inf
    L = pairwise_log_ratios(logq, protected, log=True)
    constrained = np.isfinite(E) & ~np.eye(d, dtype=bool)
    if constrained.any():
        Lc = np.where(constrained, L, -np.inf)
        flat = int(np.argmax(Lc))
        worst = (flat // d, flat % d)
        eps = float(Lc[worst])
        with np.errstate(invalid="ignore"):
            slack = np.where(constrained, L - E, -np.inf)
            slack = np.where(np.isnan(slack), -np.inf, slack)  # L = E = inf cannot occur: E finite here.
        excess = float(slack.max())
        pairs_ok = bool(np.all(slack <= tol * np.maximum(1.0, np.where(constrained, E, 0.0))))
    else:
        worst, eps, excess, pairs_ok = (0, 0), float("-inf"), float("-inf"), True
    # Invertible outputs (001 Def 2 (1)).
    inv_cols = ~protected & mass
    if inv_cols.any():
        support = logq[:, inv_cols] > -np.inf
        one_input = support.sum(axis=0) == 1
        allowed = np.ones(d, bool) if inv_inputs is None else inv_inputs
        from_allowed = np.all(~support | allowed[:, None], axis=0)
        invertible_ok = bool(np.all(one_input & from_allowed))
    else:
        invertible_ok = True
    L_all = pairwise_log_ratios(logq, mass, log=True)
    eps_ldp = float(L_all.max())
    # Tight: the binding constraint is attained (for LDP/ULDP: eps equals the nominal eps).
    tight = bool(np.isfinite(excess) and abs(excess) <= tol * max(1.0, abs(nominal)))
    return AuditReport(
        eps=eps,
        ok=bool(pairs_ok and invertible_ok),
        kind=kind,
        nominal_eps=float(nominal),
        tight=tight,
        eps_ldp=eps_ldp,
        invertible_ok=invertible_ok,
        num_protected=int((protected & mass).sum()),
        num_invertible=int(inv_cols.sum()),
        num_null=int((~mass).sum()),
        worst_pair=(int(worst[0]), int(worst[1])),
        excess=excess,
        tol=tol,
    )


def _density_audit(mech: Any, ratios: Any, E: Any, tol: float) -> AuditReport:
    """The audit of real-valued reports from the exact suprema ``L[x, x']`` of their density ratio (LDP claims
    only: such reports have no invertible outputs)."""
    name = type(mech).__name__
    L = np.asarray(ratios, dtype=np.float64)
    d = L.shape[0] if L.ndim == 2 else -1
    if L.shape != (d, d) or np.any(np.isnan(L)) or np.any(L < 0) or np.any(np.diag(L) != 0):
        raise ValueError(f"{name}.likelihood().density() must be a float [d, d] matrix of sup log-ratios "
                         f"(non-negative, no NaN, zero diagonal), got shape {L.shape}.")
    spec = mech.privacy_spec()
    check_spec(spec, d, np.ones(1, bool), name)
    if spec.invertible_inputs is not None:
        raise ValueError(f"{name}: a density audit checks LDP-type claims; {spec.kind!r} names invertible outputs.")
    if E is not None:
        E, kind = check_privacy_matrix(E, d), "eldp"
        finite = E[np.isfinite(E) & ~np.eye(d, dtype=bool)]
        nominal = float(finite.min())
    else:
        E, kind, nominal = spec.E, spec.kind, spec.eps
    constrained = np.isfinite(E) & ~np.eye(d, dtype=bool)
    Lc = np.where(constrained, L, -np.inf)
    flat = int(np.argmax(Lc))
    worst = (flat // d, flat % d)
    slack = np.where(constrained, L - np.where(constrained, E, 0.0), -np.inf)
    excess = float(slack.max())
    ok = bool(np.all(slack <= tol * np.maximum(1.0, np.where(constrained, E, 0.0))))
    tight = bool(np.isfinite(excess) and abs(excess) <= tol * max(1.0, abs(nominal)))
    return AuditReport(eps=float(Lc[worst]), ok=ok, kind=kind, nominal_eps=float(nominal), tight=tight,
                       eps_ldp=float(L.max()), invertible_ok=True, num_protected=0, num_invertible=0, num_null=0,
                       worst_pair=worst, excess=excess, tol=tol, source="density")


def _audit_point(mech: Any, index: tuple, E: Any, tol: float) -> AuditReport:
    try:
        return audit(mech, E, tol)
    except ValueError as err:
        raise ValueError(f"grid point {index} (eps={np.asarray(mech.eps).tolist()}): {err}") from err


def _stack_reports(reports: list[AuditReport], shape: tuple[int, ...]) -> AuditReport:
    """One ``AuditReport`` of arrays (grid shape leading) from the reports of a grid's points (C order)."""
    fields = (np.asarray([getattr(r, f) for r in reports]) for f in AuditReport._fields)
    return AuditReport(*(a.reshape(shape + a.shape[1:]) for a in fields))
