"""The sources of the Colab-ready notebooks in this folder (nbformat v4).

    python notebooks/build.py            # write every notebook and execute it, saving the outputs
    python notebooks/make_notebooks.py   # write the sources only (no outputs)

Every notebook starts with an install cell: inside a checkout it installs that checkout; elsewhere (Colab) it
installs from the repository (``REPOSITORY``), or from ``ULDP_SOURCE`` (a git URL, a wheel or a folder), with no
editing; on a GPU runtime it installs ``jax[cuda12]`` and prints ``jax.devices()``. ``SMALL=1`` in the environment shrinks
the sizes (CI executes every notebook that way; the committed outputs are such a reduced CPU run).
"""

from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

REPOSITORY = "https://github.com/uldp-jax/uldp_jax"  # pyproject.toml's [project.urls] Repository
COLAB = "https://colab.research.google.com/github/uldp-jax/uldp_jax/blob/main/notebooks/"

INSTALL = '''# ==== Set-up: install uldp_jax (runs as is on Colab) ==========================================================
# Inside a checkout of the repository (Jupyter started anywhere in it) this cell installs that checkout; elsewhere
# (Colab) it installs from the repository, or from ULDP_SOURCE in the environment (a git URL, a wheel or a folder).
# On a GPU runtime it also installs jax[cuda12] matching the installed jax and prints jax.devices().
import importlib.util, os, pathlib, shutil, subprocess, sys

REPOSITORY = "git+@REPOSITORY@.git"


def _pip(*args):
    print("pip install", " ".join(args))
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *args])


def _checkout():
    for folder in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]:
        if (folder / "pyproject.toml").is_file() and (folder / "uldp_jax" / "__init__.py").is_file():
            return folder
    return None


source, root = os.environ.get("ULDP_SOURCE", ""), _checkout()
found = importlib.util.find_spec("uldp_jax")
if root is not None and not (found and pathlib.Path(found.origin).resolve().is_relative_to(root.resolve())):
    _pip("-e", f"{root}[plot]")              # the surrounding checkout
    sys.path.insert(0, str(root))            # importable in this running kernel too
elif root is None and (source or not found):
    source = source or REPOSITORY
    _pip(f"uldp_jax[plot] @ {source}" if source.startswith("git+") else f"{source}[plot]")
if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0:
    from importlib.metadata import version
    _pip(f"jax[cuda12]=={version('jax')}")   # a GPU runtime: the CUDA 12 build of the installed jax
SMALL = os.environ.get("SMALL") == "1"       # reduced sizes (CI and the committed outputs)
import jax
import uldp_jax
print(f"uldp_jax {uldp_jax.__version__}", "(this checkout)" if root is not None else "(installed)")
print("JAX devices:", jax.devices(), "| mode:", "reduced (SMALL=1)" if SMALL else "full")'''.replace(
    "@REPOSITORY@", REPOSITORY)

