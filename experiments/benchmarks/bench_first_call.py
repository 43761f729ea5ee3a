"""Benchmark: a fresh process's first call of GRR at n = 1e6, d = 625, eps = 1, against pure-LDP, side by side.

Issue 20's target: with a warm persistent cache, a new Python process's first ``ul.simulate`` call (one repetition,
iid users from a Zipf-like ``p``, estimate "emp") beats pure-LDP 1.2.0's GRR (``DEClient``/``DEServer``) on the same
task. Every measurement is a child process (``python bench_first_call.py --child WHAT``) so nothing is shared:

- ``uldp-empty``: uldp_jax's first call with an empty cache directory (this fills it);
- ``uldp-warm``: the same call in a new process that finds the kernels in the cache (measured 3 times, best and
  all reported);
- ``uldp-warm-per-user``: the same with ``path="per_user"`` (every user's report drawn);
- ``pure-LDP``: perturb + aggregate + estimate of all 10^6 users (pure-LDP perturbs one user per Python call).

Import time is reported separately for each (``import_s``); ``first_call_s`` is the call itself, as README's
``ul.simulate`` example writes it. Run: ``python experiments/benchmarks/bench_first_call.py`` (needs the ``bench``
extra for pure-LDP; writes ``bench_first_call.json`` next to this file with ``os.getloadavg()`` per child).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
D, N, EPS = 625, 1_000_000, 1.0


def _zipf():
    import numpy as np

    p = 1.0 / np.arange(1, D + 1) ** 1.1
    return p / p.sum()


def child(what: str) -> dict:
    t0 = time.perf_counter()
    if what == "pure-LDP":
        import numpy as np
        from pure_ldp.frequency_oracles import direct_encoding

        import_s = time.perf_counter() - t0
        xs = np.random.default_rng(0).choice(D, size=N, p=_zipf())
        t1 = time.perf_counter()
        cli, srv = direct_encoding.DEClient(EPS, D), direct_encoding.DEServer(EPS, D)
        for x in xs:  # pure-LDP items are 1..d
            srv.aggregate(cli.privatise(int(x) + 1))
        srv.estimate_all(range(1, D + 1), suppress_warnings=True)
        return {"import_s": import_s, "first_call_s": time.perf_counter() - t1}
    import jax

    import uldp_jax as ul

    import_s = time.perf_counter() - t0
    p = _zipf()
    path = "per_user" if what.endswith("per-user") else "auto"
    t1 = time.perf_counter()
    res = ul.simulate(jax.random.key(0), ul.GRR(D, EPS), p=p, n=N, reps=1, path=path)
    res.estimates["emp"].block_until_ready()
    return {"import_s": import_s, "first_call_s": time.perf_counter() - t1, "path": path}


def run_child(what: str, env: dict) -> dict:
    load0 = os.getloadavg()
    proc = subprocess.run([sys.executable, __file__, "--child", what], env=env, capture_output=True, text=True,
                          check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["loadavg_before"] = load0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    out = {"task": {"mech": "GRR", "d": D, "n": N, "eps": EPS, "reps": 1}, "platform": platform.platform(),
           "cpus": os.cpu_count(), "runs": {}}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, ULDP_JAX_CACHE_DIR=cache)  # the toolkit's own default cache, as a user gets it
        for var in ("ULDP_JAX_CACHE", "JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"):
            env.pop(var, None)
        out["runs"]["uldp-empty"] = run_child("uldp-empty", env)
        out["runs"]["uldp-warm"] = [run_child("uldp-warm", env) for _ in range(3)]
        out["runs"]["uldp-warm-per-user"] = run_child("uldp-warm-per-user", env)  # empty for this path: fills it
        out["runs"]["uldp-warm-per-user"] = run_child("uldp-warm-per-user", env)
    try:
        out["runs"]["pure-LDP"] = run_child("pure-LDP", dict(os.environ))
    except subprocess.CalledProcessError as err:  # the bench extra is not installed
        out["runs"]["pure-LDP"] = {"error": err.stderr.strip().splitlines()[-1]}
    warm = min(r["first_call_s"] for r in out["runs"]["uldp-warm"])
    out["summary"] = {"uldp_warm_first_call_s": warm,
                      "pure_ldp_s": out["runs"]["pure-LDP"].get("first_call_s"),
                      "uldp_empty_first_call_s": out["runs"]["uldp-empty"]["first_call_s"]}
    print(json.dumps(out, indent=1))
    (HERE / "bench_first_call.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
