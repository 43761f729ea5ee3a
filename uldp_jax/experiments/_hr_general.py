"""The general Hadamard response (``ul.HadamardResponse``, any eps) against 004's high-privacy HR (``ul.HR``) and
pure-LDP's HR, at eps = 1, 2, 4, 6.

Risk is :math:`n\\,E\\ell_2^2` of the unbiased estimators in the iid model (each user drawn from ``p``), exact from
the closed forms; the library's two mechanisms are also simulated (one ``ul.study`` per distribution and d, iid
model, the eps grid as data) and every
simulated mean is tested against its closed form (two-sided z-tests, family level 0.05, ``_claims.agree``).

pure-LDP's HR (``HadamardResponseClient/Server``, pure-LDP 1.2.0, the authors' ``k2k_hadamard`` code) uses the
high-privacy scheme (= ``ul.HR``) for eps <= 1 and, for eps > 1, ``Hadamard_Rand_general_original``: the
authors' blocks ``B = 2^floor(log2 min(2d, e^eps))`` (``mechanisms.hadamard._general_forms.authors_blocks``)
after a uniformly random permutation of the items. Its risk is computed exactly from that algorithm: per item
:math:`c(2 + (e^\\varepsilon-1) p(\\mathcal X_j))/(e^\\varepsilon-1)^2 - p_x^2` (the same estimator), averaged over
the permutation, where :math:`E\\,p(\\mathcal X_j) = k_j/d`. ``experiments/hr-general/check_pureldp.py`` checks this
against pure-LDP's own code (its channel and decoder enumerated exactly).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax import data as _data
from uldp_jax.experiments import _claims, _common, _plot
from uldp_jax.experiments._runner import Context, Experiment, Report, format_table, register
from uldp_jax.mechanisms.hadamard import _general_forms as _ghr

HR_LABEL, GHR_LABEL, PURE_LABEL, AUTH_LABEL = ("HR (one block, ul.HR)", "HadamardResponse (default B)",
                                               "pure-LDP HR", "HadamardResponse (authors' B)")
_COLOR = {HR_LABEL: "HR", GHR_LABEL: "GHR", PURE_LABEL: "pure-LDP HR", AUTH_LABEL: "GHR authors"}


def _dist(name: str, d: int) -> np.ndarray:
    if name == "uniform":
        return _data.uniform(d).p
    return _data.zipf(d, float(name.split(":")[1])).p


def pure_ldp_risk(eps: float, p: np.ndarray) -> float:
    """n E l2^2 (iid) of pure-LDP's HR, exact, averaged over its random item permutation (see module doc)."""
    d = p.shape[0]
    if eps <= 1.0:
        return float(ul.theory.hr_l2_risk(eps, jnp.asarray(p)))
    B = _ghr.authors_blocks(d, eps)
    block, _, _ = _ghr.layout(d, B)
    k = np.bincount(block, minlength=B).astype(np.float64)
    e = np.exp(eps)
    c = 2 * B - 1 + e
    return float(c * (2 * d + (e - 1) * np.sum(k**2) / d) / (e - 1) ** 2 - np.sum(p**2))


def _simulated(key, d: int, eps_grid: list, p: np.ndarray, n: int, reps: int) -> dict:
    """``{(label, eps): (mean, se)}`` of ``n l2^2`` for the library's two mechanisms: one ``ul.study`` (iid model,
    emp) over eps; the study's own theory (exact per-item variances) must agree with the closed forms."""
    res = ul.study(key, {HR_LABEL: lambda eps: ul.HR(d, eps), GHR_LABEL: lambda eps: ul.HadamardResponse(d, eps)},
                   eps=eps_grid, n=[n], reps=reps, p=p, metrics=("l2",))
    return {(r["mechanism"], r["eps"]): (n * r["mean"], n * r["se"], n * r["theory"]) for r in res.rows()}


def figure(rows: list):
    """The figure from the rows ``run`` writes (also from a committed CSV's rows): one panel per distribution and
    d, n E l2^2 against eps, one line per mechanism and method (theory solid, pure-LDP dashed, simulated dotted)."""
    panels = []
    for key in dict.fromkeys((r["distribution"], int(r["d"])) for r in rows):
        sel = [r for r in rows if (r["distribution"], int(r["d"])) == key]
        lines = []
        for lab, meth in dict.fromkeys((r["mechanism"], r["method"]) for r in sel):
            pts = sorted((float(r["eps"]), float(r["value"])) for r in sel
                         if r["mechanism"] == lab and r["method"] == meth)
            lines.append((f"{lab} ({meth})", _COLOR[lab], "theory (dashed)" if lab == PURE_LABEL else meth,
                          [x for x, _ in pts], [y for _, y in pts]))
        panels.append((f"{key[0]}, d={key[1]}", lines))
    return _plot.line_panels(panels, "eps", "n E l2^2 (iid)", logx=False,
                             suptitle="Hadamard response: one block (004's HR) vs the general scheme vs pure-LDP; "
                                      "solid/dashed: exact risk; dotted: simulated (emp)")


