"""Redraws the committed 003 MSE figures from their CSVs in 003's unit (sum over items, 003 eq 28).

The CSVs carry both units (``value`` = per-item mean, ``value_sum`` etc. = d x that); the plotting code now draws
the sum (``uldp_jax.experiments._glutf.MSE_SUM``), and this script redraws figures of runs made before that change
without recomputing any number:

    python experiments/replot_003_mse.py            # 003-fig4, 003-sims (all four metrics), 003-table2
    python experiments/replot_003_mse.py 003-fig3 003-fig5   # older runs of these (reruns draw them themselves)
"""

from __future__ import annotations

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _rows(name):
    with open(os.path.join(HERE, name, "results.csv")) as fh:
        return list(csv.DictReader(ln for ln in fh if not ln.startswith("#")))


def _color(label):
    from uldp_jax.experiments._glutf import _color_key
    return _color_key(label.split(" ")[0])


def _panels(rows, x, y, title, method):
    order = list(dict.fromkeys(r["dataset"] for r in rows))
    panels = []
    for ds in order:
        sel = [r for r in rows if r["dataset"] == ds]
        lines = []
        for label in dict.fromkeys(r["mechanism"] for r in sel):
            pts = sorted((float(r[x]), float(r[y])) for r in sel if r["mechanism"] == label)
            lines.append((label, _color(label), method(label), [p[0] for p in pts], [p[1] for p in pts]))
        panels.append((title(sel[0]), lines))
    return panels


SIM_NOTE = "dotted: simulated emp of the corrected mechanisms; dashed: 003's published z (exceeds eps)"


def main(names=("003-fig4", "003-sims", "003-table2")) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from uldp_jax.experiments import _plot
    from uldp_jax.experiments._glutf import MSE_SUM

    def save(fig, name, png):
        path = os.path.join(HERE, name, png)
        fig.savefig(path, dpi=110, bbox_inches="tight")
        print("wrote", path)

    theory = lambda lab: "emp" if "published" in lab else "theory"  # noqa: E731
    sim = lambda lab: "emp+thr" if "published" in lab else "emp"  # noqa: E731
    if "003-fig3" in names:
        rows = [r for r in _rows("003-fig3") if r["metric"] == "mse (theory)" and r["value_sum"] not in ("", "nan")]
        save(_plot.line_panels(_panels(rows, "eps", "value_sum", lambda r: f"{r['dataset']}: d={r['d']}, s={r['s']}, "
                                       f"theta_N={float(r['theta_n']):.2f}, n={r['n']}", theory),
                               "epsilon", MSE_SUM + " (theory, fixed model)", logx=False), "003-fig3", "theory_mse.png")
    if "003-fig5" in names:
        rows = _rows("003-fig5")
        save(_plot.line_panels(_panels(rows, "share", "value_sum", lambda r: f"{r['dataset']}: d={r['d']}, "
                                       f"eps={r['eps']}", theory), "sensitive share s/d", MSE_SUM + " (theory)",
                               logx=False), "003-fig5", "share_vs_mse.png")
    title = lambda r: f"{r['dataset']}: d={r['d']}, s={r['s']}, n={r['n']}"  # noqa: E731
    for name in ("003-fig4", "003-sims"):
        if name not in names:
            continue
        rows = [r for r in _rows(name) if r["metric"] == "mse"]
        save(_plot.line_panels(_panels(rows, "eps", "value_sum", title, sim), "epsilon", MSE_SUM, logx=False,
                               suptitle=SIM_NOTE), name, "eps_vs_mse.png")
        if name == "003-sims":  # Figs 8 and 9: MAE, F1@30, NDCG@30 (per-item values; Drug has d < 30 for F1/NDCG)
            for metric, png, logy in (("mae", "eps_vs_mae.png", True), ("f1@30", "eps_vs_f1_at_30.png", False),
                                      ("ndcg@30", "eps_vs_ndcg_at_30.png", False)):
                rows = [r for r in _rows(name) if r["metric"] == metric]
                save(_plot.line_panels(_panels(rows, "eps", "value", title, sim), "epsilon", metric.upper(),
                                       logx=False, logy=logy, suptitle=SIM_NOTE), name, png)
    if "003-table2" not in names:
        return 0
    rows = [r for r in _rows("003-table2") if r["mse_collab_sum"] not in ("", "nan")]
    panels = []
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        sel = [r for r in rows if r["dataset"] == ds]
        lines = []
        for label in dict.fromkeys(r["mechanism"] for r in sel):
            pts = sorted((float(r["eps"]), float(r["mse_collab_sum"]), float(r["mse_true_theta_sum"])) for r in sel
                         if r["mechanism"] == label)
            xs = [p[0] for p in pts]
            lines += [(f"{label} (estimated theta)", label, "emp", xs, [p[1] for p in pts]),
                      (f"{label} (true theta, theory)", label, "theory", xs, [p[2] for p in pts])]
        panels.append((f"{ds}: theta_N={float(sel[0]['theta']):.2f}", lines))
    save(_plot.line_panels(panels, "epsilon", MSE_SUM, logx=False,
                           suptitle="dotted: two-stage protocol, theta from a 5% pilot (simulated); solid: true theta "
                                    "and all users (closed form)"), "003-table2", "collab_mse.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(tuple(sys.argv[1:]) or ("003-fig4", "003-sims", "003-table2")))
