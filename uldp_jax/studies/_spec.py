"""A study's inputs, checked once: mechanism factories, parameter grids, sizes, methods and the sampling model.

Host-only configuration (a frozen dataclass, as jax_privacy's batch strategies): nothing here draws random
numbers. ``check_study`` validates every argument of ``ul.study`` and raises ``TypeError``/``ValueError`` naming
the argument; ``expand`` builds each mechanism at each grid point and groups the points that share static
parameters (same pytree structure, static fields and leaf shapes), so each group runs as one batched call.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _grid_check
from uldp_jax.mechanisms.core._base import Mechanism
from uldp_jax.studies._methods import check_method_table as _check_method_table

SAMPLES = ("iid", "fixed", "population")


@dataclasses.dataclass(frozen=True)
class StudySpec:
    """The checked configuration of a study (JSON-able apart from the factories and the data arrays).

    Attributes:
      names: mechanism names, in the caller's order (index ``m`` in the key schedule).
      factories: ``{name: factory}``; each takes keyword arguments named in ``grids``.
      grids: ``{parameter: tuple of values}`` (``eps`` first when given).
      params: ``{name: tuple of parameter names}`` that each factory takes (from its signature).
      ns: users per repetition, one entry per n-index ``j`` (``(len(xs),)`` in the fixed model).
      reps: repetitions per point.
      methods: estimation method names, every method some cell runs (in first-use order).
      method_table: ``{(name, n): tuple of method names}``, the methods each mechanism runs at each ``n``.
      metrics: ``{name: builtin name or callable}``.
      sample: ``"iid"``, ``"fixed"`` or ``"population"``.
      d: domain size shared by every mechanism.
      p: ``float64[d]`` the iid model's distribution, or a callable ``d -> float[d]`` (a sweep over domain
        sizes: ``p_at``), else ``None``.
      xs: ``int32[N]`` users (fixed model) or the population (population model), else ``None``.
      simulate_options: extra keyword arguments of ``ul.simulate`` (e.g. ``path``, ``block_size``).
    """

    names: tuple
    factories: dict
    grids: dict
    params: dict
    ns: tuple
    reps: int
    methods: tuple
    metrics: dict
    sample: str
    d: int
    p: Any
    xs: Any
    simulate_options: dict
    method_table: dict = dataclasses.field(default_factory=dict)

    def methods_at(self, name: str, n: int) -> tuple:
        """The methods mechanism ``name`` runs at ``n`` users."""
        return self.method_table.get((name, n), self.methods)


BUILTIN_METRICS = ("mse_per_item", "mse_sum", "l1", "tv", "mse", "l2")  # the last two: aliases (_metrics)
_RESERVED = ("key", "mechanisms", "n", "reps", "methods", "metrics", "p", "xs", "sample", "progress",
             "simulate_options", "mechanism", "method", "metric", "mean", "se", "theory", "z", "compile_s", "run_s")


def _check_grid(name: str, values: Any) -> tuple:
    if isinstance(values, (numbers.Real, np.number)) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, (np.ndarray, jax.Array)):
        values = np.asarray(values).ravel().tolist()
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"Expected {name}={values!r} to be a number or a list of numbers.")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, np.number)) or np.ndim(v) != 0:
            raise TypeError(f"Expected every entry of {name}={values!r} to be a real number, got {name}[{i}]={v!r}.")
        if not math.isfinite(float(v)):
            raise ValueError(f"Expected every entry of {name}={values!r} to be finite, got {name}[{i}]={v!r}.")
        out.append(int(v) if isinstance(v, numbers.Integral) else float(v))
    if not out:
        raise ValueError(f"Expected {name} to hold at least one value.")
    if len(set(out)) != len(out):
        raise ValueError(f"Expected the values of {name}={out!r} to be distinct.")
    return tuple(out)


def _check_mechanisms(mechanisms: Any, grids: dict) -> tuple[tuple, dict, dict]:
    if not isinstance(mechanisms, dict) or not mechanisms:
        raise TypeError(f"Expected mechanisms to be a non-empty dict {{name: factory}}, got {mechanisms!r}.")
    params = {}
    for name, fn in mechanisms.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"Expected every key of mechanisms to be a non-empty str, got {name!r}.")
        if not callable(fn):
            raise TypeError(f"Expected mechanisms[{name!r}] to be a factory (a callable), got {fn!r}.")
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError) as e:
            raise TypeError(f"Expected mechanisms[{name!r}] to have an inspectable signature: {e}") from e
        names = tuple(a.name for a in sig.parameters.values()  # required ones, and defaulted ones with a grid
                      if a.kind in (a.POSITIONAL_OR_KEYWORD, a.KEYWORD_ONLY) and (a.default is a.empty or a.name in grids))
        missing = [a for a in names if a not in grids]
        if missing:
            raise ValueError(f"mechanisms[{name!r}] takes {missing} but the study has no grid for it: pass "
                             f"{missing[0]}=[...] (grids given: {sorted(grids)}).")
        params[name] = names
    unused = [g for g in grids if not any(g in ps for ps in params.values())]
    if unused:
        raise ValueError(f"The grid {unused[0]}={list(grids[unused[0]])!r} is taken by no factory in "
                         f"mechanisms={list(mechanisms)} (factories take {params}).")
    return tuple(mechanisms), dict(mechanisms), params


def _check_ns(n: Any) -> tuple:
    vals = list(n) if isinstance(n, (list, tuple, np.ndarray)) else [n]
    if not vals:
        raise ValueError("Expected n to hold at least one number of users.")
    out = tuple(_validate.check_int("n", v, minimum=1) for v in vals)
    if len(set(out)) != len(out):
        raise ValueError(f"Expected the values of n={list(out)!r} to be distinct.")
    return out


def callable_name(fn: Any) -> str | None:
    """``fn.__name__`` (``None`` for a callable without one, e.g. a ``functools.partial``)."""
    try:
        return fn.__name__
    except AttributeError:
        return None


def _check_metrics(metrics: Any) -> dict:
    if isinstance(metrics, str) or callable(metrics):
        metrics = (metrics,)
    if isinstance(metrics, dict):
        items = list(metrics.items())
    elif isinstance(metrics, (list, tuple)):
        items = [(m if isinstance(m, str) else callable_name(m), m) for m in metrics]
    else:
        raise TypeError(f"Expected metrics={metrics!r} to be a sequence of names/callables or a dict.")
    if not items:
        raise ValueError("Expected metrics to name at least one metric.")
    out = {}
    for name, m in items:
        if isinstance(m, str) and m not in BUILTIN_METRICS:
            raise ValueError(f"Expected metric {m!r} in {BUILTIN_METRICS} or a callable f(est, target).")
        if not (isinstance(m, str) or callable(m)):
            raise TypeError(f"Expected every metric to be a name in {BUILTIN_METRICS} or a callable, got {m!r}.")
        if not isinstance(name, str) or not name or name == "<lambda>":
            raise ValueError(f"metrics: the callable {m!r} needs a name; pass metrics={{'name': f}}.")
        if name in out:
            raise ValueError(f"Expected distinct metric names, got {name!r} twice.")
        out[name] = m
    return out


def check_study(key: Any, mechanisms: Any, *, n: Any, reps: Any, methods: Any, metrics: Any, p: Any, xs: Any,
                sample: Any, simulate_options: Any, grids: dict) -> StudySpec:
    """Checks every argument of ``ul.study``; returns the ``StudySpec``.

    Raises:
      TypeError, ValueError: naming the bad argument and its value.
    """
    _validate.check_key(key)
    for g in grids:
        if g in _RESERVED:
            raise ValueError(f"The grid name {g!r} is reserved (it is a study argument or a result column).")
    grids = {g: _check_grid(g, v) for g, v in grids.items()}
    names, factories, params = _check_mechanisms(mechanisms, grids)
    reps = _validate.check_int("reps", reps, minimum=1)
    metrics = _check_metrics(metrics)
    if sample is None:
        sample = "iid" if p is not None else "fixed"
    if sample not in SAMPLES:
        raise ValueError(f"Expected sample={sample!r} in {SAMPLES}.")
    if simulate_options is None:
        simulate_options = {}
    if not isinstance(simulate_options, dict):
        raise TypeError(f"Expected simulate_options={simulate_options!r} to be a dict of ul.simulate options.")
    bad = [k for k in simulate_options if k in ("xs", "p", "n", "reps", "methods", "progress")]
    if bad:
        raise ValueError(f"simulate_options may not set {bad[0]!r}: it is a study argument.")
    if sample == "iid":
        if p is None or xs is not None:
            raise ValueError("sample='iid' needs p=... (and no xs=...).")
        if callable(p):  # a domain sweep: each mechanism's d gets p(d) (p_at)
            d, ns = None, _check_ns(n)
        else:
            p = _validate.check_distribution("p", p)
            d, ns = int(p.shape[0]), _check_ns(n)
    else:
        if xs is None or p is not None:
            raise ValueError(f"sample={sample!r} needs xs=... (and no p=...).")
        if "d" in grids:
            raise ValueError(f"A grid over d needs sample='iid' with p=lambda d: ... (sample={sample!r} scores "
                             "every mechanism on the items of xs).")
        xs = np.asarray(_validate.check_items("xs", xs, np.iinfo(np.int32).max, ndim=1), np.int32)
        if xs.shape[0] < 1:
            raise ValueError("Expected xs to hold at least one user.")
        d = None
        if sample == "fixed":
            if n is not None:
                raise ValueError("sample='fixed' takes no n: every repetition uses the len(xs) users of xs.")
            ns = (int(xs.shape[0]),)
        else:
            ns = _check_ns(n)
            if max(ns) > xs.shape[0]:
                raise ValueError(f"Expected every n <= len(xs)={xs.shape[0]} (a subset of the population), "
                                 f"got n={max(ns)}.")
    methods, table = _check_method_table(methods, names, ns)
    return StudySpec(names, factories, grids, params, ns, reps, methods, metrics, sample, d, p, xs,
                     dict(simulate_options), table)


def p_at(spec: StudySpec, d: int) -> np.ndarray:
    """The iid model's ``p`` for mechanisms over ``d`` items: ``spec.p`` itself, or ``spec.p(d)`` (a domain
    sweep), checked to be a distribution of length ``d``.

    Raises:
      ValueError: a ``p`` of another length or not a distribution (naming ``d``).
    """
    if not callable(spec.p):
        return spec.p
    try:
        out = spec.p(d)
    except Exception as e:
        raise type(e)(f"p({d}) failed: {e}") from e
    return _validate.check_distribution(f"p({d})", out, d)


def grid_points(spec: StudySpec, name: str) -> list[dict]:
    """The parameter points of mechanism ``name``: the product of its parameters' grids, in grid order."""
    ps = spec.params[name]
    order = [g for g in spec.grids if g in ps]
    return [dict(zip(order, vals)) for vals in itertools.product(*(spec.grids[g] for g in order))]


