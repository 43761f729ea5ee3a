"""Shared pieces of the paper reproductions: mechanism factories, Monte Carlo error curves, progress bars.

Experiments run on the public API only (``ul.simulate``, ``ul.estimation``, ``ul.metrics``); they loop in Python
over mechanisms and settings (a handful), never over users or repetitions (those are batched on device by
``ul.simulate``).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax import _progress
from uldp_jax import metrics as _metrics

def topk_f1(p_hat: jax.Array, p: jax.Array, k: int = 30) -> jax.Array:
    """F1 of the estimated top-``k`` items against the true top-``k`` (003 Fig 9); both sets have ``k`` items, so
    precision = recall = F1 = overlap / k."""
    est = jax.lax.top_k(p_hat, k)[1]
    true = jax.lax.top_k(jnp.broadcast_to(p, p_hat.shape), k)[1]
    return jnp.sum(jnp.any(est[..., :, None] == true[..., None, :], axis=-1), axis=-1) / k


def topk_ndcg(p_hat: jax.Array, p: jax.Array, k: int = 30) -> jax.Array:
    """NDCG@k of the estimated ranking with the true frequencies as relevances (003 Fig 9)."""
    disc = 1.0 / jnp.log2(jnp.arange(2, k + 2))
    pb = jnp.broadcast_to(p, p_hat.shape)
    est = jax.lax.top_k(p_hat, k)[1]
    dcg = jnp.sum(jnp.take_along_axis(pb, est, axis=-1) * disc, axis=-1)
    idcg = jnp.sum(jax.lax.top_k(pb, k)[0] * disc, axis=-1)
    return dcg / idcg


METRICS: dict[str, Callable] = {"tv": _metrics.tv, "mse": _metrics.mse, "l1": _metrics.l1, "mae": _metrics.mae,
                                "l2sq": _metrics.l2sq, "f1@30": topk_f1, "ndcg@30": topk_ndcg}
HIGHER_IS_BETTER = ("f1@30", "ndcg@30")
# Registry names of estimation methods and the labels the papers use.
METHOD_LABELS = {"emp": "emp", "emp+thr": "emp+thr", "em": "EM"}
# y-axis label per 001 metric: 001 calls its l2 loss sum_x (p_hat(x) - p(x))^2 "MSE" (Figs 10-13).
METRIC_AXIS = {"tv": "TV (l1 / 2)", "l2sq": "MSE (001: l2 loss, sum over x)"}


def _uldp(cls: type) -> Callable:
    def make(d: int, sensitive: Sequence[int], eps: Any, **kw):
        return cls(d, tuple(sensitive), eps, **kw)
    return make


# Paper label -> (factory(d, sensitive, eps, **kw), needs a sensitive set): labels for the CLI and the figures,
# not a capability table (what a mechanism can do is asked of the mechanism).
MECHANISMS: dict[str, tuple[Callable, bool]] = {
    "RR": (lambda d, sensitive, eps, **kw: ul.GRR(d, eps), False),
    "RAPPOR": (lambda d, sensitive, eps, **kw: ul.RAPPOR(d, eps), False),
    "OUE": (lambda d, sensitive, eps, **kw: ul.OUE(d, eps), False),
    "uRR": (_uldp(ul.URR), True),
    "uRAP": (_uldp(ul.URAP), True),
    "uSS": (_uldp(ul.USS), True),
    "uUE": (_uldp(ul.UUE), True),
    "uLH": (_uldp(ul.ULH), True),
    "uWheel": (_uldp(ul.UWheel), True),
    "HR": (lambda d, sensitive, eps, **kw: ul.HR(d, eps, **kw), False),
}


def mechanism_names() -> tuple[str, ...]:
    """Labels of the mechanisms the experiments can build."""
    return tuple(MECHANISMS)


def make_mechanism(label: str, d: int, sensitive: Sequence[int], eps: Any, **kw) -> Any:
    """Builds mechanism ``label`` (``"RR"``, ``"RAPPOR"``, ``"uRR"``, ``"uRAP"``, ``"uSS"``, ...) for one eps."""
    if label in MECHANISMS:
        return MECHANISMS[label][0](d, sensitive, eps, **kw)
    raise ValueError(f"Unknown mechanism label={label!r}; available: {', '.join(mechanism_names())}.")


def make_grid(label: str, d: int, sensitive: Sequence[int], eps_grid: Sequence[float], **kw) -> Any:
    """A batched grid of ``label`` mechanisms, one per epsilon (leaves with a leading axis)."""
    eps = jnp.asarray(np.asarray(eps_grid, np.float64), dtype=jnp.float32)
    probe = make_mechanism(label, d, sensitive, float(eps_grid[0]), **kw)  # validates static arguments
    del probe
    return jax.vmap(lambda e: make_mechanism(label, d, sensitive, e, **kw))(eps)


def available_methods(requested: Iterable[str]) -> tuple[str, ...]:
    """The requested estimation methods that are registered in this installation."""
    return tuple(m for m in requested if m in ul.estimation.method_names())


# Simulation path passed to ``ul.simulate_stats`` when it supports one ("per_user", or "auto" = the exact
# counts path where available). Experiments set it through their config key ``path``.
DEFAULT_PATH = "per_user"


def _simulate_kwargs(path: str | dict | None, label: str | None = None) -> dict:
    """``{"path": ...}`` for ``ul.simulate``; ``path`` may map mechanism labels to paths (others: default)."""
    if isinstance(path, dict):
        path = path.get(label)
    params = inspect.signature(ul.simulate_stats).parameters
    return {"path": path or DEFAULT_PATH} if "path" in params else {}


def _summarise(err: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    reps = err.shape[-1]
    se = err.std(-1, ddof=1) / np.sqrt(reps) if reps > 1 else np.zeros(err.shape[:-1])
    return err.mean(-1), se


def error_curve(key: jax.Array, label: str, d: int, sensitive: Sequence[int], eps: Sequence[float], p: np.ndarray,
                n: int, reps: int, methods: Sequence[str], metric: str = "tv", path: str | None = None,
                report_reps: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Mean and standard error of ``metric`` (over repetitions) per epsilon, for each estimation method.

    The mechanism grid over ``eps`` is simulated once (``ul.simulate_stats``, iid model, common random
    numbers) and every stats-based method is applied to the same statistics. Methods that need the reports
    (EM on the exact product likelihood of RAPPOR/uRAP) run on ``report_reps`` fresh repetitions, one at a time
    (the ``n x d`` reports of one repetition are the memory unit); with ``report_reps = 0`` they are skipped.

    Returns:
      ``{method: (mean float[len(eps)], se float[len(eps)])}``.
    """
    grid = make_grid(label, d, sensitive, eps)
    probe = make_mechanism(label, d, sensitive, float(eps[0]))
    stats, target, n = ul.simulate_stats(key, grid, p=p, n=n, reps=reps, **_simulate_kwargs(path, label))
    target = jnp.asarray(target, jnp.float32)
    out = {}
    for m in methods:
        if _stats_based(m, probe):
            est = jax.vmap(lambda mm, st: ul.estimate_from_stats(mm, st, n, m))(grid, stats)  # [g, r, d]
            out[m] = _summarise(np.asarray(METRICS[metric](est, target), np.float64))
        elif report_reps > 0:
            out[m] = _summarise(_report_errors(jax.random.fold_in(key, 7_919), label, d, sensitive, eps, p, n,
                                               report_reps, m, metric))
    return out


