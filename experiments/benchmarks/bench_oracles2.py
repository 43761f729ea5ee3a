"""Benchmark of uBD and PGR (issue 49, part 2) against their outside implementations, plus the issue's two targets.

1. End to end (perturb + aggregate + "emp" estimate, one repetition, warm, best of 3): n = 1e6 users, d = 1024,
   eps = 2, a Zipf-like p. PGR beside minilek/private_frequency_oracles' C++ (``run`` of a harness built from a
   checkout given with ``--minilek DIR``: it times ``local_randomizer`` for every user and ``estimate_all_freqs``,
   compiled with ``g++ -O2``; the harness source is written by this script, minilek's code is not vendored). uBD
   (|X_S| = 0.1 d) beside phy811/uBD, which is MATLAB and does not run here: the NumPy port of its decoder
   (tests/mechanisms/subset/phy811_ubd.py, its per-report loop, on a subsample) is timed instead and labelled so.
2. PGR ``estimate`` of all frequencies at d = 3,307,948, eps = 5, n = 1e4 (aggregate + debias, jitted, warm): wall
   and process CPU seconds; the target is 10 s on 2 CPU cores.
3. uBD construction (``ul.UBD``: the mixture weights) at d = 10,000, |X_S| = 1,000, for eps in both regimes.
4. RHR (default b) and PI-RAPPOR (default q) end to end as in 1, beside minilek's C++ (same harness; issue 49,
   part 3). ``--only rhr_pi`` runs this part alone.

Run (quiet machine): ``python experiments/benchmarks/bench_oracles2.py --minilek /path/to/private_frequency_oracles``
(``--reduced`` shrinks n for a loaded machine). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARNESS = r"""
#include <bits/stdc++.h>
#include "oracles/projective_geometry.h"
using namespace std;
int main() {
  int K, q, n; double eps; uint32_t seed;
  cin >> K >> eps >> q >> n >> seed;
  vector<int> xs(n); for (auto &x : xs) cin >> x;
  ProjectiveGeometryResponse o(K, eps, q, false, seed);
  auto t0 = chrono::steady_clock::now();
  vector<Message> ms; ms.reserve(n);
  for (int x : xs) ms.push_back(o.local_randomizer(x));
  auto t1 = chrono::steady_clock::now();
  vector<double> est = o.estimate_all_freqs(ms);
  auto t2 = chrono::steady_clock::now();
  double s = 0; for (double e : est) s += e;
  printf("%.6f %.6f %.3f\n", chrono::duration<double>(t1 - t0).count(), chrono::duration<double>(t2 - t1).count(), s);
}
"""


HARNESS_OF = {  # minilek's header and constructor call (K, eps, the parameter read from stdin, debug, seed)
    "rhr": ('#include "oracles/recursive_hadamard_response.h"', "RecursiveHadamardResponse o(K, eps, q, false, seed);"),
    "pi": ('#include "oracles/pi_rappor.h"', "PIAsymmetricRAPPOR o(K, eps, false, seed);"),
}


def _zipf(d: int) -> np.ndarray:
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    return p / p.sum()


def _best(fn, reps: int = 3) -> float:
    fn()  # compile / warm
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def end_to_end(mech, xs) -> float:
    run = jax.jit(lambda key, xs: ul.mechanisms.core.debias(mech, mech.aggregate(mech.perturb_batch(key, xs)),
                                                            xs.shape[0]))
    return _best(lambda: jax.block_until_ready(run(jax.random.key(0), xs)))


def minilek_pgr(src: pathlib.Path, d: int, eps: float, q: int, xs: np.ndarray, oracle: str = "pgr") -> dict:
    """minilek's C++ for ``oracle`` ("pgr"; "rhr" with ``q`` its b; "pi"): randomizer and estimate seconds."""
    harness = HARNESS
    if oracle != "pgr":
        header, ctor = HARNESS_OF[oracle]
        harness = HARNESS.replace('#include "oracles/projective_geometry.h"', header).replace(
            "ProjectiveGeometryResponse o(K, eps, q, false, seed);", ctor)
    with tempfile.TemporaryDirectory() as tmp:
        exe = pathlib.Path(tmp) / "pgr"
        (pathlib.Path(tmp) / "h.cc").write_text(harness)
        cc = [str(p) for p in sorted((src / "oracles").glob("*.cc")) + sorted((src / "oracles/util").glob("*.cc"))]
        subprocess.run(["g++", "-O2", "-std=c++17", f"-I{src}", str(pathlib.Path(tmp) / "h.cc"), *cc, "-o",
                        str(exe)], check=True)
        inp = f"{d} {eps} {q} {len(xs)} 1\n" + " ".join(map(str, xs)) + "\n"
        out = subprocess.run([str(exe)], input=inp, capture_output=True, text=True, check=True).stdout.split()
    return {"perturb_s": float(out[0]), "estimate_s": float(out[1]), "total_s": float(out[0]) + float(out[1])}