def _signature(mech: Any) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(mech)
    return treedef, tuple((np.shape(x), jnp.result_type(x)) for x in leaves)


def point_label(spec: StudySpec, point: dict) -> str:
    """The grid point as the study's grids index it (``eps[1]=2.0, theta[0]=0.1``; ``no swept parameter``)."""
    return ", ".join(f"{g}[{spec.grids[g].index(v)}]={v!r}" for g, v in point.items()) or "no swept parameter"


def call_user(fn: Any, what: str, args: tuple = (), kwargs: dict | None = None) -> Any:
    """``fn(*args, **kwargs)`` for a caller's factory or metric; an error it raises is re-raised naming ``what``
    (the callable and the grid point): ``TypeError``/``ValueError`` keep their type, any other error (a
    ``ZeroDivisionError``, a ``KeyError`` in the caller's code) becomes a ``RuntimeError`` chained to it."""
    try:
        return fn(*args, **(kwargs or {}))
    except (TypeError, ValueError) as e:
        raise type(e)(f"{what} failed: {e}") from e
    except Exception as e:  # noqa: BLE001 - the caller's code: say which callable and point, keep the cause
        raise RuntimeError(f"{what} raised {type(e).__name__}: {e}") from e


def build(spec: StudySpec, name: str, point: dict) -> Mechanism:
    """``factories[name](**point)``, checked to be a mechanism inside the documented ranges (``validate_grid``); an
    error names the factory and the bad point's index in the grid (``eps[1]=150.0``)."""
    at = point_label(spec, point)
    mech = call_user(spec.factories[name], f"mechanisms[{name!r}]({point}) at study grid point {at}", kwargs=point)
    if not isinstance(mech, Mechanism):
        raise TypeError(f"Expected mechanisms[{name!r}]({point}) to return a mechanism, got {type(mech).__name__}.")
    try:  # the documented ranges hold at every point, also for a factory whose mechanism checks nothing itself
        _grid_check.validate_grid(mech, f"mechanisms[{name!r}]({', '.join(f'{g}={v!r}' for g, v in point.items())})")
    except (TypeError, ValueError) as e:
        raise type(e)(f"study grid point {at}: {e}") from e
    return mech


def expand(spec: StudySpec, name: str, d: int) -> list[tuple[list[dict], list[Mechanism], Any]]:
    """The groups of mechanism ``name``: ``[(points, mechs, mech)]``, ``mech`` a single mechanism for a one-point
    group, else a batched grid (leaves stacked along a leading axis, as ``jax.vmap(factory)(eps)`` builds).

    Points whose static parameters differ (OLH's ``g`` follows eps) land in different groups, one group per
    distinct signature, in order of first appearance.
    """
    groups: dict = {}
    for point in grid_points(spec, name):
        mech = build(spec, name, point)
        if d is not None and mech.d != d:
            raise ValueError(f"Expected mechanisms[{name!r}]({point}) over d={d} items (the length of "
                             f"{'p' if spec.sample == 'iid' else 'the items of xs'}), got d={mech.d}.")
        groups.setdefault(_signature(mech), []).append((point, mech))
    out = []
    for members in groups.values():
        points = [pt for pt, _ in members]
        mechs = [m for _, m in members]
        grid = mechs[0] if len(mechs) == 1 else jax.tree_util.tree_map(lambda *ls: jnp.stack(ls), *mechs)
        out.append((points, mechs, grid))
    return out
