"""003's tabulated and in-text values recomputed with the library: Table 1's MSE orders and §6's p and z*.

* ``table1_orders``: 003 Table 1 states the MSE order of uRR, uRAP, uSS, uUE and uLH in the high (eps < 1) and
  medium (1 < eps < ln s) privacy regimes. The library's exact closed forms (fixed model, uniform p over ``d``
  items, ``theta_N = 1 - s/d``, each mechanism with its MSE-optimal parameter or 001's default uRAP theta) give
  ``n MSE``; its ratio to the stated order over a grid of ``s`` and eps, and its log-log slope in ``s``, show
  which orders hold (a bounded ratio and the stated slope) — exact numbers, no sampling.
* ``section6_values``: 003 §6 quotes uRAP's and uUE's keep-probability p on Census (eps = 0.5 and 5) and z* of
  uSS, uUE and uLH on Normal (eps = 0.5); recomputed on the datasets' settings.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _claims

ORDERS = {  # 003 Table 1: (high privacy, medium privacy) orders of n * MSE, as functions of (s, eps)
    "uRR": (lambda s, e: s**2 / e**2, lambda s, e: s**2 / math.expm1(e) ** 2),
    "uRAP": (lambda s, e: s / e**2, lambda s, e: s * math.exp(e / 2) / math.expm1(e / 2) ** 2),
    "uSS": (lambda s, e: s / e**2, lambda s, e: s * math.exp(e) / math.expm1(e) ** 2),
    "uUE": (lambda s, e: s / e**2, lambda s, e: s * math.exp(e) / math.expm1(e) ** 2),
    "uLH": (lambda s, e: s / e**2, lambda s, e: s * math.exp(e) / math.expm1(e) ** 2),
}
ORDER_TEXT = {"uRR": ("s^2/eps^2", "s^2/(e^eps-1)^2"), "uRAP": ("s/eps^2", "s e^(eps/2)/(e^(eps/2)-1)^2")}
_BUILD = {"uRR": lambda d, s, e, t: ul.URR(d, s, e), "uRAP": lambda d, s, e, t: ul.URAP(d, s, e),
          "uSS": lambda d, s, e, t: ul.USS(d, s, e, theta_n=t), "uUE": lambda d, s, e, t: ul.UUE(d, s, e, theta_n=t),
          "uLH": lambda d, s, e, t: ul.ULH(d, s, e, theta_n=t)}


def _nmse(label: str, d: int, s: int, eps: float) -> float:
    mech = _BUILD[label](d, tuple(range(s)), eps, 1.0 - s / d)
    with jax.enable_x64(True):
        return float(ul.theory.mse(mech, jnp.full(d, 1.0 / d, jnp.float64), 1, model="fixed"))


def table1_orders(d: int, sizes: list, eps_high: list, eps_medium: list) -> tuple[list, list]:
    """Rows and notes: ``n MSE / order`` (min, max over the grid) and the slope in ``s`` per mechanism and regime."""
    rows, notes = [], []
    for label, (high, medium) in ORDERS.items():
        text = ORDER_TEXT.get(label, ("s/eps^2", "s e^eps/(e^eps-1)^2"))
        for regime, order, eps_list, txt in (("high", high, eps_high, text[0]), ("medium", medium, eps_medium,
                                                                                    text[1])):
            ratios, slopes = [], []
            for e in eps_list:
                ok = [s for s in sizes if regime == "high" or e < math.log(s)]
                vals = [_nmse(label, d, s, e) for s in ok]
                ratios += [v / order(s, e) for v, s in zip(vals, ok)]
                if len(ok) > 1:
                    slopes.append(float(np.polyfit(np.log(ok), np.log(vals), 1)[0]))
            rows.append(dict(mechanism=label, regime=regime, order=txt, metric="n mse / table1 order",
                             value=max(ratios), ratio_min=min(ratios), ratio_max=max(ratios),
                             slope_in_s=float(np.mean(slopes)), se=0.0, d=d))
            notes.append(f"003 Table 1, {label}, {regime} privacy: n MSE / O({txt}) in [{min(ratios):.3g}, "
                         f"{max(ratios):.3g}] over s in {sizes} and eps in {eps_list}; slope of log n MSE in log s "
                         f"= {np.mean(slopes):.2f} (stated order: {2 if label == 'uRR' else 1}).")
    return rows, notes


PAPER_SECTION6 = {("census1200", "uRAP p", 0.5): 0.562, ("census1200", "uUE p", 0.5): 0.500,
                  ("census1200", "uRAP p", 5.0): 0.924, ("census1200", "uUE p", 5.0): 0.517,
                  ("normal", "uSS z*", 0.5): 0.20, ("normal", "uUE z*", 0.5): 0.0028,
                  ("normal", "uLH z*", 0.5): 0.18}


def section6_values(datasets: list) -> tuple[list, list]:
    """003 §6's quoted p (uRAP: 001's default theta; uUE: eq 43) and z* (003 Def 6), on the datasets present."""
    rows = []
    for ds in datasets:
        sens = tuple(int(i) for i in ds.sensitive)
        for (name, what, e), paper in PAPER_SECTION6.items():
            if name != ds.name:
                continue
            if what == "uRAP p":
                v = float(np.asarray(ul.URAP(ds.d, sens, e).theta))
            elif what == "uUE p":
                v = float(np.asarray(ul.UUE(ds.d, sens, e, theta_n=ds.theta_n).p))
            else:
                cls = {"uSS": ul.USS, "uUE": ul.UUE, "uLH": ul.ULH}[what.split()[0]]
                v = float(np.asarray(cls(ds.d, sens, e, theta_n=ds.theta_n).pure().z))
            base = dict(dataset=ds.name, quantity=what.split()[1], eps=e, metric="003 section 6 value",
                        paper_value=paper, se=0.0, d=ds.d, s=ds.s, theta_n=round(ds.theta_n, 4))
            rows.append(dict(base, mechanism=what.split()[0], value=v))
            if what == "uLH z*":  # 003 quotes the published (ULDP-violating) z's z*
                pub = ul.ULH(ds.d, sens, e, theta_n=ds.theta_n, z_rule="published_unsafe")
                rows.append(dict(base, mechanism="uLH (published z)", value=float(np.asarray(pub.pure().z))))
    notes = []
    if rows:
        notes.append("003 §6 in-text values, library (003's text): " + "; ".join(
            f"{r['dataset']} {r['mechanism']} {r['quantity']} at eps={r['eps']:g}: {r['value']:.4g} "
            f"({r['paper_value']:g})" for r in rows) + ". The corrected uLH's z* equals uUE's (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp); "
            "003's 0.18 is the published z's.")
    return rows, notes


def table2_claims(rows: list) -> list:
    """003 §6.3's claims on the collaborative-sampling rows (``theta_rel_error`` per dataset, mechanism, eps), as
    tests: Table 2's entry is the mean over eps of the per-eps means, its standard error
    ``sqrt(sum se^2) / len(eps)`` (independent runs; normal approximation, which is rough with few repetitions).

    * "uSS (the largest z*) estimates theta best" per dataset: ``_claims.best`` (family level 0.05);
    * "the error is below 4.38% except uUE on Normal": one-sided z-test of each entry against 4.38%, family
      level 0.05 over the entries (Bonferroni).
    """
    cells: dict = {}
    for r in rows:
        if r.get("metric") == "theta_rel_error":
            cells.setdefault((r["dataset"], r["mechanism"]), []).append((float(r["value"]), float(r["se"] or 0)))
    table = {k: (100 * float(np.mean([m for m, _ in v])), 100 * math.sqrt(sum(se**2 for _, se in v)) / len(v))
             for k, v in cells.items()}
    notes = []
    for ds in dict.fromkeys(k[0] for k in table):
        vals = {m: v for (d, m), v in table.items() if d == ds}
        notes.append(f"Table 2, {ds}: " + _claims.best(vals, "theta relative error (%)"))
    crit = _claims.z_one_sided(_claims.LEVEL / max(len(table), 1))
    below = {k: _claims.z_below(v, (4.38, 0.0)) > crit for k, v in table.items()}
    notes.append(f"'below 4.38%' (one-sided z-tests against 4.38, family level {_claims.LEVEL:g}, Bonferroni over "
                 f"{len(table)} entries, z > {crit:.2f}): established for "
                 f"{sum(below.values())} of {len(below)}; not established: "
                 + (", ".join(f"{m} {d} ({table[(d, m)][0]:.2f} +- {table[(d, m)][1]:.2f})"
                              for (d, m), ok in below.items() if not ok) or "none") + ".")
    return notes
