r"""Error metrics of a study and their theory values (``ul.theory``), per repetition and per grid point.

Built-in metrics, in float64 over the last axis (``ul.metrics`` has the same formulas). Units, once: a name
says whether it is a **sum over items** or a **per-item mean**; ``ul.theory.mse`` is a sum over items, so it is
the theory of ``"mse_sum"`` and ``d`` times that of ``"mse_per_item"``.

* ``"mse_per_item"``: squared error per item, :math:`\frac1d\sum_x(\hat p(x)-p(x))^2` (003 §6's per-item MSE;
  ``ul.metrics.mse``; theory ``ul.theory.mse / d``);
* ``"mse_sum"``: squared error summed over items, :math:`\sum_x(\hat p(x)-p(x))^2` (001's :math:`l_2^2` loss,
  003 eq 28's unit, ``ul.metrics.l2sq``; theory ``ul.theory.mse``);
* ``"l1"``: :math:`\sum_x|\hat p(x)-p(x)|` (a sum over items; theory ``ul.theory.l1``);  ``"tv"``: total
  variation, ``l1 / 2`` (001 §6).

Aliases, kept for existing scripts (rows carry the name given): ``"mse"`` is ``"mse_per_item"`` and ``"l2"`` is
``"mse_sum"``.

A user metric is a callable ``f(est float32[..., d], target float64[d]) -> [...]`` (one value per estimate).

Theory (the unbiased empirical estimator, method ``"emp"``, only; other methods get NaN): from the per-item
variances :math:`v_x` of ``ul.theory.item_variance`` (closed form, or exact channel moments for a mechanism
without one), ``mse`` is :math:`\frac1d\sum v_x`, ``l2`` is :math:`\sum v_x` (both exact) and ``l1`` is
:math:`\sqrt{2/\pi}\sum\sqrt{v_x}` (the normal approximation behind 001 Props 4 and 7, exact as
:math:`n\to\infty`; ``tv`` half of it). The sampling models give :math:`v`:

* iid (users drawn from ``p``): the iid variance;
* fixed (the users ``xs``): the fixed-model variance at the empirical distribution of ``xs``;
* population (``n`` of the ``N`` users of ``xs``, without replacement, scored against the population's
  distribution ``p``): the fixed-model variance at ``p`` plus the subset's own error,
  :math:`v_x = v^{fixed}_x(p) + \frac{p_x(1-p_x)}{n}\frac{N-n}{N-1}`. Exact: the fixed-model variance of a
  linear unbiased estimator is linear in the true counts (so its mean over subsets is its value at ``p``), the
  estimate is unbiased for the subset's distribution (no cross term), and a subset's frequency of ``x`` has the
  hypergeometric variance :math:`\frac{p_x(1-p_x)}{n}\frac{N-n}{N-1}` (finite-population correction).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

from uldp_jax import theory
from uldp_jax.studies import _spec

THEORY_METHOD = "emp"
BUILTIN = ("mse_per_item", "mse_sum", "l1", "tv")
ALIASES = {"mse": "mse_per_item", "l2": "mse_sum"}


def canonical(name: str) -> str:
    """The built-in metric an (alias) name stands for."""
    return ALIASES.get(name, name)


def _read_only(a: np.ndarray) -> np.ndarray:
    out = np.array(a, copy=True)
    out.setflags(write=False)
    return out


def evaluate(name: str, metric: Any, est: Any, target: np.ndarray, where: str = "") -> np.ndarray:
    """``float64[...]``: metric ``metric`` (a built-in name or a callable) of ``est [..., d]`` against ``target``.

    A callable sees read-only copies of ``est`` and ``target``: one that writes into them fails (naming it)
    instead of changing what later metrics and rows see.

    Raises:
      ValueError: when a callable returns a shape other than ``est.shape[:-1]`` or values that are not numbers.
      TypeError, ValueError, RuntimeError: when a callable raises (the message names it and ``where``, the
        mechanism, grid point, n and method).
    """
    est = np.asarray(est)
    if isinstance(metric, str):
        metric = canonical(metric)
        err = est.astype(np.float64) - target
        if metric == "mse_per_item":
            return np.mean(err**2, axis=-1)
        if metric == "mse_sum":
            return np.sum(err**2, axis=-1)
        l1 = np.sum(np.abs(err), axis=-1)
        return l1 if metric == "l1" else 0.5 * l1
    what = f"metric {name!r}" + (f" at {where}" if where else "")
    raw = _spec.call_user(metric, what, (_read_only(est), _read_only(target)))
    try:
        out = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Expected {what} to return numbers, got {type(raw).__name__} ({e}).") from None
    if out.shape != est.shape[:-1]:
        raise ValueError(f"Expected {what} to return one value per estimate, shape {est.shape[:-1]} "
                         f"for estimates of shape {est.shape}, got shape {out.shape}.")
    return out


def item_variance(mech: Any, target: np.ndarray, n: int, sample: str,
                  population: int | None = None) -> tuple[Any, str | None]:
    """``(float64[d] or None, reason)``: the per-item variance of the empirical estimate under the sampling model,
    or ``None`` and why the library has no theory for ``mech`` (``ul.theory``'s error: no closed form and no
    usable exact channel), which ``ul.study`` reports instead of a silent NaN."""
    try:
        with jax.enable_x64(True):
            v = np.asarray(theory.item_variance(mech, target, n, "iid" if sample == "iid" else "fixed"),
                           np.float64)
    except (TypeError, ValueError, NotImplementedError) as e:  # no closed form and no usable exact channel
        return None, f"{type(e).__name__}: {e}"
    if sample == "population":
        N = int(population)
        fpc = (N - n) / (N - 1) if N > 1 else 0.0
        v = v + target * (1.0 - target) / n * fpc
    return v, None


def theory_value(metric: Any, method: str, v: Any) -> float:
    """The theory value of a built-in ``metric`` for ``method`` from per-item variances ``v`` (NaN if none):
    ``mse_sum`` is ``ul.theory.mse``'s unit (the sum over items), ``mse_per_item`` the per-item mean."""
    if v is None or method != THEORY_METHOD or not isinstance(metric, str):
        return math.nan
    v = np.maximum(v, 0.0)
    metric = canonical(metric)
    if metric == "mse_per_item":
        return float(np.mean(v))
    if metric == "mse_sum":
        return float(np.sum(v))
    l1 = math.sqrt(2.0 / math.pi) * float(np.sum(np.sqrt(v)))
    return l1 if metric == "l1" else 0.5 * l1


def summarize(values: np.ndarray) -> tuple[float, float]:
    """``(mean, standard error)`` of per-repetition values (the SE is NaN for one repetition)."""
    r = values.shape[0]
    mean = float(np.mean(values))
    se = float(np.std(values, ddof=1) / math.sqrt(r)) if r > 1 else math.nan
    return mean, se


def z_score(mean: float, se: float, theory_val: float) -> float:
    """``(mean - theory) / se``; NaN without a theory value or a positive SE (0 when both agree exactly)."""
    if math.isnan(theory_val) or math.isnan(se):
        return math.nan
    if se == 0.0:
        return 0.0 if mean == theory_val else math.nan
    return (mean - theory_val) / se