NOTEBOOKS = {
    "quickstart.ipynb": [
        ("md", "# uldp_jax quickstart\n\nMechanisms as pytrees, exact privacy audits, perturbation, estimation and "
               "Monte Carlo simulation of utility-optimized LDP (Murakami & Kawamoto 2019)."),
        ("code", INSTALL),
        ("code", '''import numpy as np, jax, jax.numpy as jnp
import matplotlib.pyplot as plt
import uldp_jax as ul

d, sensitive = 12, (0, 1, 2)                     # 12 items, the first 3 are sensitive
mechs = {"RR": ul.GRR(d, 1.0), "RAPPOR": ul.RAPPOR(d, 1.0), "uRR": ul.URR(d, sensitive, 1.0),
         "uRAP": ul.URAP(d, sensitive, 1.0)}
for name, m in mechs.items():
    r = ul.audit(m)                              # reads the exact channel matrix, never a sampler
    print(f"{name:7s} kind={r.kind:5s} ok={r.ok} eps={r.eps:.3f} (nominal {r.nominal_eps}) tight={r.tight}")'''),
        ("code", '''# Perturb n users and estimate their distribution.
n = 2_000 if SMALL else 200_000
p = np.random.default_rng(0).dirichlet(np.ones(d))
key_x, key_y = jax.random.split(jax.random.key(0))
xs = jax.random.choice(key_x, d, (n,), p=jnp.asarray(p))
ys = ul.perturb(key_y, mechs["uRR"], xs)
# emp is unbiased but not projected: its entries can be negative (and its TV above 1 at small eps);
# emp+thr (threshold, renormalise) and em (maximum likelihood) return distributions.
truth = jnp.asarray(np.bincount(xs, minlength=d) / n)            # the users' own histogram
for method in ("emp", "emp+thr", "em"):
    p_hat = ul.estimate(mechs["uRR"], ys, method)
    print(f"uRR {method:8s} TV distance (l1 / 2) to the users' histogram = {float(ul.metrics.tv(p_hat, truth)):.4f}"
          f"; smallest entry {float(p_hat.min()):+.4f}")'''),
        ("code", '''# A grid of epsilons is one batched mechanism; simulate() runs users x repetitions on device.
eps = jnp.array([0.5, 1.0, 2.0, 4.0])
reps = 2 if SMALL else 20
plt.figure(figsize=(5, 3.5))
for name, make in {"RR": lambda e: ul.GRR(d, e), "uRR": lambda e: ul.URR(d, sensitive, e),
                   "uRAP": lambda e: ul.URAP(d, sensitive, e)}.items():
    res = ul.simulate(jax.random.key(1), jax.vmap(make)(eps), p=p, n=n, reps=reps, methods=("emp",))  # [g, r, d]
    tv = ul.metrics.tv(res.estimates["emp"], jnp.asarray(res.target, jnp.float32)).mean(-1)
    plt.plot(eps, tv, "o-", label=name)
plt.xscale("log"); plt.yscale("log"); plt.xlabel("epsilon"); plt.ylabel(f"TV (l1 / 2), emp, mean of {reps} reps")
plt.legend(); plt.show()'''),
        ("code", '''# Closed-form utility (001 Props 15-19, 003, with docs/errata.md): expected squared l2 loss.
with jax.enable_x64(True):
    for name, m in mechs.items():
        print(f"{name:7s} E||p_hat - p||^2 = {float(ul.theory.mse(m, jnp.asarray(p), n)):.3e}")'''),
    ],
    "reproduce_001_fig5.ipynb": [
        ("md", "# Reproduce 001 Fig 5 (eps vs TV)\n\nRR / RAPPOR / uRR / uRAP with emp, emp+thr and EM on the "
               "synthetic Manhattan proxy (25x25 grid, 15 sensitive cells). `uldp demo` runs the same study from "
               "the command line. Pass a local Foursquare TIST2015 folder as `data=` to use the real check-ins."),
        ("code", INSTALL),
        ("code", '''import matplotlib.pyplot as plt
from uldp_jax import data, experiments
ds = data.get_dataset("foursquare")
print(ds.summary()); print(ds.description)
plt.imshow(ds.p.reshape(ds.shape), origin="lower", cmap="magma"); plt.title("proxy check-in density")
plt.colorbar(); plt.show()'''),
        ("code", '''out = experiments.run_experiment("demo", quick=SMALL, out="results", progress=not SMALL)'''),
        ("code", '''img = plt.imread(out["figures"][0])
plt.figure(figsize=(9, 5)); plt.imshow(img); plt.axis("off"); plt.show()'''),
        ("md", "Expected (001 §6.2): the utility-optimized mechanisms beat RR/RAPPOR by one to two orders of "
               "magnitude; uRR is close to *no privacy* at eps = ln d (bold line); emp+thr and EM beat emp."),
    ],
    "tuning_optax.ipynb": [
        ("md", "# Tuning mechanism parameters with optax\n\nThe closed-form MSE is differentiable in the "
               "mechanisms' continuous parameters, so optax can tune them: uRAP's theta (001 leaves it open; "
               "docs/errata.md#001-urap-with-any-theta-and-its-optimal-theta derives the optimum), uSS's k and uLH's g (integers settled exactly by `ul.tune`)."),
        ("code", INSTALL),
        ("code", '''import math, jax, jax.numpy as jnp, numpy as np, optax
import uldp_jax as ul
d, s, eps, theta_n = (60, 20, 5.0, 0.56) if SMALL else (1200, 424, 5.0, 0.56)
sens = tuple(range(s))
p = np.concatenate([np.full(s, (1 - theta_n) / s), np.full(d - s, theta_n / (d - s))])

# A hand-written optax loop on the logit of theta (an unconstrained leaf), float64 closed form.
with jax.enable_x64(True):
    pj = jnp.asarray(p)
    def log_mse(logit):
        return jnp.log(ul.theory.mse(ul.URAP(d, sens, eps, theta=jax.nn.sigmoid(logit)), pj, 1, model="fixed"))
    opt, x = optax.adam(0.05), jnp.asarray(0.0)
    state, step = opt.init(x), jax.jit(jax.value_and_grad(log_mse))
    for _ in range(100 if SMALL else 600):
        v, g = step(x)
        updates, state = opt.update(g, state)
        x = optax.apply_updates(x, updates)
e = math.exp(eps)
theta_star = 1 / (1 + math.sqrt((e * s - (1 - theta_n) * (e - 1)) / (e * (s + e - 1))))
default = ul.URAP(d, sens, eps)
print(f"default theta {float(default.theta):.4f}, optax {float(jax.nn.sigmoid(x)):.4f}, "
      f"closed form {theta_star:.4f}")'''),
        ("code", '''# The library's tuner does the same for every tunable mechanism (and re-audits small ones).
# Start from 001's default theta and from deliberately poor k and g.
for mech in (ul.URAP(d, sens, eps), ul.USS(d, sens, eps, k=s // 2, theta_n=theta_n),
             ul.ULH(d, sens, eps, g=2, theta_n=theta_n)):
    tuned = ul.tune(mech, p=p, steps=200 if SMALL else 1500)
    with jax.enable_x64(True):
        before, after = (float(ul.theory.mse(m, jnp.asarray(p), 1, model="fixed")) for m in (mech, tuned))
    print(f"{type(mech).__name__:5s} n*MSE {before:9.3f} -> {after:9.3f}  ({100 * (1 - after / before):4.1f}% lower)",
          {k: getattr(tuned, k) for k in ("theta", "k", "g") if hasattr(tuned, k)})'''),
        ("code", '''# Which mechanism should I use?  Ranked by corrected closed-form MSE, with communication cost.
for r in ul.recommend(d, sens, eps, theta_n=theta_n)[:5]:
    print(r)'''),
    ],
    "study.ipynb": [
        ("md", "# A Monte Carlo study with `ul.study`\n\nMechanisms as named factories of the swept parameters, "
               "one call over eps x n x repetitions, rows with mean, standard error, the closed-form theory and a "
               "z-score, a plot, and results saved in plain files (CSV for pandas; JSON + npz for `ul.StudyResult`)."),
        ("code", INSTALL),
        ("code", '''import numpy as np, jax
import uldp_jax as ul

d, S = (32, range(4)) if SMALL else (64, range(8))   # items, the first few sensitive
p = np.random.default_rng(0).dirichlet(np.ones(d))
res = ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(d, eps), "uRR": lambda eps: ul.URR(d, S, eps),
                                   "uRAP": lambda eps: ul.URAP(d, S, eps)},
               eps=[0.5, 1.0, 2.0, 4.0], n=[2_000, 20_000] if SMALL else [10_000, 100_000],
               reps=5 if SMALL else 30, methods=("emp", "emp+thr"), p=p, metrics=("mse", "l1"))
rows = res.rows()
print(len(rows), "rows: mechanism x eps x n x method x metric")
for r in rows[:6]:
    print({k: r[k] for k in ("mechanism", "eps", "n", "method", "metric", "mean", "se", "theory", "z")})'''),
        ("code", '''# The empirical estimator's MSE agrees with ul.theory: |z| stays small.
z = np.array([r["z"] for r in rows if r["method"] == "emp" and r["metric"] == "mse"], dtype=float)
print(f"emp / mse: {len(z)} points, max |z| = {np.nanmax(np.abs(z)):.2f}")
_ = res.plot("mse")   # error against eps per n, with standard-error bands'''),
        ("code", '''# Results that load anywhere: a plain CSV (pandas.read_csv needs no arguments) and a reloadable result.
import pandas as pd
res.to_csv("study.csv")
table = pd.read_csv("study.csv")
print(table.columns.tolist())
print(table.drop(columns=["compile_s", "run_s"]).head())  # the time columns differ from run to run
res.save("study")
again = ul.StudyResult.load("study")
print("reloaded:", len(again.rows()), "rows")'''),
    ],
    "context_aware_hr.ipynb": [
        ("md", "# Context-aware LDP with Hadamard Response (Acharya et al.)\n\nClassical HR (eps-LDP), high-low "
               "HR ((A, eps)-HLLDP: only the items in A are protected from each other) and block HR (block-"
               "structured LDP: items are protected within their block)."),
        ("code", INSTALL),
        ("code", '''import numpy as np, jax, jax.numpy as jnp
import matplotlib.pyplot as plt
import uldp_jax as ul
from uldp_jax import data

k, eps = 16, 1.0
blocks = tuple(tuple(range(i, i + 4)) for i in range(0, k, 4))
for m in (ul.HR(k, eps), ul.HighLowHR(k, (0, 1, 2), eps), ul.BlockHR(blocks, eps)):
    r = ul.audit(m)
    print(f"{type(m).__name__:10s} kind={r.kind:6s} ok={r.ok} eps={r.eps:.3f} eps as plain LDP={r.eps_ldp:.3g}")'''),
        ("code", '''# 004 Fig 2 in miniature: block-structured LDP needs far fewer users than classical LDP.
k = 64 if SMALL else 1000
p = data.geometric(k, 0.05 if SMALL else 0.01).p
ns = [1000, 4000] if SMALL else [1000 * 2**i for i in range(0, 10, 2)]
reps = 2 if SMALL else 10
mechs = {"HR (LDP)": ul.HR(k, eps)}
for m in ((4,) if SMALL else (10, 50)):
    ids = data.index_blocks(k, m)
    mechs[f"block HR, m={m}"] = ul.BlockHR(tuple(tuple(np.flatnonzero(ids == b).tolist()) for b in range(m)), eps)
plt.figure(figsize=(5, 3.5))
for name, mech in mechs.items():
    tv = []
    for i, n in enumerate(ns):
        res = ul.simulate(jax.random.key(i), mech, p=p, n=n, reps=reps, methods=("project",))
        tv.append(float(ul.metrics.tv(res.estimates["project"], jnp.asarray(p, jnp.float32)).mean()))
    plt.plot(ns, tv, "o-", label=name)
plt.xscale("log"); plt.yscale("log"); plt.xlabel("n"); plt.ylabel("TV"); plt.legend(); plt.show()'''),
        ("code", '''# Exact risks (docs/errata.md#004-exact-risks-of-the-hadamard-mechanisms): n * E||p_hat - p||^2 for each mechanism.
with jax.enable_x64(True):
    for name, mech in mechs.items():
        print(f"{name:16s} n*E l2^2 = {float(ul.theory.mse(mech, jnp.asarray(p), 1)):.2f}")'''),
    ],
}


def _cell(kind: str, text: str) -> dict:
    lines = text.split("\n")
    source = [ln + "\n" for ln in lines[:-1]] + [lines[-1]]
    if kind == "md":
        return {"cell_type": "markdown", "metadata": {}, "source": source}
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def _with_colab_link(name: str, cells: list) -> list:
    """The first (title) cell ends with an Open-in-Colab link to this notebook in the repository."""
    kind, text = cells[0]
    return [(kind, f"{text}\n\n[Open in Colab]({COLAB}{name})"), *cells[1:]]


def notebook(cells: list, name: str | None = None) -> dict:
    cells = _with_colab_link(name, cells) if name else cells
    return {"cells": [_cell(k, t) for k, t in cells],
            "metadata": {"accelerator": "GPU", "colab": {"provenance": []},
                         "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 4}


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        with open(os.path.join(HERE, name), "w") as fh:
            json.dump(notebook(cells, name), fh, indent=1)
            fh.write("\n")
        print("wrote", os.path.join(HERE, name))


if __name__ == "__main__":
    main()
