"""Cost of one repetition of report-based EM (001 Figs 5-7, 10-12: RAPPOR/uRAP) on the Foursquare proxy (d = 625).

    python experiments/benchmarks/em_full_size_cost.py uRAP 1.0 [n]     # n defaults to 001's 179,527

Two calls of ``ul.simulate(..., reps=1, methods=("em",))`` (the first one compiles), each with its wall and CPU
seconds, the load average and the peak RSS. Wrap it in ``timeout`` on a shared machine.
"""

import os
import resource
import sys
import time

import jax
import numpy as np

import uldp_jax as ul
from uldp_jax.experiments import _common, _datasets

label, eps = sys.argv[1], float(sys.argv[2])
(ds,) = _datasets.resolve(["foursquare"], None, int(sys.argv[3]) if len(sys.argv) > 3 else None)
mech = _common.make_mechanism(label, ds.d, ds.sensitive, eps)
for call in range(2):
    t, c = time.perf_counter(), time.process_time()
    res = ul.simulate(jax.random.key(call), mech, p=ds.p, n=ds.n, reps=1, methods=("em",))
    np.asarray(res.estimates["em"])
    print(f"{label} eps={eps} n={ds.n} call {call}: {time.perf_counter() - t:.1f} s wall, "
          f"{time.process_time() - c:.1f} s CPU, load {os.getloadavg()[0]:.1f}, "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB", flush=True)
