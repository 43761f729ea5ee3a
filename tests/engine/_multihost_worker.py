"""One process of tests/engine/test_multihost.py: ``jax.distributed`` on CPU with gloo collectives.

Usage: ``python _multihost_worker.py PROCESS_ID NUM_PROCESSES PORT OUT.npz``; process 0 writes the stats.
"""

import sys

import jax
import numpy as np

CASES = {  # name -> (mechanism factory, simulate kwargs): every sharding mode and both paths
    "grr_reps": (lambda ul: ul.GRR(6, 1.0), dict(n=5000, reps=4, path="per_user", block_size=256)),
    "grr_users": (lambda ul: ul.GRR(6, 1.0), dict(n=5000, reps=1, path="per_user", block_size=256)),
    "oue_xs": (lambda ul: ul.OUE(6, 1.0), dict(xs=np.arange(3000) % 6, reps=3, block_size=256)),
    "oue_counts": (lambda ul: ul.OUE(6, 1.0), dict(n=10**6, reps=4, path="counts")),
}
P = np.arange(1, 7, dtype=float) / 21.0
KEY = 5


def run(ul, devices=None) -> dict:
    out = {}
    for name, (make, kw) in CASES.items():
        kw = dict(kw)
        if "xs" not in kw:
            kw["p"] = P
        out[name] = np.asarray(ul.simulate(jax.random.key(KEY), make(ul), devices=devices, **kw).stats)
    return out


def main() -> None:
    pid, nproc, port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"localhost:{port}", num_processes=nproc, process_id=pid)
    import uldp_jax as ul

    assert jax.process_count() == nproc and len(jax.devices()) == nproc, jax.devices()
    res = run(ul)
    if pid == 0:
        np.savez(path, **res)


if __name__ == "__main__":
    main()
