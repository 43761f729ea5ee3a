"""Redraws committed figures from their CSVs with the runners' own figure code, without recomputing any number.

    python experiments/replot_figures.py                    # 001-fig8, 001-fig13 (PUM) and hr-general
    python experiments/replot_figures.py hr-general

``uldp_jax.experiments._pum.figure`` (001 Figs 8/13: a labelled ``eps = ln d`` line, the cases' line styles named)
and ``uldp_jax.experiments._hr_general.figure``; 003's figures have ``experiments/replot_003_mse.py``.
"""

from __future__ import annotations

import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("001-fig8", "001-fig13", "hr-general")


def _read(name):
    with open(os.path.join(HERE, name, "results.csv")) as fh:
        rows = list(csv.DictReader(fh))
    with open(os.path.join(HERE, name, "run_config.json")) as fh:
        return rows, json.load(fh)["config"]


def _figure(name, rows, cfg):
    if name == "hr-general":
        from uldp_jax.experiments import _hr_general
        return _hr_general.figure(rows), "hr_general_risk.png"
    from uldp_jax.experiments import _pum
    curve = next(r for r in rows if r["case"] in ("I", "II", "III"))
    d, n = int(curve["d"]), int(curve["n"])
    title = f"PUM, synthetic Manhattan (n={n} of {cfg.get('population', 2 * n)}, d={d}, |X_S|={curve['s']})"
    return _pum.figure(rows, title, cfg["metric"], d), f"pum_eps_vs_{cfg['metric']}.png"


def main(names=NAMES) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    for name in names:
        if name not in NAMES:
            raise SystemExit(f"replot_figures.py: {name!r} is not one of {NAMES}")
        rows, cfg = _read(name)
        fig, png = _figure(name, rows, cfg)
        path = os.path.join(HERE, name, png)
        fig.savefig(path, dpi=110, bbox_inches="tight")
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(tuple(sys.argv[1:]) or NAMES))