def phy811_decoder(mech, n_sub: int) -> float:
    sys.path.insert(0, str(ROOT))
    from tests.mechanisms.subset import phy811_ubd as ref

    xs = jnp.asarray(np.random.default_rng(1).choice(mech.d, n_sub, p=_zipf(mech.d)), jnp.int32)
    ys = mech.perturb_batch(jax.random.key(1), xs)
    Y = np.zeros((n_sub, mech.d), bool)
    Y[:, list(mech.sensitive)] = np.asarray(ys.subset)
    item = np.asarray(ys.item)
    Y[np.flatnonzero(item >= 0), item[item >= 0]] = True
    t = np.zeros(mech.s)
    t[np.asarray(mech.sizes) - 1] = mech.weights
    t0 = time.perf_counter()
    if len(mech.sizes) > 1:
        ref.decode_mixture(Y, mech.alpha, t, float(mech.eps), mech.s)
    else:
        ref.decode_single(Y, mech.sizes[0], float(mech.eps), list(mech.sensitive),
                          sorted(set(range(mech.d)) - set(mech.sensitive)))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minilek", type=pathlib.Path, default=None)
    ap.add_argument("--reduced", action="store_true", help="n = 1e5 end to end (a loaded machine)")
    ap.add_argument("--only", choices=("all", "rhr_pi"), default="all", help="rhr_pi: part 4 alone")
    args = ap.parse_args()
    out: dict = {"loaded_reduced": args.reduced}
    d, eps, n = 1024, 2.0, 10**5 if args.reduced else 10**6
    xs = np.random.default_rng(0).choice(d, n, p=_zipf(d)).astype(np.int32)
    rhr, pi = ul.RHR(d, eps), ul.PIRAPPOR(d, eps)
    out["RHR_d1024"] = {"n": n, "b": rhr.b, "uldp_jax_s": end_to_end(rhr, jnp.asarray(xs))}
    out["PIRAPPOR_d1024"] = {"n": n, "q": pi.q, "t": pi.t, "uldp_jax_s": end_to_end(pi, jnp.asarray(xs))}
    if args.minilek is not None:
        out["RHR_d1024"]["minilek_cpp"] = minilek_pgr(args.minilek, d, eps, rhr.b, xs, "rhr")
        out["PIRAPPOR_d1024"]["minilek_cpp"] = minilek_pgr(args.minilek, d, eps, 0, xs, "pi")
    if args.only == "rhr_pi":
        print(json.dumps(out, indent=1))
        return
    pgr = ul.PGR(d, eps)
    out["PGR_d1024"] = {"n": n, "q": pgr.q, "K": pgr.num_outputs, "uldp_jax_s": end_to_end(pgr, jnp.asarray(xs))}
    if args.minilek is not None:
        out["PGR_d1024"]["minilek_cpp"] = minilek_pgr(args.minilek, d, eps, pgr.q, xs)
    ubd = ul.UBD(d, tuple(range(0, d, 10)), eps)
    out["UBD_d1024_s102"] = {"n": n, "sizes": ubd.sizes, "uldp_jax_s": end_to_end(ubd, jnp.asarray(xs))}
    n_sub = 2000
    out["UBD_d1024_s102"]["phy811_port_decoder_s_per_1e6"] = phy811_decoder(ubd, n_sub) * 1e6 / n_sub

    big = ul.PGR(3_307_948, 5.0)
    ys = jax.jit(big.perturb_batch)(jax.random.key(2), jnp.asarray(
        np.random.default_rng(2).integers(0, big.d, 10**4), jnp.int32))
    est = jax.jit(lambda ys: ul.mechanisms.core.debias(big, big.aggregate(ys), ys.shape[0]))
    jax.block_until_ready(est(ys))
    c0, t0 = time.process_time(), time.perf_counter()
    jax.block_until_ready(est(ys))
    out["PGR_d3307948_estimate"] = {"q": big.q, "t": big.t, "wall_s": time.perf_counter() - t0,
                                    "cpu_s": time.process_time() - c0}
    if args.minilek is not None:
        small = np.random.default_rng(2).integers(0, big.d, 10**4)
        out["PGR_d3307948_estimate"]["minilek_cpp"] = minilek_pgr(args.minilek, big.d, 5.0, big.q, small)

    cons = {}
    for e in (1.0, 5.0, 7.0, 9.0):
        t0 = time.perf_counter()
        m = ul.UBD(10_000, tuple(range(1000)), e)
        cons[str(e)] = {"s": time.perf_counter() - t0, "sizes": m.sizes}
    out["UBD_construction_d10000_s1000"] = cons
    out["maxrss_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
