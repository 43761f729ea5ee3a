"""Redraws the committed 001 Figs 8 and 13 (PUM) from their CSVs, without recomputing any number.

    python experiments/replot_pum.py            # 001-fig8 (TV) and 001-fig13 (l2 loss)

The figure code is the runner's (``uldp_jax.experiments._pum.figure``): a labelled ``eps = ln d`` line and the
line styles of the three cases named on the figure.
"""

from __future__ import annotations

import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(names=("001-fig8", "001-fig13")) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from uldp_jax.experiments import _pum

    for name in names:
        with open(os.path.join(HERE, name, "results.csv")) as fh:
            rows = list(csv.DictReader(fh))
        with open(os.path.join(HERE, name, "run_config.json")) as fh:
            cfg = json.load(fh)["config"]
        curve = next(r for r in rows if r["case"] in ("I", "II", "III"))
        d, n = int(curve["d"]), int(curve["n"])
        title = (f"PUM, synthetic Manhattan (n={n} of {cfg.get('population', 2 * n)}, d={d}, "
                 f"|X_S|={curve['s']})")
        fig = _pum.figure(rows, title, cfg["metric"], d)
        path = os.path.join(HERE, name, f"pum_eps_vs_{cfg['metric']}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(tuple(sys.argv[1:]) or ("001-fig8", "001-fig13")))
