"""Rewrites the claim lines of committed summaries with the tests a rerun writes (``uldp_jax.experiments._claims``:
one-sided z-tests at family level 0.05, Bonferroni), from the committed CSV's means and standard errors; no number
is recomputed.

    python experiments/rescore_claims.py 003-fig4 003-sims 003-table2 004-table1

* ``003-fig4``: the same, plus simulated MSE = closed form (two-sided z-tests, the line its NOTES describe);
* ``003-sims``: "best mechanism" per dataset, metric and the smallest / largest eps (``_glutf._ranking``);
* ``003-table2``: Table 2's "uSS estimates theta best" and "below 4.38%" (``_glutf_text.table2_claims``);
* ``004-table1``: "TV decreases with finer partitions" (``_context.table1_claims``, the projected estimates).
"""

from __future__ import annotations

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "Claim checks recomputed from this CSV's means and standard errors"


def _rows(name: str) -> list:
    with open(os.path.join(HERE, name, "results.csv")) as fh:
        rows = list(csv.DictReader(ln for ln in fh if not ln.startswith("#")))
    for r in rows:
        for k in ("eps", "value", "se"):
            if r.get(k) not in (None, ""):
                r[k] = float(r[k])
        if r.get("se") == "":
            r["se"] = 0.0
    return rows


def _claims(name: str, rows: list) -> tuple[list, callable]:
    """(new claim lines, predicate for the old lines they replace)."""
    from uldp_jax.experiments import _claims as cl
    from uldp_jax.experiments import _context, _glutf, _glutf_text

    if name == "003-fig4":
        eps = sorted({r["eps"] for r in rows})
        notes = [n for ds in dict.fromkeys(r["dataset"] for r in rows)
                 for n in _glutf._ranking(rows, ds, _glutf.GLUTF_MECHS, eps, "mse")]
        sim = [r for r in rows if r["mechanism"] in _glutf.GLUTF_MECHS and r.get("theory") not in (None, "")]
        bad, k, crit = cl.agree([r["value"] for r in sim], [float(r["theory"]) for r in sim], [r["se"] for r in sim])
        notes.append(f"simulated MSE = closed form (two-sided z-tests, family level {cl.LEVEL:g}, Bonferroni over {k} "
                     f"settings, |z| > {crit:.2f} rejects): {bad} rejected.")
        return notes, lambda ln: (": best " in ln and "; order " in ln) or "largest |simulated/theory" in ln
    if name == "003-sims":
        notes = []
        for metric in dict.fromkeys(r["metric"] for r in rows):
            mrows = [r for r in rows if r["metric"] == metric]
            for ds in dict.fromkeys(r["dataset"] for r in mrows):
                eps = sorted({r["eps"] for r in mrows if r["dataset"] == ds})
                notes += _glutf._ranking(mrows, ds, _glutf.GLUTF_MECHS, eps, metric)
        sim = [r for r in rows if r["metric"] == "mse" and r["mechanism"] in _glutf.GLUTF_MECHS
               and r.get("theory") not in (None, "")]
        bad, k, crit = cl.agree([r["value"] for r in sim], [float(r["theory"]) for r in sim], [r["se"] for r in sim])
        notes.append(f"simulated MSE = closed form (two-sided z-tests, family level {cl.LEVEL:g}, Bonferroni over {k} "
                     f"settings, |z| > {crit:.2f} rejects): {bad} rejected.")
        return notes, lambda ln: (": best " in ln and "; order " in ln) or "largest |simulated/theory" in ln
    if name == "003-table2":
        return _glutf_text.table2_claims(rows), lambda ln: ln.startswith("- Table 2, ") or "'below 4.38%'" in ln
    if name == "004-table1":
        return _context.table1_claims(rows, "project"), lambda ln: "TV decreases with finer partitions" in ln
    raise SystemExit(f"unknown experiment {name!r}")


def main(names) -> int:
    for name in names:
        notes, old = _claims(name, _rows(name))
        path = os.path.join(HERE, name, "summary.md")
        lines = open(path).read().splitlines()
        cut = next((i for i, ln in enumerate(lines) if ln.startswith(MARK)), len(lines))
        keep = [ln for ln in lines[:cut] if not (ln.startswith("- ") and old(ln))]
        while keep and not keep[-1].strip():
            keep.pop()
        keep += ["", f"{MARK} with the tests a rerun writes (`python experiments/rescore_claims.py`; one-sided "
                 "z-tests, family level 0.05, Bonferroni; no number recomputed):"] + [f"- {n}" for n in notes]
        with open(path, "w") as fh:
            fh.write("\n".join(keep) + "\n")
        print(f"{name}:", *notes, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
