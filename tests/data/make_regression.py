"""Records reports and estimates of every library mechanism for fixed keys (the redesign's regression baseline).

``record`` is the protocol redesign's baseline; ``record_extended`` (issue 47's engine/EM reorganisation) adds
both paths, the fixed and iid models, report and stats EM on every route of the engine, and grids.

Run from the repository root: ``python tests/data/make_regression.py [OUT.npz]``; writes
``tests/data/regression.npz`` by default.
``tests/test_regression.py`` checks that the current code reproduces it bit for bit.
"""

import os
import pathlib
import sys
import time

# the checkout's package, not whichever uldp_jax is installed (an editable install may point at another worktree)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

_T0 = time.perf_counter()

if __name__ == "__main__":  # record under the test session's XLA flags (tests/conftest.py): bit-identical there
    import importlib.util

    _spec = importlib.util.spec_from_file_location("_suite_conftest", pathlib.Path(__file__).parents[1] / "conftest.py")
    _conftest = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_conftest)
    os.environ["XLA_FLAGS"] = _conftest.with_test_flags(os.environ.get("XLA_FLAGS"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
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


def _grid(make, values):
    return jax.vmap(make)(jnp.asarray(values, jnp.float32))


def em_cases():
    """Report-EM and stats-EM mechanisms, one per route of today's engine (small-domain bits: support lists or
    packed bits; compact reports, packed or support lists; hashed reports; item histograms)."""
    return {
        "RAPPOR": ul.RAPPOR(10, 2.0),
        "URAP": ul.URAP(12, [0, 3, 5], 1.0),
        "UE": ul.UE(10, 1.0, 0.7),
        "OLH": ul.OLH(12, 1.0),
        "GRR": ul.GRR(12, 1.0),
        "RAPPOR1024_packed": ul.RAPPOR(1024, 4.5),
        "RAPPOR1024_rows": ul.RAPPOR(1024, 8.0),
        "URAP1024_rows": ul.URAP(1024, tuple(range(300)), 8.0),
    }


def grid_cases():
    return {
        "GRR": _grid(lambda e: ul.GRR(12, e), [0.5, 2.0]),
        "RAPPOR": _grid(lambda e: ul.RAPPOR(10, e), [0.5, 2.0]),
        "URAP": _grid(lambda e: ul.URAP(12, [0, 3, 5], e), [0.5, 2.0]),
        "OLH": _grid(lambda e: ul.OLH(12, e, g=4), [0.5, 2.0]),
    }


def groups():
    """Every group of keys in the snapshot (``test_regression`` checks each group on its own)."""
    return (sorted(cases()) + [f"em/{k}" for k in sorted(em_cases())] + [f"grid/{k}" for k in sorted(grid_cases())]
            + [f"paths/{k}" for k in sorted(cases())])


def _log(what):
    print(f"make_regression: {what} at {time.perf_counter() - _T0:.0f} s", file=sys.stderr, flush=True)


def _sim(out, prefix, key, m, methods, **kw):
    res = ul.simulate(key, m, methods=methods, **kw)
    out[f"{prefix}/stats"] = np.asarray(res.stats)
    for meth in methods:
        out[f"{prefix}/est_{meth}"] = np.asarray(res.estimates[meth])


def record_extended():
    """Both paths, fixed and iid models, report and stats EM (every route), grids."""
    out = {}
    key = jax.random.key(11)
    xs_of = lambda d, n: np.asarray(jax.random.randint(jax.random.key(2), (n,), 0, d))
    for name, m in cases().items():  # record() drew p iid on the auto path (counts where it exists): add the rest
        _sim(out, f"paths/{name}/per_user_fixed", key, m, ("emp",), xs=xs_of(m.d, 700), reps=2, path="per_user")
        if ul.fastpath.has_count_path(m):
            p = np.linspace(1.0, 2.0, m.d)
            _sim(out, f"paths/{name}/per_user_iid", key, m, ("emp",), p=p / p.sum(), n=1500, reps=2,
                 path="per_user")
            _sim(out, f"paths/{name}/counts_fixed", key, m, ("emp",), xs=xs_of(m.d, 700), reps=2, path="counts")
    _log("paths")
    for name, m in em_cases().items():
        _log(f"em/{name}")
        xs = xs_of(min(m.d, 40), 700)
        ys = ul.perturb(key, m, xs)
        for i, leaf in enumerate(jax.tree_util.tree_leaves(ys)):
            out[f"em/{name}/reports/{i}"] = np.asarray(leaf)
        out[f"em/{name}/est_em"] = np.asarray(ul.estimate(m, ys, "em"))
        if name in ("RAPPOR", "GRR"):  # the plain EM loop as well as the accelerated one
            out[f"em/{name}/est_em_plain"] = np.asarray(ul.estimate(m, ys, "em", accelerate=False))
        _sim(out, f"em/{name}/sim_fixed", key, m, ("em", "emp"), xs=xs, reps=2, block_size=256)
        if name in ("RAPPOR", "OLH"):
            p = np.linspace(1.0, 3.0, m.d)
            _sim(out, f"em/{name}/sim_iid", key, m, ("em",), p=p / p.sum(), n=1200, reps=3, block_size=256)
    for name, g in grid_cases().items():
        _log(f"grid/{name}")
        xs = xs_of(g.d, 600)
        ys = ul.perturb(key, g, xs)
        for i, leaf in enumerate(jax.tree_util.tree_leaves(ys)):
            out[f"grid/{name}/reports/{i}"] = np.asarray(leaf)
        out[f"grid/{name}/est_em"] = np.asarray(ul.estimate(g, ys, "em"))
        _sim(out, f"grid/{name}/sim_fixed", key, g, ("em", "emp"), xs=xs, reps=2, block_size=256)
    return out


if __name__ == "__main__":
    np.savez_compressed(sys.argv[1] if len(sys.argv) > 1 else "tests/data/regression.npz", **record(), **record_extended())