def run(cfg: dict, ctx: Context) -> Report:
    n, reps, eps_grid = cfg["n"], cfg["reps"], [float(e) for e in cfg["eps"]]
    rows, notes, checks = [], [], []
    total = len(cfg["distributions"]) * len(cfg["d"]) * len(eps_grid)
    with _common.progress(total, "HR general", ctx.progress) as bar:
        for di, dname in enumerate(cfg["distributions"]):
            for ki, d in enumerate(cfg["d"]):
                p = _dist(dname, d)
                sim = _simulated(ctx.key(di, ki), d, eps_grid, p, n, reps)
                for eps in eps_grid:
                    mechs = {HR_LABEL: ul.HR(d, eps), GHR_LABEL: ul.HadamardResponse(d, eps)}
                    B_auth = _ghr.authors_blocks(d, eps)
                    theory = {HR_LABEL: float(ul.theory.hr_l2_risk(eps, jnp.asarray(p))),
                              GHR_LABEL: float(_ghr.l2_risk(eps, jnp.asarray(p), mechs[GHR_LABEL].num_blocks)),
                              AUTH_LABEL: float(_ghr.l2_risk(eps, jnp.asarray(p), B_auth)),
                              PURE_LABEL: pure_ldp_risk(eps, p)}
                    blocks = {HR_LABEL: 1, GHR_LABEL: mechs[GHR_LABEL].num_blocks, AUTH_LABEL: B_auth,
                              PURE_LABEL: 1 if eps <= 1 else B_auth}
                    base = dict(distribution=dname, d=d, eps=eps, metric="n_l2sq_iid", n=n)
                    for lab, val in theory.items():
                        rows.append(dict(base, mechanism=lab, method="theory", value=val, se=0.0, reps="",
                                         num_blocks=blocks[lab]))
                    for lab in mechs:
                        mean, se, study_theory = sim[(lab, eps)]
                        if not np.isclose(study_theory, theory[lab], rtol=1e-6):
                            raise AssertionError(f"{lab} eps={eps}: study theory {study_theory} != {theory[lab]}")
                        rows.append(dict(base, mechanism=lab, method="emp", value=mean, se=se, reps=reps,
                                         num_blocks=blocks[lab]))
                        checks.append((mean, theory[lab], se))
                    bar.update(1, f"{dname} d={d} eps={eps}")
    bad, k, crit = _claims.agree(*zip(*checks))
    notes.append(f"Simulated mean = closed form (n = {n}, {reps} repetitions, iid model): two-sided z-tests, family "
                 f"level {_claims.LEVEL:g} with Bonferroni over {k} settings (|z| > {crit:.2f} rejects): {bad} "
                 "rejected.")
    th = {(r["distribution"], r["d"], r["eps"], r["mechanism"]): r["value"] for r in rows if r["method"] == "theory"}
    for dname in cfg["distributions"]:
        for d in cfg["d"]:
            parts = [f"eps={e:g}: {th[(dname, d, e, GHR_LABEL)] / th[(dname, d, e, HR_LABEL)]:.3f}x ul.HR, "
                     f"{th[(dname, d, e, GHR_LABEL)] / th[(dname, d, e, PURE_LABEL)]:.3f}x pure-LDP HR"
                     for e in eps_grid]
            notes.append(f"{dname}, d={d}: exact risk of HadamardResponse (default B) = " + "; ".join(parts) + ".")
    fig = figure(rows)
    table = format_table([r for r in rows if r["method"] == "theory"], ("distribution", "d", "mechanism"), "eps")
    return Report(rows, {"hr_general_risk": fig}, table, notes,
                  f"sampling model: iid (each of the n users drawn from p), scored against p; exact risks in the same "
                  f"model. d in {cfg['d']}, eps in {eps_grid}, n = {n}, {reps} repetitions")


_FULL = dict(d=[16, 128, 1024], eps=[1.0, 2.0, 4.0, 6.0], distributions=["uniform", "zipf:1.1"], n=100_000,
             reps=200)
_QUICK = dict(_FULL, d=[16], n=10_000, reps=30)

def _distribution_name(v) -> str | None:
    """``None`` for a name ``_dist`` reads ("uniform", "zipf:<s>" with s > 0), else what is expected."""
    ok = v == "uniform"
    if isinstance(v, str) and v.startswith("zipf:"):
        try:
            ok = math.isfinite(float(v[5:])) and float(v[5:]) > 0
        except ValueError:
            ok = False
    return None if ok else "'uniform' or 'zipf:<s>' with s > 0"


_CHOICES = dict(distributions=_distribution_name, n=lambda v: None if v >= 1 else "an integer >= 1",
                reps=lambda v: None if v >= 2 else "an integer >= 2 (a standard error needs two repetitions)")

register(Experiment("hr-general", "General Hadamard response (any eps) vs 004's HR and pure-LDP's HR, n E l2^2",
                    _FULL, _QUICK, run, takes_data=False, choices=_CHOICES))
