"""Redraws committed figures from their CSVs with the runners' own figure code, without recomputing any number.

    python experiments/replot_figures.py                    # 001-fig6, 001-fig8, 001-fig11, 001-fig13, hr-general
    python experiments/replot_figures.py hr-general

``uldp_jax.experiments._pum.figure`` (001 Figs 8/13: a labelled ``eps = ln d`` line, the cases' line styles named)
``uldp_jax.experiments._hr_general.figure`` and, for 001 Figs 6/11 (|X_S| sweeps), the panels
``_murakami.run_sensitive`` draws (its ``_lines`` and axis label; the no-privacy level from ``summary.md``);
003's figures have ``experiments/replot_003_mse.py``.
"""

from __future__ import annotations

import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = ("001-fig6", "001-fig8", "001-fig11", "001-fig13", "hr-general")


def _read(name):
    with open(os.path.join(HERE, name, "results.csv")) as fh:
        rows = list(csv.DictReader(fh))
    with open(os.path.join(HERE, name, "run_config.json")) as fh:
        return rows, json.load(fh)["config"]


def _sensitive_figure(name, rows, cfg):
    """001 Figs 6/11: one panel per (data set, eps), lines per mechanism x method, as ``run_sensitive``."""
    import re

    from uldp_jax.experiments import _common, _murakami, _plot
    with open(os.path.join(HERE, name, "summary.md")) as fh:
        nonprivate = dict(re.findall(r"- (\w+): no privacy ([0-9.eE+-]+)\.", fh.read()))
    method = {label: m for m, label in _common.METHOD_LABELS.items()}  # the CSV holds labels ("EM")
    summ = [dict(r, eps=float(r["eps"]), s=int(r["s"]), mean=float(r["value"]), method=method.get(r["method"],
                 r["method"])) for r in rows]
    panels = []
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        mine = [r for r in summ if r["dataset"] == ds]
        s_values = sorted({r["s"] for r in mine})
        for e in dict.fromkeys(r["eps"] for r in mine):
            lines = [("no privacy", "no privacy", "", s_values, [float(nonprivate[ds])] * len(s_values))]
            lines += _murakami._lines([r for r in mine if r["eps"] == e], cfg["mechanisms"],
                                      _common.available_methods(cfg["methods"]), key="s")
            panels.append((f"{ds}: eps = {e:g}", lines))
    metric = cfg["metric"]
    fig = _plot.line_panels(panels, "|X_S|", _common.METRIC_AXIS.get(metric, metric.upper()))
    return fig, cfg.get("figure", "sensitive_vs_" + metric) + ".png"


def _figure(name, rows, cfg):
    if name in ("001-fig6", "001-fig11"):
        return _sensitive_figure(name, rows, cfg)
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
