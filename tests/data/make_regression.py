"""Records reports and estimates of every library mechanism for fixed keys (the redesign's regression baseline).

Run from the repository root: ``python tests/data/make_regression.py [OUT.npz]``; writes
``tests/data/regression.npz`` by default.
``tests/test_regression.py`` checks that the current code reproduces it bit for bit.
"""

import os

if __name__ == "__main__" and "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    # record under the test session's XLA flags (tests/conftest.py): bit-identical there
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()

import jax  # noqa: E402
import numpy as np  # noqa: E402

import uldp_jax as ul


def cases():
    return {
        "GRR": ul.GRR(12, 1.0),
        "RAPPOR": ul.RAPPOR(10, 2.0),
        "OUE": ul.OUE(10, 1.0),
        "URR": ul.URR(12, [0, 3, 5], 1.0),
        "URAP": ul.URAP(12, [0, 3, 5], 1.0),
        "SS": ul.SS(12, 1.0),
        "OLH": ul.OLH(12, 1.0),
        "Wheel": ul.Wheel(12, 1.0),
        "USS": ul.USS(12, [0, 3, 5, 7], 1.0),
        "UUE": ul.UUE(12, [0, 3, 5], 1.0),
        "ULH": ul.ULH(12, [0, 3, 5], 1.0),
        "UWheel": ul.UWheel(12, [0, 3, 5], 1.0),
        "HR": ul.HR(12, 1.0),
        "HighLowHR": ul.HighLowHR(12, [0, 3, 5], 1.0),
        "BlockHR": ul.BlockHR([[0, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10, 11]], 1.0),
        "Warner": ul.Warner(1.0),
        "GLUTF_GRR": ul.glutf(ul.GRR(3, 1.0), 12, [0, 3, 5]),
    }


def record():
    out = {}
    key = jax.random.key(7)
    for name, m in cases().items():
        xs = jax.random.randint(jax.random.key(1), (500,), 0, m.d)
        ys = ul.perturb(key, m, xs)
        for i, leaf in enumerate(jax.tree_util.tree_leaves(ys)):
            out[f"{name}/reports/{i}"] = np.asarray(leaf)
        out[f"{name}/emp"] = np.asarray(ul.estimate(m, ys, "emp"))
        p = np.full(m.d, 1.0 / m.d)
        res = ul.simulate(key, m, p=p, n=2000, reps=2, methods=("emp",))
        out[f"{name}/sim_emp"] = np.asarray(res.estimates["emp"])
    return out


if __name__ == "__main__":
    import sys

    np.savez_compressed(sys.argv[1] if len(sys.argv) > 1 else "tests/data/regression.npz", **record())
