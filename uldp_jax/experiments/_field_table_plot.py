"""The field table's figure: report bits against the per-item ``n Var``, one colour per mechanism, one marker per eps;
closed forms as open markers, simulations (where run) as dots with two-standard-error bars."""

from __future__ import annotations

from uldp_jax.experiments import _plot

MARKERS = ("o", "s", "^", "D", "v", "P")


@_plot._or_nofigure
def figure(rows: list):
    """One panel per distribution, d and group (LDP, ULDP at each ratio), from the rows ``run`` writes (also from a
    committed CSV's rows)."""
    plt = _plot._plt()
    import matplotlib.lines as mlines

    keys = list(dict.fromkeys((r["distribution"], int(r["d"]), r["group"], str(r["ratio"])) for r in rows))
    labels = list(dict.fromkeys(r["mechanism"] for r in rows))
    eps_values = sorted({float(r["eps"]) for r in rows})
    cmap = plt.get_cmap("tab20")
    color = {lab: cmap(i % 20) if i < 20 else plt.get_cmap("Dark2")(i - 20) for i, lab in enumerate(labels)}
    marker = {e: MARKERS[i % len(MARKERS)] for i, e in enumerate(eps_values)}
    cols = min(len(keys), 3)
    nrows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.0 * nrows), squeeze=False)
    for i, key in enumerate(keys):
        ax = axes[i // cols][i % cols]
        sel = [r for r in rows if (r["distribution"], int(r["d"]), r["group"], str(r["ratio"])) == key]
        for r in sel:
            x, y, c, m = float(r["bits"]), float(r["value"]), color[r["mechanism"]], marker[float(r["eps"])]
            if r["method"] == "theory":
                ax.plot(x, y, m, mfc="none", mec=c, ms=7)
            else:
                ax.errorbar(x, y, yerr=2.0 * float(r["se"]), fmt=m, color=c, ms=3, lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("report bits (comm_bits)")
        ax.set_ylabel("n Var per item (iid)")
        dist, d, group, ratio = key
        ax.set_title(f"{dist}, d={d}, " + ("LDP" if group == "LDP" else f"ULDP |X_S|/d={ratio}"), fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    for j in range(len(keys), nrows * cols):
        axes[j // cols][j % cols].axis("off")
    handles = [mlines.Line2D([], [], color=color[lab], marker="o", ls="", label=lab) for lab in labels]
    handles += [mlines.Line2D([], [], color="k", marker=marker[e], mfc="none", ls="", label=f"eps = {e:g}")
                for e in eps_values]
    fig.suptitle("The field's frequency oracles: open markers closed form, dots simulated (+-2 SE)", fontsize=10)
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 0.97))  # room for the suptitle
    _plot.legend_below(fig, handles, [h.get_label() for h in handles], 5.2 * cols)
    return fig
