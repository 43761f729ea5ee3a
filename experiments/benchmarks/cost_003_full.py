"""CPU cost of 003-sims at full size (each dataset's own n): one ``ul.study`` call per (dataset, mechanism) with
all of the config's eps and 1 repetition, ``path="auto"``, run twice (first call with compilation, then warm);
prints process CPU and wall seconds of both. Full-size estimate: first + 50 x warm, summed (experiments/README.md).

Run: ``python experiments/benchmarks/cost_003_full.py [DATASET ...]`` (all four datasets by default).
"""
import json, os, sys, time
import jax
import uldp_jax as ul
from uldp_jax.experiments import _datasets, _studies
from uldp_jax.experiments._glutf import fixed_users
from uldp_jax.experiments._glutf_sim import _factory
cfg = json.load(open("experiments/003-sims/config.json"))["full"]
labels = cfg["mechanisms"] + cfg.get("published", [])
out = {}
for ds in _datasets.resolve(cfg["datasets"], None, None):
    if len(sys.argv) > 1 and ds.name not in sys.argv[1:]:
        continue
    xs = fixed_users(ds.p, ds.n)
    for label in labels:
        cpu = []
        for i in range(2):
            c0, w0 = time.process_time(), time.perf_counter()
            ul.study(jax.random.key(i), {label: _factory(label, ds)}, eps=cfg["eps"], xs=xs, sample="fixed", reps=1,
                     methods=("emp",), simulate_options={"path": "auto"})
            cpu.append((time.process_time() - c0, time.perf_counter() - w0))
        out[(ds.name, label)] = cpu
        print(ds.name, ds.n, ds.d, label, "first cpu %.1f wall %.1f; warm cpu %.1f wall %.1f" % (*cpu[0], *cpu[1]),
              os.getloadavg()[0], flush=True)
