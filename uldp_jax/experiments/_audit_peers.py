"""``audit-peers``: ``ul.audit_sampler`` on other libraries' LDP clients, claimed eps against audited eps.

Peers (the ``bench`` extra, plus pure-LDP 1.1.2 in a separate directory): pure-LDP 1.2.0's DE, SUE, OUE, OLH, HR and
RAPPOR clients; pure-LDP 1.1.2's SUE and OUE (the unary-encoding defect LDP-Auditor found, pure-LDP issue #11);
multi-freq-ldpy's GRR, SUE, OUE, BLH, OLH, SS and THE clients; zitengsun/hadamard_response's subset selection, the
faithful ``encode_symbol`` and the fast ``encode_string_fast`` (ported in ``_audit_peer_ports``: that code is no
package).

Every package client runs in a subprocess (its own interpreter, ``sys.path`` led by the directories in the
environment variable ``ULDP_AUDIT_PEER_PATH``, and for pure-LDP 1.1.2 by ``ULDP_AUDIT_PURE_LDP_112``, a directory
made with ``pip install --target DIR --no-deps pure-ldp==1.1.2``; its global NumPy/``random`` generators are seeded
there, never in this process), which writes ``trials / 2`` reports of each of the
two tested inputs ``0`` and ``d - 1`` (LDP-Auditor's pair) in a canonical form: an ``int`` item, or the items a report
supports (``bool[d]``: UE bits; a hashed report's ``H_seed(j) == v``; a subset; THE's ``report > threshold``; RAPPOR's
Bloom bits of ``j`` all set). The audit then replays them as a vectorised Python callable. A package that does not
import is reported as such, with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any, NamedTuple

import jax
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _audit_peer_ports as ports
from uldp_jax.experiments import _common, _plot
from uldp_jax.experiments._runner import Context, Experiment, Report, register

_HEAD = """
import json, random, sys
import numpy as np
cfg = json.loads(sys.argv[1])
sys.path[:0] = cfg["path"]
np.random.seed(cfg["seed"]); random.seed(cfg["seed"])
eps, d = cfg["eps"], cfg["d"]
from importlib import metadata
"""
_TAIL = """
CLAIM = globals().get("CLAIM", eps)
out = {str(x): np.asarray([perturb(int(x)) for _ in range(cfg["n"])]) for x in cfg["inputs"]}
np.savez(cfg["out"], version=VERSION, claimed=CLAIM, **out)
"""
_PL = "VERSION = metadata.version('pure-ldp')\nimap = lambda x: x\n"
_MFL = "VERSION = metadata.version('multi-freq-ldpy')\n"
_SUPPORT_LH = ("import xxhash\n"
               "def support(v, seed, g):\n"
               "    return np.array([xxhash.xxh32(str(j), seed=int(seed)).intdigest() % g == v for j in range(d)])\n")


class Peer(NamedTuple):
    name: str  # row label
    package: str  # "pure-ldp", "multi-freq-ldpy", "zitengsun/hadamard_response (port)"
    setup: str  # subprocess code defining perturb(x) -> int | bool[d] and VERSION (and CLAIM, where not eps)
    path_key: str = "bench"  # which peer_path entry leads sys.path: "bench" or "pure_ldp_112"


def _ue(module: str, oue: bool) -> str:
    return (_PL + f"from {module} import UEClient\n"
            f"c = UEClient(eps, d, use_oue={oue}, index_mapper=imap)\n"
            "perturb = lambda x: c.privatise(x).astype(bool)\n")


PEERS = [
    Peer("pure-LDP DE", "pure-ldp", _PL + "from pure_ldp.frequency_oracles.direct_encoding import DEClient\n"
         "c = DEClient(eps, d, index_mapper=imap)\nperturb = c.privatise\n"),
    Peer("pure-LDP SUE", "pure-ldp", _ue("pure_ldp.frequency_oracles.unary_encoding", False)),
    Peer("pure-LDP OUE", "pure-ldp", _ue("pure_ldp.frequency_oracles.unary_encoding", True)),
    Peer("pure-LDP OLH", "pure-ldp", _PL + _SUPPORT_LH + "from pure_ldp.frequency_oracles.local_hashing import "
         "LHClient\nc = LHClient(eps, d, use_olh=True, index_mapper=imap)\n"
         "perturb = lambda x: support(*c.privatise(x), c.g)\n"),
    Peer("pure-LDP HR", "pure-ldp", _PL + "from pure_ldp.frequency_oracles.hadamard_response import "
         "HadamardResponseServer, HadamardResponseClient\ns = HadamardResponseServer(eps, d, index_mapper=imap)\n"
         "c = HadamardResponseClient(eps, d, s.get_hash_funcs(), index_mapper=imap)\nperturb = c.privatise\n"),
    Peer("pure-LDP RAPPOR", "pure-ldp", _PL + "from pure_ldp.frequency_oracles.rappor import RAPPORServer, "
         "RAPPORClient\nm, k = 4 * d, 1\n"
         "f = round(1 / (0.5 * np.exp(eps / 2) + 0.5), 2)  # RAPPORClient.convert_eps_to_f (one hash function)\n"
         "s = RAPPORServer(f, m, k, d, num_of_cohorts=1, index_mapper=imap)\nfuncs = s.get_hash_funcs()\n"
         "c = RAPPORClient(f, m, funcs, num_of_cohorts=1, index_mapper=imap)\n"
         "CLAIM = c.convert_f_to_eps(f, k)\n"
         "def perturb(x):\n    bits, cohort = c.privatise(x)\n"
         "    return np.array([all(bits[h(str(j))] for h in funcs[cohort]) for j in range(d)])\n"),
    Peer("pure-LDP 1.1.2 SUE", "pure-ldp", _ue("pure_ldp.frequency_oracles.unary_encoding", False),
         "pure_ldp_112"),
    Peer("pure-LDP 1.1.2 OUE", "pure-ldp", _ue("pure_ldp.frequency_oracles.unary_encoding", True),
         "pure_ldp_112"),
    Peer("multi-freq-ldpy GRR", "multi-freq-ldpy", _MFL + "from multi_freq_ldpy.pure_frequency_oracles.GRR import "
         "GRR_Client\nperturb = lambda x: int(GRR_Client(x, d, eps))\n"),
    Peer("multi-freq-ldpy SUE", "multi-freq-ldpy", _MFL + "from multi_freq_ldpy.pure_frequency_oracles.UE import "
         "UE_Client\nperturb = lambda x: UE_Client(x, d, eps, False).astype(bool)\n"),
    Peer("multi-freq-ldpy OUE", "multi-freq-ldpy", _MFL + "from multi_freq_ldpy.pure_frequency_oracles.UE import "
         "UE_Client\nperturb = lambda x: UE_Client(x, d, eps, True).astype(bool)\n"),
    Peer("multi-freq-ldpy BLH", "multi-freq-ldpy", _MFL + _SUPPORT_LH + "from multi_freq_ldpy.pure_frequency_oracles"
         ".LH import LH_Client\nperturb = lambda x: support(*LH_Client(x, d, eps, False), 2)\n"),
    Peer("multi-freq-ldpy OLH", "multi-freq-ldpy", _MFL + _SUPPORT_LH + "from multi_freq_ldpy.pure_frequency_oracles"
         ".LH import LH_Client\ng = int(round(np.exp(eps))) + 1\n"
         "perturb = lambda x: support(*LH_Client(x, d, eps, True), g)\n"),
    Peer("multi-freq-ldpy SS", "multi-freq-ldpy", _MFL + "from multi_freq_ldpy.pure_frequency_oracles.SS import "
         "SS_Client\ndef perturb(x):\n    v = np.zeros(d, bool)\n    v[np.asarray(SS_Client(x, d, eps))] = True\n"
         "    return v\n"),
    Peer("multi-freq-ldpy THE", "multi-freq-ldpy", _MFL + "from scipy.optimize import minimize_scalar\n"
         "from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Client, find_tresh\n"
         "t = minimize_scalar(find_tresh, bounds=[0.5, 1], method='bounded', args=(eps)).x\n"
         "perturb = lambda x: HE_Client(x, d, eps) > t\n"),
]
PORTS = {"zitengsun SS (encode_symbol)": ports.zitengsun_ss_faithful,
         "zitengsun SS (encode_string_fast)": ports.zitengsun_ss_fast}
ZITENGSUN = "zitengsun/hadamard_response (ported)"


def _pool(peer: Peer, eps: float, d: int, n: int, seed: int, path: list[str]) -> tuple[dict, str, float]:
    """Runs the peer's client in a subprocess: ``{x: reports}``, its version and claimed eps."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "pool.npz")
        cfg = dict(eps=eps, d=d, n=n, seed=seed, inputs=[0, d - 1], out=out, path=path)
        proc = subprocess.run([sys.executable, "-c", _HEAD + peer.setup + _TAIL, json.dumps(cfg)],
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
            raise ImportError(last)
        z = np.load(out)
        return {x: z[str(x)] for x in (0, d - 1)}, str(z["version"]), float(z["claimed"])


def _replay(pools: dict):
    """A vectorised callable that hands out each input's pre-drawn reports in order (iid reports, replayed)."""
    pos = dict.fromkeys(pools, 0)

    def sampler(xs):
        xs = np.asarray(xs)
        first = next(iter(pools.values()))
        out = np.empty((xs.size,) + first.shape[1:], first.dtype)
        for x in np.unique(xs):
            sel = xs == x
            k = int(sel.sum())
            out[sel] = pools[int(x)][pos[int(x)]:pos[int(x)] + k]
            pos[int(x)] += k
        return out

    return sampler


def _ported_pool(fn, eps: float, d: int, n: int, seed: int) -> dict:
    perturb = fn(eps, d, np.random.default_rng(seed))
    if fn is ports.zitengsun_ss_fast:
        return {x: perturb(np.full(n, x)) for x in (0, d - 1)}
    return {x: np.asarray([perturb(x) for _ in range(n)]) for x in (0, d - 1)}


def _row(name, package, version, eps, d, trials, res=None, note=""):
    base = dict(peer=name, package=package, version=version, eps=eps, d=d, trials=trials, metric="eps_lower")
    if res is None:
        return dict(base, value="", claimed="", confidence="", ok="", verdict=note, pair="", event="",
                    eps_point="", eps_point_se="")
    point, se = res.eps_point
    return dict(base, value=res.eps_lower, claimed=res.claimed, confidence=res.confidence, ok=res.ok,
                verdict=res.verdict, pair=f"{res.pair}", event=str(res.event),
                eps_point=point if np.isfinite(point) else "", eps_point_se=se if np.isfinite(se) else "")


PEER_PATH_ENV = "ULDP_AUDIT_PEER_PATH"  # directories (os.pathsep-separated) put first on the peers' sys.path
PURE_LDP_112_ENV = "ULDP_AUDIT_PURE_LDP_112"  # a directory holding pure-ldp 1.1.2 (pip install --target DIR)


def _env_path(name: str) -> list[str]:
    return [p for p in os.environ.get(name, "").split(os.pathsep) if p]


def run(cfg: dict, ctx: Context) -> Report:
    d, trials, conf = int(cfg["d"]), int(cfg["trials"]), float(cfg["confidence"])
    n = trials // 2
    path = {"bench": _env_path(PEER_PATH_ENV), "pure_ldp_112": _env_path(PURE_LDP_112_ENV) + _env_path(PEER_PATH_ENV)}
    chosen = [p for p in PEERS if p.name in cfg["peers"]]
    ported = [name for name in PORTS if name in cfg["peers"]]
    rows, results = [], {}
    total = len(cfg["eps"]) * (len(chosen) + len(ported))
    with _common.progress(total, "audit-peers", ctx.progress) as bar:
        for ei, eps in enumerate(cfg["eps"]):
            todo = [(p.name, p.package, p) for p in chosen] + [(nm, ZITENGSUN, PORTS[nm]) for nm in ported]
            for pi, (name, package, peer) in enumerate(todo):
                seed = int(ctx.seed * 1000 + ei * 100 + pi)
                try:
                    if isinstance(peer, Peer):
                        pools, version, claimed = _pool(peer, float(eps), d, n, seed, path[peer.path_key])
                    else:
                        pools, version, claimed = _ported_pool(peer, float(eps), d, n, seed), "ported", float(eps)
                except (ImportError, subprocess.TimeoutExpired) as err:
                    rows.append(_row(name, package, "", eps, d, trials, note=f"not run: {err}"))
                    bar.update(1, name)
                    continue
                events = "outputs" if pools[0].ndim == 1 else "support"
                res = ul.audit_sampler(ctx.key(ei, pi), _replay(pools), spec=claimed, d=d, trials=2 * n,
                                       inputs=(0, d - 1), vectorized=True, events=events, confidence=conf,
                                       progress=False, name=f"{name} {version}")
                results[(name, eps)] = res
                rows.append(_row(name, package, version, eps, d, 2 * n, res))
                bar.update(1, name)
    return Report(rows, {"audit_peers": _figure(rows, cfg["eps"]), "audit_peers_curves": _curves(results)},
                  _table(rows), _notes(rows, conf),
                  f"sampling model: each peer's own client, {n} reports of each of the inputs 0 and {d - 1} (d = {d}), "
                  f"a fifth of them to choose the event, the rest to bound it")


def _table(rows: list) -> str:
    lines = [f"{'peer':<36} {'version':<8} {'eps':>5} {'claimed':>8} {'audited':>9}  verdict"]
    for r in rows:
        aud = "" if r["value"] == "" else f"{float(r['value']):.4g}"
        cl = "" if r["claimed"] == "" else f"{float(r['claimed']):.4g}"
        lines.append(f"{r['peer']:<36} {r['version']:<8} {r['eps']:>5} {cl:>8} {aud:>9}  {r['verdict']}")
    return "\n".join(lines)


def _notes(rows: list, conf: float) -> list:
    bad = [r for r in rows if r["ok"] is False]
    out = [f"Claimed vs audited eps (lower bounds at confidence {conf:g}); {len(bad)} of "
           f"{sum(r['ok'] != '' for r in rows)} audited clients violate their claim."]
    out += [f"{r['peer']} ({r['package']} {r['version']}), eps={r['eps']}: audited {float(r['value']):.4g} > claimed "
            f"{float(r['claimed']):.4g}" for r in bad]
    out += [f"{r['peer']}: {r['verdict']}" for r in rows if r["ok"] == ""]
    return out


@_plot._or_nofigure
def _figure(rows: list, eps_grid: list):
    plt = _plt()
    done = [r for r in rows if r["value"] != ""]
    labels = sorted(dict.fromkeys(r["peer"] for r in done), key=[r["peer"] for r in done].index)
    fig, axes = plt.subplots(1, len(eps_grid), figsize=(2 + 0.45 * len(labels) * len(eps_grid), 3.8), squeeze=False)
    for ax, eps in zip(axes[0], eps_grid):
        sel = {r["peer"]: r for r in done if r["eps"] == eps}
        xs = [i for i, lab in enumerate(labels) if lab in sel]
        vals = [float(sel[labels[i]]["value"]) for i in xs]
        claims = [float(sel[labels[i]]["claimed"]) for i in xs]
        colors = ["tab:red" if sel[labels[i]]["ok"] is False else "tab:blue" for i in xs]
        ax.bar(xs, np.minimum(vals, 3 * max(claims + [1.0])), color=colors, label="audited (lower bound)")
        ax.plot(xs, claims, "_", color="black", ms=14, mew=2.5, label="claimed")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_title(f"eps = {eps:g} (red: violates the claim)", fontsize=9)
        ax.set_ylabel("eps")
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


@_plot._or_nofigure
def _curves(results: dict):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for (name, eps), res in results.items():
        n, e = res.curve
        ax.plot(n, np.maximum(e, 0.0), marker=".", label=f"{name}, eps={eps:g}")
    ax.set_xscale("log")
    ax.set_xlabel("reports drawn")
    ax.set_ylabel("empirical eps lower bound")
    ax.legend(fontsize=6, ncol=2, frameon=False)
    fig.tight_layout()
    return fig


def _plt():
    return _plot._plt()


_ALL = [p.name for p in PEERS] + list(PORTS)
_FULL = dict(peers=_ALL, eps=[1.0, 5.0], d=16, trials=1_000_000, confidence=0.99)
_QUICK = dict(_FULL, peers=list(PORTS) + ["pure-LDP DE"], eps=[1.0], trials=20_000)

register(Experiment("audit-peers", "ul.audit_sampler on pure-LDP, multi-freq-ldpy and zitengsun's clients: claimed "
                    "vs audited eps", _FULL, _QUICK, run, takes_data=False))
