r"""Gradient tuning of mechanism parameters with optax on closed-form objectives.

The solver is a pure ``(init, step)`` pair (``GradientTuner``) run by ``jax.lax.scan``; parameters live on an
unconstrained scale (``Domain.to_param``: logit for ``(0, 1)``, scaled logit for a bounded interval such as
``k in [1, s-1]``, log for ``g > 1``) and the loss is ``log`` of the closed-form risk (scale-free). The default
optimizer is Adam with a decaying step (``default_optimizer``); any optax transformation works
(``optax.lbfgs()`` included).

Objectives (``uldp_jax.theory``): ``"mse"`` (n * fixed-model MSE; the iid model differs by a parameter-free
constant, so it has the same optimum) and ``"l1"`` (asymptotic expected l1 loss, 001 Props 4/7 form, which
depends on the whole distribution ``p``). Integer parameters (``k``, ``g``) are relaxed to reals, then the
neighbouring integers of the continuous optimum are compared exactly (``jnp.where``, so this also vmaps).
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from uldp_jax import mechanisms as _mechanisms
from uldp_jax.mechanisms.core import _base, _family
from uldp_jax.theory import _families, _mse

OBJECTIVES = ("mse", "l1")
MAX_G = 2.0**31 - 1.0  # largest hash range a ULH/OLH accepts (int32 values)


class TuneState(NamedTuple):
    """State of the gradient tuner.

    Attributes:
      u: pytree of unconstrained parameters (float arrays, usually ``shape=()``).
      opt_state: the optax state.
    """

    u: Any
    opt_state: Any


class TuneInfo(NamedTuple):
    """Per-step diagnostics.

    Attributes:
      loss: ``shape=(), float``: the objective (log risk) at the parameters before the step.
      grad_norm: ``shape=(), float``: l2 norm of its gradient.
    """

    loss: jax.Array
    grad_norm: jax.Array


class GradientTuner(NamedTuple):
    """A pure optimisation algorithm: ``init(u0) -> TuneState``, ``step(state) -> (TuneState, TuneInfo)``."""

    init: Callable[[Any], TuneState]
    step: Callable[[TuneState], tuple[TuneState, TuneInfo]]


DEFAULT_STEPS = 1500


def default_optimizer() -> Any:
    """Adam with the step size halved every 100 steps (0.2 -> ~1e-5 over ``DEFAULT_STEPS``).

    On the log of these smooth one-dimensional objectives it reaches the optimum to ~1e-12 relative, and it
    compiles in about a second (``optax.lbfgs()`` also works, with a slower compile).
    """
    return optax.adam(optax.exponential_decay(0.2, 100, 0.5))


def gradient_tuner(loss_fn: Callable[[Any], jax.Array], optimizer: Any = None) -> GradientTuner:
    """Builds the ``(init, step)`` pair minimising ``loss_fn(u)`` with ``optimizer`` (default Adam, see above)."""
    opt = default_optimizer() if optimizer is None else optimizer
    if not isinstance(opt, optax.GradientTransformationExtraArgs):
        opt = optax.with_extra_args_support(opt)
    vg = jax.value_and_grad(loss_fn)
    value_and_grad = lambda u, state: vg(u)  # noqa: E731

    def init(u0: Any) -> TuneState:
        return TuneState(u0, opt.init(u0))

    def step(state: TuneState) -> tuple[TuneState, TuneInfo]:
        value, grad = value_and_grad(state.u, state=state.opt_state)
        updates, opt_state = opt.update(grad, state.opt_state, state.u, value=value, grad=grad, value_fn=loss_fn)
        u = optax.apply_updates(state.u, updates)
        return TuneState(u, opt_state), TuneInfo(value, optax.tree.norm(grad))

    return GradientTuner(init, step)


def run_tuner(tuner: GradientTuner, u0: Any, steps: int) -> tuple[TuneState, TuneInfo]:
    """Runs ``steps`` iterations with ``lax.scan``; returns the final state and the stacked ``TuneInfo``."""
    return jax.lax.scan(lambda st, _: tuner.step(st), tuner.init(u0), None, length=steps)


class Domain(NamedTuple):
    """Open interval ``(lo, hi)`` of a parameter (``hi = inf``: a log transform above ``lo``)."""

    lo: Any
    hi: Any

    def to_param(self, u: Any) -> Any:
        if self.hi is None:
            return self.lo + jnp.exp(u)
        return self.lo + (self.hi - self.lo) * jax.nn.sigmoid(u)

    def to_unconstrained(self, x: Any) -> Any:
        if self.hi is None:
            return jnp.log(jnp.maximum(x - self.lo, 1e-12))
        r = jnp.clip((x - self.lo) / (self.hi - self.lo), 1e-9, 1.0 - 1e-9)
        return jnp.log(r) - jnp.log1p(-r)


def family_domain(fam: _families.Family, s: Any) -> tuple[Any, Any]:
    """``(lo, hi)`` the family declares for its parameter (``Family.domain(s)``; ``(0, 1)`` when it declares none)."""
    if fam.domain is None:
        return 0.0, 1.0
    lo, hi = fam.domain(s)
    return lo, hi


def _unbounded(hi: Any) -> bool:
    """``hi`` is infinite or at least ``MAX_G`` (a static decision: traced ends are bounded)."""
    if hi is None:
        return True
    if isinstance(hi, (int, float)):
        return math.isinf(hi) or hi >= MAX_G
    return False


def domain_of(fam: _families.Family, s: Any) -> Domain:
    """The relaxed (open) domain the optimizer searches: the family's declared ``domain(s)``.

    Continuous parameters search ``(lo, hi)`` (a closed domain's end points are reached by the clip in
    ``solve``); integer parameters search ``(lo, hi)`` and settle on an integer of ``[lo, hi]``, or, unbounded
    above (``hi >= 2**31 - 1``), search ``(lo - 1, inf)`` on a log scale (``g``).
    """
    lo, hi = family_domain(fam, s)
    if _unbounded(hi):
        return Domain(lo - 1.0 if fam.integer else lo, None)
    return Domain(lo, hi)


def check_in_domain(fam: _families.Family, s: Any, value: Any, name: str = "value") -> Any:
    """Raises ``ValueError`` unless the concrete ``value`` lies in the family's declared domain (open, closed or
    integer, see ``Family``); returns ``value``."""
    lo, hi = (float(v) for v in family_domain(fam, s))
    v = float(value)
    if fam.integer:
        ok = v == math.floor(v) and lo <= v <= hi
        kind = f"an integer in [{lo:g}, {hi:g}]"
    elif fam.closed:
        ok = lo <= v <= hi
        kind = f"in [{lo:g}, {hi:g}]"
    else:
        ok = lo < v < hi
        kind = f"in ({lo:g}, {hi:g})"
    if not (math.isfinite(v) and ok):
        raise ValueError(f"Expected {name}={v!r} for {fam.name}.{fam.param} to be {kind}, its declared domain.")
    return value


def risk_fn(fam: _families.Family, eps: Any, s: Any, theta_n: Any, objective: str = "mse", p: Any = None,
            mask: Any = None) -> Callable[[Any], Any]:
    """``x -> objective`` for the family at ``(eps, s, theta_n)`` (``"l1"`` needs ``p`` and the sensitive mask)."""
    if objective == "mse":
        return lambda x: fam.risk(eps, s, theta_n, x)
    if objective == "l1":
        def l1(x):
            P, Q, Z = fam.probs(eps, s, x)
            var = _mse.pure_item_variance(P, Q, None if fam.ldp else Z, mask, p, 1.0, "iid")
            return jnp.sum(jnp.sqrt(jnp.maximum(var, 0.0)), axis=-1)
        return l1
    raise ValueError(f"Expected objective={objective!r} in {OBJECTIVES}.")


def solve(fam: _families.Family, fn: Callable[[Any], Any], s: Any, x0: Any, steps: int = DEFAULT_STEPS,
          optimizer: Any = None) -> tuple[Any, Any, TuneInfo]:
    """Minimises ``fn`` over the family's domain from ``x0``; returns ``(x, fn(x), info)``.

    Integer families return the better neighbouring integer of the continuous optimum (``g`` in
    ``[2, 2**31 - 1]``, ``k`` in ``[1, s - 1]``: the declared ``Family.domain``), as a float array; continuous
    results stay inside the declared (open or closed) domain. Pure JAX: vmappable over ``s``, ``x0`` and ``fn``'s inputs.
    """
    dom = domain_of(fam, s)
    lo, hi = family_domain(fam, s)
    hi = MAX_G if _unbounded(hi) else hi
    u0 = dom.to_unconstrained(jnp.asarray(x0, dtype=jnp.result_type(float)))
    state, info = run_tuner(gradient_tuner(lambda u: jnp.log(fn(dom.to_param(u))), optimizer), u0, steps)
    x = dom.to_param(state.u)
    if fam.integer:
        a = jnp.clip(jnp.floor(x), jnp.ceil(lo), jnp.floor(hi))
        b = jnp.clip(jnp.ceil(x), jnp.ceil(lo), jnp.floor(hi))
        x = jnp.where(fn(b) < fn(a), b, a)
    elif fam.closed:
        x = jnp.clip(x, lo, hi)
    else:  # the open interval: a saturated sigmoid must not return an end point
        lo_, hi_ = jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype)
        x = jnp.clip(x, jnp.nextafter(lo_, hi_), jnp.nextafter(hi_, lo_))
    return x, fn(x), info


def optimize(name: str, eps: Any, s: Any, theta_n: Any = 0.0, x0: Any = None, steps: int = DEFAULT_STEPS,
             optimizer: Any = None) -> tuple[Any, Any]:
    """MSE-optimal parameter of mechanism family ``name`` at ``(eps, s, theta_n)`` by gradient descent.

    A pure JAX function of ``eps``, ``s`` (a float for the relaxation; ``d`` for LDP families) and ``theta_n``:
    ``jax.vmap`` it over a grid of ``(eps, s)``. Run under ``jax.enable_x64(True)`` for float64.

    Args:
      name: a mechanism class whose closed form (``_family.of_class``) has a tunable parameter, or its name in
        ``ul.mechanisms``: ``"URAP"``, ``"RAPPOR"``, ``"UE"``, ``"UUE"``, ``"USS"``, ``"SS"``, ``"ULH"``,
        ``"OLH"``, ``"UWheel"``, ``"Wheel"``.
      eps, s, theta_n: privacy budget, number of sensitive items, non-sensitive mass.
      x0: starting value (default: the middle of the domain; ``g0 = e^eps / 2 + 1``).
      steps: optimizer iterations.
      optimizer: optax transformation (default ``default_optimizer()``).

    Returns:
      ``(param, n * MSE_fixed at param)``.
    """
    cls = getattr(_mechanisms, name, None) if isinstance(name, str) else name
    fam = _family.of_class(cls) if isinstance(cls, type) and issubclass(cls, _base.Mechanism) else None
    if fam is None or fam.param is None:
        raise ValueError(f"Expected name={name!r} to be a mechanism class (or its name in ul.mechanisms) whose "
                         "closed form has a tunable parameter, e.g. 'URAP', 'USS', 'OLH'.")
    eps = jnp.asarray(eps)
    s = jnp.asarray(s, dtype=eps.dtype)
    if x0 is None:
        x0 = {"k": 0.5 * s, "g": 0.5 * jnp.exp(jnp.minimum(eps, 30.0)) + 2.0}.get(fam.param, 0.5)
        x0 = jnp.maximum(x0, 1.5) if fam.param == "k" else x0
    x, val, _ = solve(fam, risk_fn(fam, eps, s, 0.0 if fam.ldp else theta_n), s, x0, steps, optimizer)
    return x, val


def minimize(loss_fn: Callable[[dict], Any], init: dict, domains: dict, steps: int = DEFAULT_STEPS,
             optimizer: Any = None, log: bool = True) -> tuple[dict, TuneInfo]:
    """Jointly minimises ``loss_fn(params)`` over several bounded parameters (a dict), e.g. custom objectives.

    Args:
      loss_fn: ``{name: value} -> scalar`` (positive when ``log``); pure JAX.
      init: ``{name: starting value}``.
      domains: ``{name: (lo, hi)}`` open intervals (``hi=None``: ``(lo, inf)`` with a log transform).
      steps, optimizer: as in ``solve``. The default Adam schedule is tuned for the one-dimensional closed forms;
        for coupled (curved) objectives pass ``optimizer=optax.lbfgs()`` (about 100 steps).
      log: minimise ``log(loss_fn)`` (scale-free; requires a positive objective).

    Returns:
      ``({name: optimum}, TuneInfo per step)``.
    """
    missing = set(init) - set(domains)
    if missing:
        raise ValueError(f"Expected domains for every parameter in init, missing {sorted(missing)}.")
    doms = {k: Domain(*domains[k]) for k in init}
    u0 = {k: doms[k].to_unconstrained(jnp.asarray(v, dtype=jnp.result_type(float))) for k, v in init.items()}

    def f(u):
        val = loss_fn({k: doms[k].to_param(u[k]) for k in u})
        return jnp.log(val) if log else val

    state, info = run_tuner(gradient_tuner(f, optimizer), u0, steps)
    return {k: doms[k].to_param(state.u[k]) for k in state.u}, info