def reps_used(label: str, d: int, sensitive: Sequence[int], method: str, reps: int, report_reps: int) -> int:
    """Repetitions behind ``error_curve``'s value for ``method``: ``reps`` for stats-based methods,
    ``report_reps`` for the report-based ones (EM for RAPPOR/uRAP) — the CSV's ``reps`` column."""
    return reps if _stats_based(method, make_mechanism(label, d, sensitive, 1.0)) else report_reps


def _stats_based(method: str, mech: Any) -> bool:
    """Whether ``method`` estimates from the statistics (else it needs every report: EM for RAPPOR/uRAP)."""
    return ul.estimation.get_method(method, mech).input == "stats"


def _report_errors(key, label, d, sensitive, eps, p, n, reps, method, metric) -> np.ndarray:
    """``float[len(eps), reps]`` errors of a report-based method.

    ``ul.simulate`` regenerates each repetition's reports block by block as support lists (memory O(reported
    ones), never the dense ``n x d`` bits), so this scales to 001's census domains.
    """
    target = jnp.asarray(p, jnp.float32)
    err = np.zeros((len(eps), reps))
    for gi, e in enumerate(eps):
        mech = make_mechanism(label, d, sensitive, float(e))
        res = ul.simulate(jax.random.fold_in(key, gi), mech, p=p, n=n, reps=reps, methods=(method,),
                          path="per_user")
        err[gi] = np.asarray(METRICS[metric](res.estimates[method], target), np.float64)
    return err


def nonprivate_error(key: jax.Array, p: np.ndarray, n: int, reps: int, metric: str = "tv",
                     min_reps: int = 200) -> tuple[float, float]:
    """Error of the non-private empirical distribution of ``n`` iid users (001's "no privacy" line).

    Uses at least ``min_reps`` repetitions (a multinomial draw each; cheap) so the reference line is not noisier
    than the mechanisms' curves.
    """
    reps = max(reps, min_reps)
    pj = jnp.asarray(p, jnp.float32)
    counts = jax.random.multinomial(key, float(n), pj, shape=(reps, p.size))
    err = np.asarray(METRICS[metric](counts / n, pj), np.float64)
    return float(err.mean()), float(err.std(ddof=1) / np.sqrt(reps)) if reps > 1 else 0.0


def progress(total: int, desc: str, enabled: bool = True):
    """A progress bar on stderr when ``enabled`` (tqdm, else plain lines: ``uldp_jax._progress.progress_bar``)."""
    return _progress.progress_bar(total, desc, enabled)
