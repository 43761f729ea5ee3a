"""Rewrites the claim lines of a committed 001 summary with the z-tests that a rerun writes, from the committed
CSV's means and standard errors; no number is recomputed. eps sweeps (001-fig5 / 001-fig10):
``uldp_jax.experiments._murakami._eps_checks`` (two-sided / one-sided t-tests at level 0.05 with the rows'
``reps - 1`` degrees of freedom); |X_S| and attribute sweeps (001-fig6/7/11/12 and their variant folders):
``_murakami.sweep_checks`` (best mechanism, one-sided t-tests at family level 0.05, Bonferroni). A CSV of several
metrics (``--set metric=tv,l2sq``) gets each metric's lines tagged ``[metric]``, as the runner writes them.

    python experiments/rescore_001_eps.py 001-fig5 001-fig10 001-fig6/census-iid 001-fig7
"""

from __future__ import annotations

import csv
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def main(names) -> int:
    from uldp_jax.experiments import _murakami

    for name in names:
        folder = os.path.join(HERE, name)
        with open(os.path.join(folder, "results.csv")) as fh:
            lines = fh.readlines()
        rows = list(csv.DictReader(ln for ln in lines if not ln.startswith("#")))
        for r in rows:
            r["eps"], r["value"], r["se"] = float(r["eps"]), float(r["value"]), float(r["se"] or "nan")
        metrics = list(dict.fromkeys(r["metric"] for r in rows))
        key = "attributes" if "attributes" in rows[0] else "s" if "cases" in rows[0] else None  # sweep or eps
        notes = []
        for metric in metrics:  # a run scoring several metrics tags each line with its metric, as the runner does
            at = [r for r in rows if r["metric"] == metric]
            tag = f"[{metric}] " if len(metrics) > 1 else ""
            if key:  # a |X_S| or attribute sweep
                lines = _murakami.sweep_checks(at, key)
            else:
                lines = []
                for ds_name in dict.fromkeys(r["dataset"] for r in at):
                    d = int(next(r["d"] for r in at if r["dataset"] == ds_name))
                    lines += _murakami._eps_checks(at, types.SimpleNamespace(name=ds_name, d=d), metric)
            notes += [tag + ln for ln in lines]
        path = os.path.join(folder, "summary.md")
        text = open(path).read()
        old = ("best mechanism at eps", "at eps = ln d", "|X_S|=", "attributes: best ", ": best mechanism (each",
               ": lowest ")
        keep = [ln for ln in text.splitlines() if not (ln.startswith("- ") and any(o in ln for o in old))
                and not ln.startswith("Claim checks recomputed")]
        while keep and not keep[-1].strip():
            keep.pop()
        keep.append("")
        keep.append("Claim checks recomputed from this CSV's means and standard errors with the tests a rerun "
                    "writes (`python experiments/rescore_001_eps.py`; no number recomputed):")
        keep += [f"- {n}" for n in notes]
        with open(path, "w") as fh:
            fh.write("\n".join(keep) + "\n")
        print(f"{name}:", *notes, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
