"""Beyond the papers: uRAP with the MSE-optimal theta (tuned by optax) against 001's default theta.

001 fixes theta = e^(eps/2) / (e^(eps/2) + 1) and leaves the optimum as future work; docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta gives the closed
form theta* (fixed model). ``ul.tune`` finds it by gradient descent on the closed-form MSE; this experiment
checks the tuned theta against theta*, reports the MSE reduction, and confirms it by simulation.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _common, _datasets, _plot
from uldp_jax.experiments._glutf import fixed_users
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register


def theta_star(eps: float, s: int, theta_n: float) -> float:
    """docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta closed-form MSE-optimal theta of uRAP (fixed model)."""
    e = math.exp(eps)
    return 1.0 / (1.0 + math.sqrt((e * s - (1 - theta_n) * (e - 1)) / (e * (s + e - 1))))


def _nmse(mech, p) -> float:
    """n * MSE (fixed model, summed over items) of the empirical estimator."""
    with jax.enable_x64(True):
        return float(ul.theory.mse(mech, jnp.asarray(p, jnp.float64), 1, model="fixed"))


def run(cfg: dict, ctx: Context) -> Report:
    datasets = _datasets.resolve(cfg["datasets"], ctx.data, cfg.get("n"))
    rows, panels, notes = [], [], []
    with _common.progress(len(datasets) * len(cfg["eps"]), "tuned uRAP", ctx.progress) as bar:
        for di, ds in enumerate(datasets):
            xs = fixed_users(ds.p, ds.n)
            target = np.bincount(xs, minlength=ds.d) / xs.size
            lines = {"default": [], "tuned": []}
            for ei, e in enumerate(cfg["eps"]):
                default = ul.URAP(ds.d, ds.sensitive, e)
                tuned = ul.tune(default, p=target, steps=cfg["steps"])
                t_opt = theta_star(e, ds.s, float(target[np.setdiff1d(np.arange(ds.d), ds.sensitive)].sum()))
                row = dict(dataset=ds.name, eps=e, d=ds.d, s=ds.s, n=int(xs.size),
                           theta_default=float(default.theta), theta_tuned=float(tuned.theta), theta_star=t_opt,
                           nmse_default=_nmse(default, target), nmse_tuned=_nmse(tuned, target))
                row["reduction"] = 1 - row["nmse_tuned"] / row["nmse_default"]
                if cfg["reps"] > 0:
                    for name, mech in (("default", default), ("tuned", tuned)):
                        res = ul.simulate(ctx.key(di, ei), mech, xs=xs, reps=cfg["reps"],
                                          **_common._simulate_kwargs(cfg.get("path")))
                        err = np.asarray(ul.metrics.l2sq(res.estimates["emp"], jnp.asarray(target, jnp.float32)))
                        row[f"sim_nmse_{name}"] = float(err.mean() * xs.size)
                        row[f"sim_nmse_{name}_se"] = (float(err.std(ddof=1) / math.sqrt(err.size) * xs.size)
                                                      if err.size > 1 else float("nan"))
                rows.append(row)
                lines["default"].append(row["nmse_default"])
                lines["tuned"].append(row["nmse_tuned"])
                bar.update(1, f"{ds.name} eps={e}")
            panels.append((f"{ds.name}: d={ds.d}, s={ds.s}", [
                ("uRAP, 001 default theta", "uRAP", "emp", cfg["eps"], lines["default"]),
                ("uRAP, tuned theta (optax)", "uUE", "theory", cfg["eps"], lines["tuned"])]))
            worst = max(abs(r["theta_tuned"] - r["theta_star"]) for r in rows if r["dataset"] == ds.name)
            best = max(rows, key=lambda r: r["reduction"] if r["dataset"] == ds.name else -1)
            notes.append(f"{ds.name}: max |theta_tuned - theta*| = {worst:.2e}; largest MSE cut "
                         f"{100 * best['reduction']:.0f}% at eps={best['eps']:g} (theta {best['theta_default']:.3f} "
                         f"-> {best['theta_tuned']:.3f}).")
    fig = _plot.line_panels(panels, "epsilon", "n * MSE (closed form, fixed model)", logx=False)
    table = format_table([dict(r, key="reduction") for r in rows], ("dataset",), "eps", value_key="reduction",
                         fmt="{:.2f}")
    return Report(rows, {"tuned_urap": fig}, "MSE reduction (1 - tuned/default):\n" + table, notes,
                  "; ".join(ds.summary() for ds in datasets))


_FULL = dict(datasets=["census1200", "foursquare25", "normal"], eps=[0.5, 1.0, 2.0, 3.0, 4.0, 5.0], steps=1500,
             reps=20, n=100_000)
_QUICK = dict(_FULL, datasets=["drug"], eps=[5.0], steps=200, reps=2, n=2_000)
register(Experiment("tuned-urap", "uRAP with the optax-tuned theta vs 001's default (closed form + simulation)",
                    _FULL, _QUICK, run))
