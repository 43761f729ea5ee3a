"""Benchmark against peers: users/second of one repetition (perturb + aggregate + estimate), same tasks.

Peers (the optional ``bench`` extra: ``pip install -e .[bench]``; pure-LDP also imports scikit-learn and
statsmodels at import time, and both peers hash ``str`` with xxhash, which xxhash >= 4 rejects, hence the extra
pins ``xxhash<4``): pure-LDP 1.2.0 (``DE`` = GRR, ``UE`` with
``use_oue``, ``LH`` with ``use_olh``; it has no subset selection) and multi-freq-ldpy 0.2.5 (``GRR``, ``UE``
optimal, ``LH`` optimal, ``SS``; its ``*_Aggregator_MI`` estimators). Both perturb one user per Python call, so
their cost is linear in n: each peer is timed on a subsample of the task's users, grown until it takes about
``--peer-budget`` seconds, and its users/s is that subsample's rate (stated as ``peer_n`` in the output).

uldp_jax: ``ul.simulate(key, mech, p=p, n=n, reps=1)`` warm (best of up to 3 calls; compilation reported
separately), on the
per-user path and, where exact (GRR, OUE, and SS in the iid model), on the count-level fast path
(``path="counts"``), plus ``counts-fused``: the same exact counts draw and the "emp" estimate as one jitted call
(median of 20; no eager work per call; what ``simulate``'s fixed per-call cost adds is the difference). OLH
aggregates in O(n d) vectorised work on the per-user path (no exact count path); SS's per-user path draws
``min(k, d - k) + 2`` exact uniform integers per user (Floyd's algorithm), its counts path scans the ``d``
items with binomials (``uldp_jax/mechanisms/subset/_ss_counts.py``). Per-user runs whose ``n x draws per user`` exceeds ``--max-draws`` are timed
at the largest n under it (reported as ``measured_at_n``; the per-user path's cost is linear in n, so users/s
carries over).

Tasks: GRR, OUE, OLH, SS x d in {625, 12800} x n in {10^5, 10^6}, eps = 1, iid model with a Zipf-like p.
Run: ``python experiments/benchmarks/bench_peers.py`` (prints a table, then JSON); ``--d``, ``--n``,
``--mechs`` restrict the grid.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import jax
import numpy as np

import uldp_jax as ul


def _peer_fns(name: str, d: int, eps: float) -> dict:
    """``{peer: run(xs) -> estimate}`` for the peers that implement ``name``; missing packages are skipped."""
    fns = {}
    try:
        from pure_ldp.frequency_oracles import direct_encoding, local_hashing, unary_encoding
    except ImportError:
        direct_encoding = None
    if direct_encoding is not None and name in ("GRR", "OUE", "OLH"):
        def pure(xs):
            if name == "GRR":
                cli, srv = direct_encoding.DEClient(eps, d), direct_encoding.DEServer(eps, d)
            elif name == "OUE":
                cli = unary_encoding.UEClient(eps, d, use_oue=True)
                srv = unary_encoding.UEServer(eps, d, use_oue=True)
            else:
                cli = local_hashing.LHClient(eps, d, use_olh=True)
                srv = local_hashing.LHServer(eps, d, use_olh=True)
            for x in xs:  # pure-LDP items are 1..d
                srv.aggregate(cli.privatise(int(x) + 1))
            return srv.estimate_all(range(1, d + 1), suppress_warnings=True)

        fns["pure-LDP"] = pure
    try:
        from multi_freq_ldpy.pure_frequency_oracles import GRR as mGRR
        from multi_freq_ldpy.pure_frequency_oracles import LH as mLH
        from multi_freq_ldpy.pure_frequency_oracles import SS as mSS
        from multi_freq_ldpy.pure_frequency_oracles import UE as mUE
    except ImportError:
        mGRR = None
    if mGRR is not None:
        def mfl(xs):
            xs = [int(x) for x in xs]
            if name == "GRR":
                return mGRR.GRR_Aggregator_MI([mGRR.GRR_Client(x, d, eps) for x in xs], d, eps)
            if name == "OUE":
                return mUE.UE_Aggregator_MI([mUE.UE_Client(x, d, eps, True) for x in xs], eps, True)
            if name == "OLH":
                return mLH.LH_Aggregator_MI([mLH.LH_Client(x, d, eps, True) for x in xs], d, eps, True)
            return mSS.SS_Aggregator_MI([mSS.SS_Client(x, d, eps) for x in xs], d, eps)

        fns["multi-freq-ldpy"] = mfl
    return fns


def time_peer(run, xs_all: np.ndarray, budget: float) -> tuple[float, int]:
    """users/s of ``run`` on a growing prefix of ``xs_all`` (until it takes ~``budget`` s)."""
    run(xs_all[:5])  # warm-up: numba compiles multi-freq-ldpy's SS client on first use
    m = 50
    while True:
        t = time.perf_counter()
        run(xs_all[:m])
        secs = time.perf_counter() - t
        if secs >= budget / 4 or m >= xs_all.size:
            return m / secs, m
        m = int(min(xs_all.size, m * max(2.0, budget / max(secs, 1e-3))))


def time_uldp(mech, p, n, path) -> tuple[float, float]:
    """(warm seconds, first-call seconds) of one repetition of ``ul.simulate``; warm = best of up to 3 calls
    (repeated only while a call takes under 2 s, so that a load spike on a shared machine does not count)."""
    run = lambda i: ul.simulate(jax.random.key(i), mech, p=p, n=n, reps=1, path=path).estimates[
        "emp"].block_until_ready()
    t = time.perf_counter()
    run(0)
    first = time.perf_counter() - t
    warm = []
    while len(warm) < 3 and (not warm or warm[-1] < 2.0):
        t = time.perf_counter()
        run(len(warm) + 1)
        warm.append(time.perf_counter() - t)
    return min(warm), first


def time_fused(mech, p, n) -> tuple[float, float]:
    """(warm seconds, first-call seconds) of one jitted call: exact counts draw + "emp" estimate."""
    with ul.fastpath.x64_context():
        pj = jax.numpy.asarray(p, jax.numpy.float64)

        @jax.jit
        def one(key, mech, n):
            stats = jax.numpy.round(ul.fastpath.sample_counts_iid(key, mech, n, pj)).astype(jax.numpy.int32)
            return ul.estimate_from_stats(mech, stats[None], n, "emp")

        nf = jax.numpy.float64(n)
        t = time.perf_counter()
        one(jax.random.key(0), mech, nf).block_until_ready()
        first = time.perf_counter() - t
        warm = []
        for i in range(20):
            t = time.perf_counter()
            one(jax.random.key(i + 1), mech, nf).block_until_ready()
            warm.append(time.perf_counter() - t)
        return float(np.median(warm)), first


def draws_per_user(name: str, mech) -> int:
    """Random draws per user of the per-user path (for ``--max-draws``)."""
    if name == "GRR":
        return 1
    if name == "SS":
        return min(mech.k, mech.d - mech.k) + 2
    return mech.d


def make_mech(name: str, d: int, eps: float):
    return {"GRR": lambda: ul.GRR(d, eps), "OUE": lambda: ul.OUE(d, eps), "OLH": lambda: ul.OLH(d, eps),
            "SS": lambda: ul.SS(d, eps)}[name]()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, nargs="+", default=[625, 12800])
    ap.add_argument("--n", type=int, nargs="+", default=[10**5, 10**6])
    ap.add_argument("--mechs", nargs="+", default=["GRR", "OUE", "OLH", "SS"])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--peer-budget", type=float, default=4.0)
    ap.add_argument("--max-draws", type=float, default=2e8,
                    help="per-user runs above n * (draws per user) draws are timed at a smaller n")
    args = ap.parse_args(argv)
    rows = []
    for d in args.d:
        w = 1.0 / np.arange(1, d + 1)
        p = w / w.sum()
        xs_all = np.asarray(jax.random.choice(jax.random.key(7), d, (max(args.n),), p=p))
        for name in args.mechs:
            mech = make_mech(name, d, args.eps)
            peers = {peer: time_peer(run, xs_all, args.peer_budget)
                     for peer, run in _peer_fns(name, d, args.eps).items()}
            for n in args.n:
                row = {"mech": name, "d": d, "n": n}
                for peer, (ups, m) in peers.items():
                    row[peer] = {"users_per_s": float(f"{ups:.3g}"), "peer_n": m}
                best_peer = max([v[0] for v in peers.values()], default=float("nan"))
                counts = ul.fastpath.has_count_path(mech, iid=True)  # the tasks use the iid model (p, n)
                paths = ["per_user"] + (["counts", "counts-fused"] if counts else [])
                for path in paths:
                    key = f"uldp_jax[{path}]"
                    n_run = n
                    if path == "per_user":  # O(n) work: above --max-draws, time a smaller n (same users/s)
                        n_run = int(min(n, max(1000, args.max_draws // draws_per_user(name, mech))))
                    if path == "counts-fused":
                        warm, first = time_fused(mech, p, n_run)
                    else:
                        warm, first = time_uldp(mech, p, n_run, path)
                    row[key] = {"users_per_s": float(f"{n_run / warm:.3g}"), "seconds": round(warm, 4),
                                "first_call_s": round(first, 2),
                                "x_best_peer": float(f"{n_run / warm / best_peer:.3g}")}
                    if n_run < n:
                        row[key]["measured_at_n"] = n_run
                rows.append(row)
                print(_fmt(row), flush=True)
    out = {"device": str(jax.devices()[0]), "eps": args.eps, "loadavg": [round(v, 2) for v in os.getloadavg()],
           "peers": _peer_versions(), "rows": rows}
    print(json.dumps(out, indent=1))
    return out


def _peer_versions() -> dict:
    """Installed versions of the peers and of the packages they need (``None``: missing)."""
    from importlib import metadata

    out = {}
    for dist in ("pure-ldp", "multi-freq-ldpy", "xxhash", "scikit-learn", "statsmodels"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _fmt(row: dict) -> str:
    cells = [f"{row['mech']:>4} d={row['d']:<6} n={row['n']:<8}"]
    for k, v in row.items():
        if isinstance(v, dict):
            extra = f" ({v['x_best_peer']}x peer)" if "x_best_peer" in v else ""
            extra += f" [measured at n={v['measured_at_n']}]" if "measured_at_n" in v else ""
            cells.append(f"{k}: {v['users_per_s']:.3g} users/s{extra}")
    return " | ".join(cells)


if __name__ == "__main__":
    main()
