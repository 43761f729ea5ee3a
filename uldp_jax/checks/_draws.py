"""The ``draws`` row of ``ul.check``: the width of the random words ``perturb_batch`` draws, read from its jaxpr
under ``jax_enable_x64`` (nothing is run).

* A draw without a dtype (``jax.random.uniform(k, shape)``) becomes 64-bit under ``jax_enable_x64``: twice the
  random words per user and different reports. That is a cost, not a wrong law: ``warn``, ``ok`` unchanged.
* A draw narrower than 32 bits (``jax.random.uniform(k, shape, jnp.float16)``: multiples of ``2^-10``) rounds
  the probabilities the sampler realizes, so its law is not the channel's, and at small eps the rounding alone
  can spend several times the claimed eps. It is flagged with the eps the sampler realizes: a black-box lower
  bound on many trials (``_leak.eps_bound``), ``FAIL`` where it exceeds the claim at the stated confidence.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.checks._report import CheckRow, skip


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


def check_draws(widths: set[int], realized: Any = None) -> CheckRow:
    """The ``draws`` row from the widths and, for narrow words, the realized-eps bound (``_leak.Bound``)."""
    if not widths:
        return CheckRow("draws", "pass", "perturb_batch draws no random words")
    if min(widths) < 32:
        text = f"{min(widths)}-bit random words (a draw in float16 / bfloat16 or a narrow integer): the " \
               "probabilities the sampler realizes are rounded"
        if realized is None:
            return CheckRow("draws", "FAIL", text + "; give every jax.random call a 32-bit dtype")
        status = "FAIL" if not realized.ok else "warn"
        return CheckRow("draws", status, f"{text}; realized eps >= {realized.eps_lower:.3g} (claimed "
                        f"{realized.claimed:.3g}; {realized.describe}); give every jax.random call a 32-bit dtype")
    if max(widths) <= 32:
        return CheckRow("draws", "pass", "32-bit random words, also under jax_enable_x64")
    return CheckRow("draws", "warn", f"{max(widths)}-bit random words under jax_enable_x64: give every jax.random "
                    "call a dtype (jnp.float32, jnp.int32) so that x64 changes neither the reports nor the cost")
