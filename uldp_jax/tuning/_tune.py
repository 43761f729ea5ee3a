"""``ul.tune``: a new mechanism of the same kind with its parameter optimised on a closed-form objective."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _grid_check
from uldp_jax.privacy import audit as run_audit
from uldp_jax.theory import _families, _mse
from uldp_jax.tuning import _optimize

# Largest channel (d * m entries) that ``tune`` audits by default.
AUDIT_MAX_ENTRIES = 2**18


class TuneResult(NamedTuple):
    """What ``tune(..., return_info=True)`` returns beside the mechanism.

    Attributes:
      params: ``{name: value}`` chosen (Python floats; ints for integer parameters).
      objective: the objective at the chosen parameters (``n * MSE_fixed`` for ``"mse"``; the l1 sum of standard
        deviations times ``sqrt(n)`` for ``"l1"``).
      initial: the objective at the mechanism's original parameters.
      loss_trace: ``float[steps]``: log-objective per optimizer step (continuous relaxation).
    """

    params: dict
    objective: float
    initial: float
    loss_trace: np.ndarray


@functools.partial(jax.jit, static_argnames=("fam", "objective", "steps", "optimizer"))
def _solve_jit(fam, eps, s, theta_n, p, mask, x0, objective, steps, optimizer):
    fn = _optimize.risk_fn(fam, eps, s, theta_n, objective, p, mask)
    return _optimize.solve(fam, fn, s, x0, steps, optimizer)


def _check_objective(objective: Any) -> str:
    if objective not in _optimize.OBJECTIVES:
        raise ValueError(f"Expected objective={objective!r} to be one of {_optimize.OBJECTIVES}.")
    return objective


def tune(mech: _base.Mechanism, *, p: Any = None, theta_n: Any = None, objective: str = "mse",
         params: Sequence[str] | None = None, steps: int = _optimize.DEFAULT_STEPS, optimizer: Any = None,
         audit: bool | None = None, return_info: bool = False) -> Any:
    """Returns a new mechanism of ``mech``'s kind with its utility parameter optimised by optax.

    The tuned parameter is ``theta`` (URAP, RAPPOR), ``p`` (UUE, UE), ``k`` (USS, SS), ``g`` (ULH, OLH) or ``l``
    (UWheel, Wheel), or a mechanism's own ``closed_form()`` parameter, searched inside the domain its ``Family``
    declares (open, closed or integer; see ``ul.theory.Family``) and checked against it; it is optimised on an
    unconstrained scale (logit / scaled logit / log) by Adam (optax) on the log of the closed-form objective in
    float64, and integer parameters are settled by comparing the neighbouring integers of the continuous optimum
    exactly. Privacy is unchanged: every value in the parameter's domain gives
    the same ``eps`` guarantee (by default the result is re-audited from its exact channel when that is small).

    Args:
      mech: the mechanism to tune (a concrete, single mechanism).
      p: ``float[d]`` true (or assumed) distribution; the ``"mse"`` objective uses its non-sensitive mass,
        ``"l1"`` the whole vector. Or
      theta_n: assumed non-sensitive mass in ``[0, 1]`` (``"mse"`` only; ignored by LDP mechanisms, for which
        neither is needed).
      objective: ``"mse"`` (expected squared l2, ``ul.theory.mse``) or ``"l1"`` (asymptotic expected l1,
        ``ul.theory.l1``).
      params: parameter names to tune (default: the mechanism's one tunable parameter).
      steps: optimizer iterations.
      optimizer: optax transformation (default ``ul.tuning.default_optimizer()``).
      audit: re-audit the result from its exact channel (default: when ``d * num_outputs <= 2**18``).
      return_info: also return a ``TuneResult``.

    Returns:
      The tuned mechanism (and a ``TuneResult`` when ``return_info``).

    Raises:
      TypeError: ``mech`` has no closed form or no tunable parameter.
      ValueError: unknown ``objective``; ``p`` not a distribution; ``theta_n`` outside ``[0, 1]``; both or
        (for ``"l1"``) neither of ``p``/``theta_n``; a GLUTF ``z_rule`` other than ``"max"``; a batched ``mech``.
    """
    objective = _check_objective(objective)
    if not isinstance(mech, _base.Mechanism):
        raise TypeError(f"Expected mech to be a uldp_jax mechanism (a ul.Mechanism subclass), got "
                        f"{type(mech).__name__}.")
    _grid_check.validate_grid(mech)
    steps = _validate.check_int("steps", steps, minimum=1)
    if audit is not None:
        _validate.check_bool("audit", audit)
    _validate.check_bool("return_info", return_info)
    if optimizer is not None and not (hasattr(optimizer, "init") and hasattr(optimizer, "update")):
        raise TypeError(f"Expected optimizer={optimizer!r} to be an optax GradientTransformation (init, update).")
    fam = _families.family_of(mech)
    if fam.generic and _family.of_class(type(mech)) is not None:  # a named GLUTF mechanism with another z
        raise ValueError(f"Expected mech.z_rule='max' to tune, got {mech.z_rule!r} (closed forms assume docs/errata.md#003-theorem-1-glutfs-valid-z z).")
    if fam.param is None:
        raise TypeError(f"Expected mech with a tunable parameter, got {type(mech).__name__}, which has none.")
    if params is not None:
        params = tuple(params)
        if params != (fam.param,):
            raise ValueError(f"Expected params={params!r} to be ({fam.param!r},): {type(mech).__name__} has one "
                             "tunable parameter (use ul.tuning.minimize for custom joint objectives).")
    eps = _base_eps(mech)
    s, mask = _families.sizes(mech, fam)
    if p is not None and theta_n is not None:
        raise ValueError("Pass either p=... or theta_n=..., not both.")
    if p is not None:
        p64 = _validate.check_distribution("p", p, mech.d)
        th = 0.0 if fam.ldp else float(p64[~mask].sum())
    else:
        if objective == "l1":
            raise ValueError("objective='l1' depends on the whole distribution: pass p=... (theta_n is not enough).")
        if theta_n is None and not fam.ldp:
            raise ValueError("Pass p=... or theta_n=... (the non-sensitive mass the objective depends on).")
        th = 0.0 if fam.ldp else float(_mse.check_theta_n(theta_n))
        p64 = np.full(mech.d, 1.0 / mech.d)
    x0 = _families.param_value(mech, fam)
    with jax.enable_x64(True):
        x, val, info = _solve_jit(fam, jnp.float64(eps), jnp.float64(s), jnp.float64(th), jnp.asarray(p64),
                                  jnp.asarray(mask), jnp.float64(x0), objective, int(steps), optimizer)
        fn = _optimize.risk_fn(fam, jnp.float64(eps), jnp.float64(s), jnp.float64(th), objective,
                               jnp.asarray(p64), jnp.asarray(mask))
        initial = float(fn(jnp.float64(x0)))
        value, best = float(x), float(val)
        if best > initial:  # never return something worse than the input (e.g. a stalled line search)
            value, best = float(x0), initial
    value = int(round(value)) if fam.integer else value
    _optimize.check_in_domain(fam, s, value, name=f"the tuned {fam.param}")
    new = fam.tuned(mech, value, None if fam.ldp else th)
    _maybe_audit(new, audit)
    if return_info:
        return new, TuneResult({fam.param: value}, best, initial, np.asarray(info.loss))
    return new


def _base_eps(mech: Any) -> float:
    eps = mech.eps
    if not _validate.is_concrete(eps) or np.ndim(eps) != 0:
        raise ValueError(f"Expected a single concrete mechanism (scalar eps), got eps with shape {np.shape(eps)}; "
                         "use ul.tuning.optimize under jax.vmap for grids.")
    return float(eps)


def _maybe_audit(mech: Any, audit: bool | None) -> None:
    if audit is None:
        try:
            audit = int(mech.d) * int(mech.num_outputs) <= AUDIT_MAX_ENTRIES
        except (AttributeError, OverflowError, ValueError):
            audit = False
    if not audit:
        return
    rep = run_audit(mech)
    if not rep.ok:
        raise RuntimeError(f"Tuned {type(mech).__name__} fails its audit (eps={rep.eps:.6g} > {rep.nominal_eps}).")
