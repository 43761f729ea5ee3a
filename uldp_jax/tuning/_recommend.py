"""``ul.recommend``: rank the library's ULDP mechanisms by closed-form MSE and communication (003 §5.4, Table 1).

Each candidate is built with its MSE-optimal parameter for the given ``theta_n`` (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp corrected uLH/uWheel,
uRAP's theta*), its risk comes from ``ul.theory.mse`` and its communication cost from ``comm_bits(mech)``
(``mech.reports().bits``; 003 Def 5: ``log2`` of the number of possible reports, hash seeds included).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import numpy as np

from uldp_jax import _validate
from uldp_jax import mechanisms as _m
from uldp_jax.mechanisms.wheel import _wheel
from uldp_jax.theory import _exact, _mse
from uldp_jax.mechanisms.core import _optima, _report_space

SORT_KEYS = ("mse", "comm")


class Recommendation(NamedTuple):
    """One ranked candidate.

    Attributes:
      name: a label, e.g. ``"uSS (k=3)"``.
      mechanism: the mechanism instance, with its tuned parameter.
      mse: closed-form expected squared l2 loss (sum over items) for ``n`` users in ``model``.
      comm_bits: bits per report (003 Def 5).
      ldp: True for an LDP baseline (``include_ldp=True``).
    """

    name: str
    mechanism: Any
    mse: float
    comm_bits: float
    ldp: bool = False


def _candidates(d: int, sens: tuple[int, ...], eps: float, th: float, include_ldp: bool):
    s = len(sens)
    default_theta = float(1.0 / (1.0 + np.exp(-eps / 2.0)))
    theta = float(_optima.optimal_theta(eps, s, th))
    out: list[tuple[str, Callable[[], Any], bool]] = [
        ("uRR", lambda: _m.URR(d, sens, eps), False),
        (f"uRAP (001 theta={default_theta:.3f})", lambda: _m.URAP(d, sens, eps, theta=default_theta), False),
        (f"uRAP (tuned theta={theta:.3f})", lambda: _m.URAP(d, sens, eps, theta=theta), False),
    ]
    if s >= 2:
        k = _optima.optimal_k(eps, s, th)
        out.append((f"uSS (k={k})", lambda: _m.USS(d, sens, eps, k=k, theta_n=th), False))
    p = float(_optima.optimal_p(eps, s, th))
    g = _optima.optimal_g(eps, s, th)
    lv = float(np.clip(float(_optima.optimal_l(eps, s, th)), _wheel.L_MIN, _wheel.L_MAX))  # sampled exactly
    out += [(f"uUE (p={p:.3f})", lambda: _m.UUE(d, sens, eps, p=p, theta_n=th), False),
            (f"uLH (g={g})", lambda: _m.ULH(d, sens, eps, g=g, theta_n=th), False),
            (f"uWheel (l={lv:.4g})", lambda: _m.UWheel(d, sens, eps, l=lv, theta_n=th), False)]
    out.append(("high-low HR", lambda: _m.HighLowHR(d, sens, eps), False))
    if include_ldp:
        ke = _optima.optimal_k(eps, d, 0.0) if d >= 2 else 1
        ge = _optima.optimal_g(eps, d, 0.0)
        out += [("GRR (LDP)", lambda: _m.GRR(d, eps), True),
                ("OUE (LDP)", lambda: _m.UE(d, eps, p=float(_optima.optimal_theta(eps, d, 0.0))), True),
                (f"SS (LDP, k={ke})", lambda: _m.SS(d, eps, k=ke), True),
                (f"OLH (LDP, g={ge})", lambda: _m.OLH(d, eps, g=ge), True)]
    return out


# Largest domain ``recommend`` takes (it builds float[d] arrays per candidate).
MAX_D = 2**24


def recommend(d: int, sensitive: Any, eps: float, theta_n: float, *, n: float = 1.0, model: str = "fixed",
              sort_by: str = "mse", include_ldp: bool = False) -> list[Recommendation]:
    """Ranks the library's ULDP mechanisms for a setting by closed-form MSE (or communication cost).

    Args:
      d: domain size.
      sensitive: the sensitive items (an index set) or their number ``s`` (then items ``0..s-1``).
      eps: privacy budget.
      theta_n: (estimated) total mass of the non-sensitive items, in ``[0, 1]``.
      n: number of users (``n=1`` gives ``n * MSE``).
      model: ``"fixed"`` (003) or ``"iid"`` (001; adds ``(1 - sum p^2)/n``, with ``p`` uniform within ``X_S`` and
        within ``X_N`` at the given masses).
      sort_by: ``"mse"`` (ties broken by communication) or ``"comm"`` (ties broken by MSE).
      include_ldp: also rank LDP baselines (GRR, OUE, SS, OLH) that protect every item.

    Returns:
      ``list[Recommendation]``, best first.

    Raises:
      ValueError: bad ``d``, ``sensitive``, ``eps``, ``theta_n``, ``model`` or ``sort_by``.
      TypeError: ``include_ldp`` is not a bool.
    """
    d = _validate.check_int("d", d, minimum=2, maximum=_validate.D_MAX)
    if d > MAX_D:
        raise ValueError(f"Expected d={d} <= {MAX_D} (2^24): recommend builds every candidate mechanism and float[d] "
                         f"distributions ({d * 8 / 2**30:.3g} GiB each). The closed forms depend on d only through s "
                         "and theta_n: compare ul.theory.urr_nmse / urap_nmse / uss_nmse / ... at (eps, s, theta_n).")
    if isinstance(sensitive, (int, np.integer)) and not isinstance(sensitive, bool):
        s = _validate.check_int("sensitive", sensitive, minimum=1, maximum=d - 1)
        sens = tuple(range(s))
    else:
        sens = _validate.check_index_set("sensitive", sensitive, d)
        if len(sens) == d:
            raise ValueError(f"Expected sensitive to be a proper subset of [0, {d}), got all {d} items.")
    eps = float(_validate.check_eps(eps))
    th = float(_mse.check_theta_n(theta_n))
    _exact.check_model(model)
    if sort_by not in SORT_KEYS:
        raise ValueError(f"Expected sort_by={sort_by!r} in {SORT_KEYS}.")
    include_ldp = _validate.check_bool("include_ldp", include_ldp)  # 'y' or 0 usually mean another argument
    mask = np.zeros(d, bool)
    mask[list(sens)] = True
    p = np.where(mask, (1.0 - th) / mask.sum(), th / (~mask).sum())
    recs = []
    with jax.enable_x64(True):
        for name, build, ldp in _candidates(d, sens, eps, th, include_ldp):
            mech = build()
            risk = float(_mse.mse(mech, p, n, model))
            recs.append(Recommendation(name, mech, risk, float(_report_space.comm_bits(mech)), ldp))
    key = (lambda r: (r.mse, r.comm_bits)) if sort_by == "mse" else (lambda r: (r.comm_bits, r.mse))
    return sorted(recs, key=key)


def format_recommendations(recs: list[Recommendation]) -> str:
    """A plain-text table of ``recommend``'s output."""
    w = max(len(r.name) for r in recs)
    lines = [f"{'mechanism':<{w}}  {'mse':>12}  {'bits':>8}"]
    lines += [f"{r.name:<{w}}  {r.mse:12.6g}  {r.comm_bits:8.2f}" for r in recs]
    return "\n".join(lines)
