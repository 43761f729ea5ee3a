"""``ul.study``: a Monte Carlo study (mechanisms x parameter grids x n x methods x metrics) run on the engine.

Key schedule (documented contract). Mechanism ``m`` (its index in ``mechanisms``) at n-index ``j`` uses
``key_mj = fold_in(fold_in(key, m), j)``:

* iid and fixed models: each group of grid points (one static signature) is one call
  ``ul.simulate(key_mj, grid, p=p, n=n_j, reps=reps, methods=methods)`` (``xs=xs`` for the fixed model), so every
  point of mechanism ``m`` at ``n_j`` sees the same random numbers (common random numbers, as ``ul.simulate``
  grids do) and a point's statistics and estimates equal those of ``ul.simulate(key_mj, point_mech, ...)`` bit
  for bit, on both paths (the engine estimates a counts-path grid point by point with the single mechanism's
  jitted function);
* population model: repetition ``r`` draws its subset with ``fold_in(fold_in(key_mj, r), 0)``
  (``studies._population``; once per mechanism and n, shared by the mechanism's groups) and runs
  ``ul.simulate(fold_in(fold_in(key_mj, r), 1), grid, xs=subset, reps=1, methods=methods)``'s plan and statistics,
  one per repetition and group (each subset is new data; the compiled kernels are reused: same shapes every
  repetition); the statistics of all repetitions are then estimated in one call (the same estimates as per
  repetition up to the last float32 bit: the batch has another shape), except for report-based methods, which
  run ``ul.simulate`` per repetition.

Compilation: eps and the other continuous parameters are data (the leaves of a grid), ``n`` is data in the
engine, and each method is resolved by the engine once per call; the kernels compiled are one per static
signature (mechanism kind, static fields, leaf shapes) and path, not one per point or per n.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import time
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _progress
from uldp_jax.engine import _engine as engine
from uldp_jax.studies import _metrics, _population, _spec
from uldp_jax.studies._result import StudyResult


class TheoryWarning(UserWarning):
    """``ul.study`` has no theory value for a mechanism (its rows' ``theory`` and ``z`` are NaN); the message and
    ``StudyResult.config["theory_errors"]`` give ``ul.theory``'s reason."""


_CLOCK = {"compile_s": 0.0, "compiles": 0, "cache_hits": 0, "registered": False}


def _on_event(event: str, secs: float, **kw: Any) -> None:
    if event in ("/jax/core/compile/backend_compile_duration", "/jax/core/compile/jaxpr_trace_duration",
                 "/jax/core/compile/jaxpr_to_mlir_module_duration"):
        _CLOCK["compile_s"] += secs
    if event == "/jax/core/compile/backend_compile_duration" and kw.get("fun_name") not in ("stage", "jit(stage)"):
        _CLOCK["compiles"] += 1


def _on_hit(event: str, **kw: Any) -> None:
    if event == "/jax/compilation_cache/cache_hits":
        _CLOCK["cache_hits"] += 1


def _listen() -> None:
    if not _CLOCK["registered"]:
        jax.monitoring.register_event_duration_secs_listener(_on_event)
        jax.monitoring.register_event_listener(_on_hit)
        _CLOCK["registered"] = True


def _grid_axis(est: dict, grid: bool) -> dict:
    return {m: np.asarray(v) if grid else np.asarray(v)[None] for m, v in est.items()}


def _subsets(spec: _spec.StudySpec, key_mj: jax.Array, n: int) -> list | None:
    """Population model: repetition ``r``'s users, drawn with ``fold_in(fold_in(key_mj, r), 0)``, once per
    mechanism and ``n`` (every group of the mechanism reuses them); ``None`` in the other models."""
    if spec.sample != "population":
        return None
    return [_population.subset(jax.random.fold_in(jax.random.fold_in(key_mj, r), 0), spec.xs, n)
            for r in range(spec.reps)]


def _run_group(spec: _spec.StudySpec, key_mj: jax.Array, mech: Any, grid: bool, n: int,
               subsets: list | None, methods: tuple) -> tuple[dict, Any]:
    """``({method: float32[g, reps, d]}, target float64[d])`` of one group at one ``n``."""
    kw = dict(methods=methods, progress=False, **spec.simulate_options)
    if spec.sample == "iid":
        res = engine.simulate(key_mj, mech, p=_spec.p_at(spec, mech.d), n=n, reps=spec.reps, **kw)
        return _grid_axis(res.estimates, grid), np.asarray(res.target, np.float64)
    if spec.sample == "fixed":
        res = engine.simulate(key_mj, mech, xs=spec.xs, reps=spec.reps, **kw)
        return _grid_axis(res.estimates, grid), np.asarray(res.target, np.float64)
    return _population_group(spec, key_mj, mech, grid, subsets, methods)


def _population_group(spec: _spec.StudySpec, key_mj: jax.Array, mech: Any, grid: bool,
                      subsets: list, methods: tuple) -> tuple[dict, Any]:
    """Population model: repetition ``r`` simulates its subset with ``fold_in(fold_in(key_mj, r), 1)`` (one
    ``ul.simulate`` plan each: new data every repetition). Methods that read only the statistics then estimate
    every repetition in one call on the stacked statistics (EM over a grid and all repetitions at once, instead
    of one EM per repetition); report-based methods (EM on per-report likelihoods) run ``ul.simulate`` per
    repetition, as their reports are regenerated from each plan's users."""
    opts = dict(spec.simulate_options)
    names = methods
    methods, method_options = engine.check_methods(names, opts.pop("method_options", None))
    keys = [jax.random.fold_in(jax.random.fold_in(key_mj, r), 1) for r in range(len(subsets))]
    plans = [engine.make_plan(k, mech, xs=sub, reps=1, methods=methods, method_options=method_options, **opts)
             for k, sub in zip(keys, subsets)]
    target = population_target(spec.xs, spec.d)
    if plans[0].needs_reports:
        parts = [_grid_axis(engine.estimates(pl, k, engine.run_stats(pl, k)), grid) for pl, k in zip(plans, keys)]
        return {m: np.concatenate([pt[m] for pt in parts], axis=1) for m in names}, target
    stats = jnp.concatenate([engine.run_stats(pl, k) for pl, k in zip(plans, keys)], axis=1 if grid else 0)
    return _grid_axis(engine.estimates(plans[0], keys[0], stats), grid), target


def population_target(xs: np.ndarray, d: int) -> np.ndarray:
    """``float64[d]``: the empirical distribution of ``xs``."""
    return np.bincount(xs, minlength=d).astype(np.float64) / xs.shape[0]


def study(key: jax.Array, mechanisms: dict, *, n: Any = None, reps: int, methods: Any = ("emp",),
          metrics: Any = ("mse",), p: Any = None, xs: Any = None, sample: str | None = None, progress: Any = "auto",
          simulate_options: dict | None = None, **grids: Any) -> StudyResult:
    """Runs a Monte Carlo study: every mechanism at every grid point and ``n``, ``reps`` times, every method.

    Example::

        res = ul.study(key, {"GRR": lambda eps: ul.GRR(d, eps), "uRR": lambda eps: ul.URR(d, S, eps)},
                       eps=[0.5, 1.0, 2.0, 4.0], n=[10_000, 100_000], reps=30,
                       methods=("emp", "emp+thr"), p=p, metrics=("mse",))
        res.rows()  # one dict per mechanism x point x n x method x metric

    Args:
      key: PRNG key (threefry); see the module docstring for the key schedule.
      mechanisms: ``{name: factory}``; a factory takes the swept parameters by name (``lambda eps: ...``,
        ``lambda eps, theta: ...``) and returns a mechanism over the study's domain.
      n: users per repetition: an int or a list (iid and population models; not for ``sample="fixed"``).
      reps: repetitions per point (>= 1; the standard error needs >= 2).
      methods: estimation method names (``ul.estimation.method_names()``) that every mechanism runs at every
        ``n``; or per mechanism, ``{name: methods}``, and per ``n``, ``{name: {n: methods}}``; or a callable
        ``(name, n) -> methods`` (e.g. EM only at the smaller ``n`` for a costly mechanism). A cell's rows are
        its methods'; ``config["methods_by_mechanism"]`` records the table.
      metrics: names in ``("mse_per_item", "mse_sum", "l1", "tv")`` (units: ``mse_sum`` is a sum over items, as
        ``ul.theory.mse``; ``mse_per_item`` the per-item mean; aliases ``"mse"`` = ``"mse_per_item"``, ``"l2"`` =
        ``"mse_sum"``; see ``studies._metrics``) and callables
        ``f(est[..., d], target[d]) -> [...]`` (given read-only copies), or a dict ``{name: metric}``.
      p: ``float[d]`` distribution of the iid model.
      xs: ``int[N]`` users' items: the fixed model's users, or the population of ``sample="population"``.
      sample: ``"iid"`` (default with ``p``: users iid from ``p``), ``"fixed"`` (default with ``xs``: exactly
        the users ``xs`` every repetition) or ``"population"`` (each repetition ``n`` of the users ``xs``, drawn
        uniformly without replacement, scored against the distribution of ``xs``: 001's model).
      progress: ``"auto"`` (default: a bar after a few seconds where stderr is a terminal or a notebook, a note on
        an experiment's bar inside ``uldp run``, else nothing), ``True`` (tqdm if installed, else stderr lines),
        ``"stderr"`` or ``False``. The bar counts engine calls (one per mechanism group and ``n``), says the
        study's size and ``compiling ...`` at the start and the time left from the calls so far.
      simulate_options: extra keyword arguments for ``ul.simulate`` (``path``, ``block_size``, ...).
      **grids: the swept parameters, each a number or a list (``eps=[0.5, 1, 2]``, ``theta=[...]``).

    Returns:
      A ``StudyResult`` (``rows()``, ``to_csv``, ``to_pandas``, ``save``/``load``, ``plot``).

    Raises:
      TypeError, ValueError: a bad argument (named in the message), a factory or metric that fails (named with
        the grid point), a factory that returns no mechanism, or mechanisms over different domains.
      RuntimeError: a factory or metric that raises another error (``ZeroDivisionError``, ``KeyError``, ...):
        the message names it and the grid point; the original error is its ``__cause__``.
    """
    spec = _spec.check_study(key, mechanisms, n=n, reps=reps, methods=methods, metrics=metrics, p=p, xs=xs,
                             sample=sample, simulate_options=simulate_options, grids=grids)
    if spec.d is None and spec.sample != "iid":  # fixed/population: the mechanisms set the domain; the users' items must lie in it
        d = _spec.build(spec, spec.names[0], _spec.grid_points(spec, spec.names[0])[0]).d
        if int(spec.xs.max()) >= d:
            raise ValueError(f"Expected every entry of xs in [0, {d}) (the mechanisms' domain), got {spec.xs.max()}.")
        spec = dataclasses.replace(spec, d=d)
    groups = {name: _spec.expand(spec, name, spec.d) for name in spec.names}
    _listen()
    points = sum(len(pts) for g in groups.values() for pts, _, _ in g)
    size = f"{len(spec.names)} mechanisms, {points} points x {len(spec.ns)} n x {spec.reps} reps"
    bar = _progress.make_progress(progress, sum(len(g) for g in groups.values()) * len(spec.ns), desc="study",
                                  unit="calls", size=size)
    rows, values, theory_errors = [], [], {}
    wall0, clock0 = time.perf_counter(), dict(_CLOCK)
    try:
        for m_idx, name in enumerate(spec.names):
            for j, n_j in enumerate(spec.ns):
                key_mj = jax.random.fold_in(jax.random.fold_in(key, m_idx), j)
                subsets = _subsets(spec, key_mj, n_j)
                for points, mechs, mech in groups[name]:
                    t0, c0 = time.perf_counter(), _CLOCK["compile_s"]
                    est, target = _run_group(spec, key_mj, mech, len(points) > 1, n_j, subsets,
                                             spec.methods_at(name, n_j))
                    compile_s = _CLOCK["compile_s"] - c0
                    run_s = max(time.perf_counter() - t0 - compile_s, 0.0)
                    for i, point in enumerate(points):
                        _point_rows(spec, name, point, n_j, mechs[i], est, i, target,
                                    compile_s / len(points), run_s / len(points), rows, values, theory_errors)
                    bar.update(1, f"{name} n={n_j} ({len(points)} points)")
    finally:
        bar.close()
    timing = {"wall_s": time.perf_counter() - wall0, "compile_s": _CLOCK["compile_s"] - clock0["compile_s"],
              "compile_requests": _CLOCK["compiles"] - clock0["compiles"],
              "cache_hits": _CLOCK["cache_hits"] - clock0["cache_hits"]}
    cfg = _config(spec, key)
    cfg["theory_errors"] = theory_errors
    return StudyResult(rows, np.asarray(values, np.float64).reshape(len(rows), spec.reps), cfg, timing)


def _point_rows(spec, name, point, n, mech, est, i, target, compile_s, run_s, rows, values,
                theory_errors) -> None:
    v, why = _metrics.item_variance(mech, target, n, spec.sample, None if spec.xs is None else spec.xs.shape[0])
    if why is not None and name not in theory_errors:  # one reason per mechanism: the first point that had none
        theory_errors[name] = why
        warnings.warn(f"ul.study: no theory for mechanisms[{name!r}] (theory and z are NaN), at {point} n={n}: "
                      f"{why}", TheoryWarning, stacklevel=3)
    for method in spec.methods_at(name, n):
        for mname, metric in spec.metrics.items():
            where = f"mechanisms[{name!r}], {_spec.point_label(spec, point)}, n={n}, method {method!r}"
            vals = _metrics.evaluate(mname, metric, est[method][i], target, where)
            mean, se = _metrics.summarize(vals)
            th = _metrics.theory_value(metric, method, v)
            row = {"mechanism": name, **{g: point.get(g) for g in spec.grids}, "n": n, "sample": spec.sample,
                   "method": method, "metric": mname, "mean": mean, "se": se, "theory": th,
                   "z": _metrics.z_score(mean, se, th), "reps": spec.reps, "compile_s": compile_s, "run_s": run_s}
            rows.append(row)
            values.append(vals)


def _source(fn: Any) -> dict:
    """How a callable was written: ``module:qualname`` and its source text where Python has it (never run)."""
    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        src = None
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return {"qualname": f"{getattr(fn, '__module__', None)}:{name}", "source": src}


def _config(spec: _spec.StudySpec, key: jax.Array) -> dict:
    """The study's configuration as JSON-able data: the grids, sizes, key data, methods table, and each factory's
    ``module:qualname`` and source text (kept to read, never executed: ``StudyResult.study_arguments`` takes the
    factories again)."""
    metrics = {k: (m if isinstance(m, str) else f"callable:{_spec.callable_name(m) or repr(m)}")
               for k, m in spec.metrics.items()}
    kd = np.asarray(jax.random.key_data(key) if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else key)
    cfg = {"mechanisms": list(spec.names), "grids": {g: list(v) for g, v in spec.grids.items()},
           "params": {k: list(v) for k, v in spec.params.items()}, "n": list(spec.ns), "reps": spec.reps,
           "methods": list(spec.methods), "metrics": metrics,
           "methods_by_mechanism": {nm: {str(n): list(spec.methods_at(nm, n)) for n in spec.ns}
                                    for nm in spec.names},
           "sample": spec.sample, "d": spec.d,
           "key_data": kd.astype(np.int64).ravel().tolist(),
           "factories": {nm: _source(spec.factories[nm]) for nm in spec.names},
           "simulate_options": {k: repr(v) for k, v in spec.simulate_options.items()}}
    if callable(spec.p):  # a domain sweep: p(d) at every d the mechanisms take, and how p was written
        ds = sorted({int(_spec.build(spec, nm, pt).d) for nm in spec.names for pt in _spec.grid_points(spec, nm)})
        cfg["p"] = {str(d): np.asarray(_spec.p_at(spec, d), np.float64).tolist() for d in ds}
        cfg["p_source"] = _source(spec.p)
    elif spec.p is not None:
        cfg["p"] = np.asarray(spec.p, np.float64).tolist()
    if spec.xs is not None:
        cfg["num_users"] = int(spec.xs.shape[0])
        cfg["xs_sha256"] = hashlib.sha256(np.ascontiguousarray(spec.xs, np.int32).tobytes()).hexdigest()
    return cfg
