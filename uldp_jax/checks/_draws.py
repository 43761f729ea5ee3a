"""The ``draws`` row of ``ul.check``: the width of the random words ``perturb_batch`` draws, read from its jaxpr
under ``jax_enable_x64`` (nothing is run but the estimate below, for narrow words).

* A draw without a dtype (``jax.random.uniform(k, shape)``) becomes 64-bit under ``jax_enable_x64``: twice the
  random words per user and different reports. That is a cost, not a wrong law: ``warn``, ``ok`` unchanged.
* A draw narrower than 32 bits (``jax.random.uniform(k, shape, jnp.float16)``: multiples of ``2^-10``) rounds
  the probabilities the sampler realizes, so its law is not the channel the audit checked, and at small eps the
  rounding alone can spend several times the claimed eps: ``FAIL``, with the eps the sampler realizes, estimated
  from ``REALIZED_REPORTS / d`` reports of each input, at most 2^23 (item and bit reports: the largest log-ratio
  of two inputs' frequencies of one protected column, with its standard error, beside the claim).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.checks._report import CheckRow, skip
from uldp_jax.mechanisms.core import _compact

REALIZED_REPORTS = 1 << 24  # reports in all (at most 2^23 per input) estimating the eps narrow words realize
REALIZED_MIN_COUNT = 1000  # a column enters the estimate where both inputs reported it at least this often


def _eqns(jaxpr: Any):
    """Every equation of a jaxpr, its sub-jaxprs (scan, cond, pjit, custom rules) included."""
    for eqn in jaxpr.eqns:
        yield eqn
        for v in eqn.params.values():
            for j in (v if isinstance(v, (tuple, list)) else (v,)):
                inner = getattr(j, "jaxpr", j)
                if hasattr(inner, "eqns"):
                    yield from _eqns(inner)


def random_widths(key: jax.Array, mech: Any) -> set[int] | CheckRow:
    """Bit widths of the random words ``perturb_batch`` draws under x64 (or a skip row)."""
    xs = jnp.arange(int(mech.d), dtype=jnp.int32)
    try:
        with jax.enable_x64(True):
            jaxpr = jax.make_jaxpr(lambda k: mech.perturb_batch(k, xs))(key).jaxpr
    except (TypeError, ValueError, NotImplementedError) as err:
        return skip("draws", err)
    return {np.dtype(v.aval.dtype).itemsize * 8 for e in _eqns(jaxpr) if "random" in e.primitive.name
            for v in e.outvars if not jax.dtypes.issubdtype(v.aval.dtype, jax.dtypes.prng_key)}


def _columns(mech: Any, ys: Any) -> jax.Array:
    if mech.report_kind == "item":
        return ys.astype(jnp.int32)
    bits = jnp.asarray(_compact.to_dense(ys)).astype(jnp.int32)
    return (bits << jnp.arange(bits.shape[-1], dtype=jnp.int32)).sum(axis=-1)


def realized_eps(key: jax.Array, mech: Any, Q: np.ndarray, protected: np.ndarray, E: np.ndarray) -> str | None:
    """``"realized eps ~ 0.0039 +- 0.0005 (inputs 0, 1, column 0; claimed 0.001)"``: the pair and protected
    column whose frequency log-ratio most exceeds the claim ``E[x, x']``, from ``draws`` reports of each input
    (compiled, in chunks); ``None`` for reports that are neither items nor bits."""
    if mech.report_kind not in ("item", "bits"):
        return None
    d, m = Q.shape
    draws = min(1 << 23, REALIZED_REPORTS // d)
    b = max(1, min(draws, (1 << 20) // d))
    steps = -(-draws // b)
    xs = jnp.repeat(jnp.arange(d, dtype=jnp.int32), b)
    rows = jnp.repeat(jnp.arange(d, dtype=jnp.int32), b) * m

    @jax.jit
    def counts(mech: Any, key: jax.Array) -> jax.Array:
        def body(c: Any, acc: jax.Array) -> jax.Array:
            return acc.at[rows + _columns(mech, mech.perturb_batch(jax.random.fold_in(key, c), xs))].add(1)

        return jax.lax.fori_loop(0, steps, body, jnp.zeros(d * m, jnp.int32))

    C = np.asarray(counts(mech, key), np.float64).reshape(d, m)
    n = steps * b
    enough = (C >= REALIZED_MIN_COUNT) & protected[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(C[:, None, :] / C[None, :, :])  # [x, x', y]
        v = (1.0 - C / n) / C  # variance of log(C / n), delta method
        se = np.sqrt(v[:, None, :] + v[None, :, :])
    excess = np.where(enough[:, None, :] & enough[None, :, :] & np.isfinite(E)[:, :, None],
                      ratio - np.nan_to_num(E, posinf=0.0)[:, :, None], -np.inf)
    x, x2, y = np.unravel_index(int(np.argmax(excess)), excess.shape)
    if not np.isfinite(excess[x, x2, y]):
        return f"no column reported {REALIZED_MIN_COUNT} times by two inputs in {n} draws each"
    return (f"realized eps ~ {ratio[x, x2, y]:.3g} +- {se[x, x2, y]:.1g} (inputs {x}, {x2}, column {y}, {n} draws "
            f"each; claimed {E[x, x2]:.3g})")


def check_draws(widths: set[int], realized: str | None = None) -> CheckRow:
    """The ``draws`` row from the widths and, for narrow words, the eps they realize (``realized_eps``)."""
    if not widths:
        return CheckRow("draws", "pass", "perturb_batch draws no random words")
    if min(widths) < 32:
        text = f"{min(widths)}-bit random words (a draw in float16 / bfloat16 or a narrow integer): the " \
               "probabilities the sampler realizes are rounded"
        realized = "" if realized is None else f"; {realized}"
        return CheckRow("draws", "FAIL", f"{text}{realized}; give every jax.random call a 32-bit dtype")
    if max(widths) <= 32:
        return CheckRow("draws", "pass", "32-bit random words, also under jax_enable_x64")
    return CheckRow("draws", "warn", f"{max(widths)}-bit random words under jax_enable_x64: give every jax.random "
                    "call a dtype (jnp.float32, jnp.int32) so that x64 changes neither the reports nor the cost")
