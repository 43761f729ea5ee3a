"""Statistical checks of samplers against exact channels (used by the test-suite; public for users)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.privacy import _channel


class ChiSquare(NamedTuple):
    """Pearson goodness-of-fit result: statistic, degrees of freedom, p-value (float64)."""

    stat: float
    dof: int
    pvalue: float


def report_index(mech: Any, ys: Any) -> np.ndarray:
    """Maps a batch of reports to channel column indices (items as is; bits as sum_j bit_j 2^j)."""
    return np.asarray(mech.report_index(ys))


def chi_square(observed: np.ndarray, expected_probs: np.ndarray, min_expected: float = 5.0) -> ChiSquare:
    """Pearson chi-square of counts against probabilities; cells with small expectation are pooled."""
    observed = np.asarray(observed, dtype=np.float64)
    probs = np.asarray(expected_probs, dtype=np.float64)
    n = observed.sum()
    expected = n * probs
    if np.any(observed[expected == 0] > 0):
        return ChiSquare(float("inf"), 0, 0.0)  # an impossible output occurred
    keep = expected >= min_expected
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    nz = exp > 0
    obs, exp = obs[nz], exp[nz]
    stat = float(np.sum((obs - exp) ** 2 / exp))
    dof = int(obs.size - 1)
    pvalue = float(jax.scipy.special.gammaincc(dof / 2.0, stat / 2.0)) if dof > 0 else 1.0
    return ChiSquare(stat, dof, pvalue)


def sampler_vs_channel(key: jax.Array, mech: Any, x: int, n: int, batched: bool = True,
                       Q: np.ndarray | None = None) -> ChiSquare:
    """Draws ``n`` reports of input ``x`` and tests them against row ``x`` of the exact channel.

    Args:
      key: PRNG key.
      mech: mechanism with an exact channel (or pass ``Q`` to test against another channel).
      x: the input item.
      n: number of draws.
      batched: use ``perturb_batch`` (True) or ``vmap`` of ``perturb_one`` over split keys (False).
      Q: channel to test against (default: ``channel(mech).Q``), e.g. a mis-parameterised one.
    """
    if Q is None:
        Q = _channel.channel(mech).Q
    xs = jnp.full((n,), x, dtype=jnp.int32)
    if batched:
        ys = mech.perturb_batch(key, xs)
    else:
        ys = jax.vmap(mech.perturb_one)(jax.random.split(key, n), xs)
    idx = report_index(mech, ys)
    counts = np.bincount(idx, minlength=Q.shape[1])
    return chi_square(counts, Q[x])
