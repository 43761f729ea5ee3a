"""Benchmark of issue 49's frequency oracles against the fastest outside Python code: THE, SHE, the one-bit
Hadamard mechanism (HM) and Apple's sketches CMS and HCMS (``k = 16`` hash functions into ``m = 1024`` cells), one
repetition of perturb + aggregate + estimate, n = 10^6, d = 1024, eps = 2.

Peers (the ``bench`` extra): pure-LDP 1.2.0 ``HEClient``/``HEServer`` (``use_the=True`` for THE),
``HadamardMechClient``/``HadamardMechServer`` with ``t=1`` and ``CMSClient``/``CMSServer`` (``is_hadamard`` for
HCMS; its server's base class calls ``np.zeros(None)``, which NumPy 2 refuses, so the run patches that one call).
multi-freq-ldpy 0.2.5's ``HE_Client`` needs numba, which this machine lacks; where it is installed it is timed too.
Peers perturb one user per Python call, so each is timed on a growing subsample (``bench_peers.time_peer``) and
reported as users/s with the subsample (``peer_n``).

uldp_jax: ``ul.simulate(key, mech, p=p, n=n, reps=1)`` warm (``bench_peers.time_uldp``) on the per-user path (timed
at ``--max-draws / d`` users when ``n d`` exceeds it: the path is linear in n) and on the exact counts path
(``path="counts"``: THE's independent binomials, SHE's Gamma-difference law, HM's multinomial over its ``2K``
cells, CMS's users per sketch cell then two binomials a cell, HCMS's multinomial over its ``2 k m`` cells). CMS's
per-user path draws each repetition's ``k x m`` sketch counts (``reports().sample``, the reports' law) instead of
``n x m`` bits.

Run: ``python experiments/benchmarks/bench_peers_oracles.py`` (quiet machine; ``--n 100000 --peer-budget 2`` for
a reduced run); prints one line per row, then JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import jax
import numpy as np

import uldp_jax as ul

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_peers import _peer_versions, time_peer, time_uldp  # noqa: E402


SKETCH = dict(k=16, m=1024)  # CMS/HCMS's hash functions and cells, ours and pure-LDP's


class _NoneShapeNumpy:
    """NumPy for pure-LDP's ``FreqOracleServer``: sketch servers pass ``d=None`` to ``np.zeros``; NumPy 2 refuses."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def zeros(shape, *args, **kwargs):
        return np.zeros(0 if shape is None else shape, *args, **kwargs)


def _pure_ldp(name: str, d: int, eps: float):
    try:
        from pure_ldp.frequency_oracles.hadamard_mechanism import HadamardMechClient, HadamardMechServer
        from pure_ldp.frequency_oracles.histogram_encoding import HEClient, HEServer
        from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
        import pure_ldp.core._freq_oracle_server as server_base
    except ImportError:
        return None
    server_base.np = _NoneShapeNumpy()

    def run(xs):
        if name in ("CMS", "HCMS"):
            srv = CMSServer(eps, SKETCH["k"], SKETCH["m"], is_hadamard=name == "HCMS")
            cli = CMSClient(eps, srv.get_hash_funcs(), SKETCH["m"], is_hadamard=name == "HCMS")
        elif name == "HM":
            cli, srv = HadamardMechClient(eps, d, t=1), HadamardMechServer(eps, d, t=1)
        else:
            cli, srv = HEClient(eps, d), HEServer(eps, d, use_the=(name == "THE"))
        for x in xs:  # pure-LDP items are 1..d
            srv.aggregate(cli.privatise(int(x) + 1))
        return srv.estimate_all(range(1, d + 1), suppress_warnings=True)

    return run


def _multi_freq(name: str, d: int, eps: float):
    if name in ("HM", "CMS", "HCMS"):
        return None
    try:
        from multi_freq_ldpy.pure_frequency_oracles import HE
    except ImportError:
        return None
    return lambda xs: HE.HE_Aggregator_MI([HE.HE_Client(int(x), d, eps) for x in xs], d, eps,
                                          use_thresh=(name == "THE"))


def make_mech(name: str, d: int, eps: float):
    return {"THE": lambda: ul.THE(d, eps), "SHE": lambda: ul.SHE(d, eps), "HM": lambda: ul.HM(d, eps),
            "CMS": lambda: ul.CMS(d, eps, **SKETCH), "HCMS": lambda: ul.HCMS(d, eps, **SKETCH)}[name]()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--eps", type=float, default=2.0)
    ap.add_argument("--mechs", nargs="+", default=["THE", "SHE", "HM", "CMS", "HCMS"])
    ap.add_argument("--peer-budget", type=float, default=4.0)
    ap.add_argument("--max-draws", type=float, default=2e8)
    args = ap.parse_args(argv)
    d, n = args.d, args.n
    w = 1.0 / np.arange(1, d + 1)
    p = w / w.sum()
    xs_all = np.asarray(jax.random.choice(jax.random.key(7), d, (n,), p=p))
    rows = []
    for name in args.mechs:
        mech = make_mech(name, d, args.eps)
        row = {"mech": name, "d": d, "n": n, "eps": args.eps}
        peers = {k: f for k, f in (("pure-LDP", _pure_ldp(name, d, args.eps)),
                                   ("multi-freq-ldpy", _multi_freq(name, d, args.eps))) if f is not None}
        for peer, run in peers.items():
            ups, m = time_peer(run, xs_all, args.peer_budget)
            row[peer] = {"users_per_s": float(f"{ups:.3g}"), "peer_n": m}
        best = max([v["users_per_s"] for k, v in row.items() if isinstance(v, dict)], default=float("nan"))
        for path in ("per_user", "counts"):
            n_run = n if path == "counts" else int(min(n, max(1000, args.max_draws // d)))
            warm, first = time_uldp(mech, p, n_run, path)
            row[f"uldp_jax[{path}]"] = {"users_per_s": float(f"{n_run / warm:.3g}"), "seconds": round(warm, 4),
                                        "first_call_s": round(first, 2), "x_best_peer": float(f"{n_run / warm / best:.3g}"),
                                        **({"measured_at_n": n_run} if n_run < n else {})}
        rows.append(row)
        print(" | ".join([f"{name} d={d} n={n}"] + [f"{k}: {v['users_per_s']:.3g} users/s"
                                                  + (f" ({v['x_best_peer']}x peer)" if "x_best_peer" in v else "")
                                                  for k, v in row.items() if isinstance(v, dict)]), flush=True)
    out = {"device": str(jax.devices()[0]), "loadavg": [round(v, 2) for v in os.getloadavg()],
           "peers": _peer_versions(), "rows": rows}
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
