"""Collaborative sampling (003 §5.4 and §6.3): estimate theta_N on a pilot, tune, run the rest, combine.

The parameters of uRAP/uSS/uUE/uLH/uWheel depend on the non-sensitive mass theta_N, which nobody knows in
advance. 003 starts from an arbitrary theta (0), lets a pilot fraction of the users (5%) report with that
mechanism, estimates theta_N from their reports, and runs the mechanism tuned for the estimate on the
remaining users. ``collaborative_simulate`` runs this whole protocol for ``reps`` independent repetitions:

1. pilot: ``n_pilot = round(pilot * n)`` users report with ``pilot_mech`` (default ``mech`` as given);
   ``theta_hat = clip(sum_{x in X_N} p_hat_pilot(x), 0, 1)`` (empirical estimator);
2. tune: per repetition, the MSE-optimal parameter for ``theta_hat`` (``ul.tuning.optimize``, optax, vmapped);
3. main: the other ``n - n_pilot`` users report with the tuned mechanism of their repetition;
4. combine: ``"weighted"`` (default) ``(n_pilot p_hat_pilot + n_main p_hat_main) / n``, or ``"main"``.

Every user reports once, so the protocol has the mechanisms' ULDP guarantee. Randomness: the pilot uses
``fold_in(key, 0)`` and the main stage ``fold_in(key, 1)``, each with ``ul.simulate``'s per-repetition and
per-block layout: both stages run the engine's per-user kernel (``uldp_jax.engine._kernels``). Model: iid
(``p``, ``n``), or fixed (``xs``, split once at random into pilot and main users).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _api, _sizing, _validate
from uldp_jax.mechanisms import Mechanism
from uldp_jax.engine import _kernels, _plan
from uldp_jax.theory import _families
from uldp_jax.tuning import _optimize

COMBINE = ("weighted", "main")


class CollabResult(NamedTuple):
    """Output of ``collaborative_simulate``.

    Attributes:
      estimates: ``float[r, d]`` combined estimates.
      main_estimates: ``float[r, d]`` estimates from the main users only.
      pilot_estimates: ``float[r, d]`` estimates from the pilot users (``pilot_mech``).
      theta_hat: ``float[r]`` pilot estimates of theta_N.
      params: ``float[r]`` tuned parameter per repetition (integers for ``k``/``g``).
      target: ``float64[d]`` the distribution being estimated.
      n_pilot, n_main: users in each stage.
    """

    estimates: jax.Array
    main_estimates: jax.Array
    pilot_estimates: jax.Array
    theta_hat: jax.Array
    params: np.ndarray
    target: np.ndarray
    n_pilot: int
    n_main: int


def _population(mech: Any, iid: bool, p: Any, xs: Any, n: int, block_size: int) -> tuple[Any, int]:
    """One stage's per-user population in the engine's layout and its blocks per chunk (the engine's sizing)."""
    num_blocks = math.ceil(n / block_size)
    chunk_blocks = _plan.choose_chunk_blocks(mech, block_size, num_blocks, _sizing.sizing().chunk_bytes)
    length = math.ceil(num_blocks / chunk_blocks) * chunk_blocks * block_size
    return _plan.per_user_data(xs, p, iid, n, length), chunk_blocks


def _stage_stats(key, mech, rep_ids, n: int, data, iid: bool, block_size: int, chunk_blocks: int,
                 paired: bool = False) -> jax.Array:
    """``int32[len(rep_ids), num_stats]`` from the engine's per-user kernel (``paired``: mechanism ``i`` runs
    repetition ``rep_ids[i]``)."""
    return _kernels.per_user_stats(key, mech, rep_ids, n, data, iid=iid, block_size=block_size,
                                   chunk_blocks=chunk_blocks, paired=paired)


@functools.partial(jax.jit, static_argnames=("name",))
def _tune_many(name, eps, s, theta_hat):
    return jax.vmap(lambda t: _optimize.optimize(name, eps, s, t))(theta_hat)[0]


def collaborative_simulate(key: jax.Array, mech: Mechanism, *, p: Any = None, n: Any = None, xs: Any = None,
                           reps: int = 1, pilot: float = 0.05, pilot_mech: Mechanism | None = None,
                           combine: str = "weighted",
                           block_size: int = _plan.DEFAULT_BLOCK_SIZE) -> CollabResult:
    """Simulates 003's collaborative sampling protocol ``reps`` times (see the module docstring).

    Args:
      key: PRNG key.
      mech: the mechanism to tune (URAP, UUE, UWheel, USS, ULH; any kind ``ul.tune`` accepts). Its parameter is
        replaced per repetition by the optimum for the pilot's ``theta_hat``.
      p, n: true distribution ``float[d]`` and number of users (iid model), or
      xs: ``int32[n]`` true values (fixed model).
      reps: independent repetitions of the whole protocol.
      pilot: pilot fraction in ``(0, 1)`` (003: 5%).
      pilot_mech: mechanism for the pilot (default ``mech`` as given; 003 starts from theta = 0, e.g.
        ``ul.UUE(d, sens, eps)`` whose default parameter assumes ``theta_n = 0``).
      combine: ``"weighted"`` or ``"main"``.
      block_size: users per randomness block.

    Returns:
      ``CollabResult``.
    """
    _validate.check_key(key)
    fam = _families.family_of(mech)
    if fam.param is None or fam.ldp:  # (GLUTF mechanisms have one with z_rule="max" only)
        raise TypeError(f"Expected mech to be a ULDP mechanism with a tunable parameter in closed form (GLUTF: "
                        f"z_rule='max'), got {mech!r}.")
    reps = _validate.check_int("reps", reps, minimum=1)
    if not (isinstance(pilot, (int, float)) and 0.0 < float(pilot) < 1.0):
        raise ValueError(f"Expected pilot={pilot!r} in (0, 1).")
    if combine not in COMBINE:
        raise ValueError(f"Expected combine={combine!r} in {COMBINE}.")
    pilot_mech = mech if pilot_mech is None else pilot_mech
    if pilot_mech.d != mech.d:
        raise ValueError(f"Expected pilot_mech.d={pilot_mech.d} to equal mech.d={mech.d}.")
    if (xs is None) == (p is None):
        raise ValueError("Pass either p=... with n=... (iid model) or xs=... (fixed model).")
    d = mech.d
    k_pilot, k_main, k_split = (jax.random.fold_in(key, i) for i in range(3))
    if p is not None:
        target = _validate.check_distribution("p", p, d)
        n = _validate.check_int("n", n, minimum=2)
        xs_p = xs_m = None
    else:
        xs = np.asarray(_validate.check_items("xs", xs, d, ndim=1))
        n = int(xs.shape[0])
        if n < 2:
            raise ValueError(f"Expected xs to hold at least 2 users, got {n}.")
        target = np.bincount(xs, minlength=d) / n
        perm = np.asarray(jax.random.permutation(k_split, n))
    n_pilot = min(max(1, int(round(float(pilot) * n))), n - 1)
    n_main = n - n_pilot
    iid = p is not None
    if not iid:
        xs_p, xs_m = xs[perm[:n_pilot]], xs[perm[n_pilot:]]
    reps_ids = jnp.arange(reps)

    # 1. pilot
    data, nb = _population(pilot_mech, iid, target, xs_p, n_pilot, block_size)
    st_p = _stage_stats(k_pilot, pilot_mech, reps_ids, n_pilot, data, iid, block_size, nb)
    est_p = _api.estimate_from_stats(pilot_mech, st_p, n_pilot, "emp")
    nonsens = ~_families.sizes(mech, fam)[1]
    theta_hat = jnp.clip(jnp.sum(jnp.where(jnp.asarray(nonsens), est_p, 0.0), axis=-1), 0.0, 1.0)

    # 2. tune per repetition
    s = len(mech.sensitive)
    with jax.enable_x64(True):
        params = np.asarray(_tune_many(fam.name, jnp.float64(float(mech.eps)), jnp.float64(s),
                                       jnp.asarray(np.asarray(theta_hat), jnp.float64)))

    # 3. main stage
    data, nb = _population(mech, iid, target, xs_m, n_main, block_size)
    if fam.integer:
        est_m = jnp.zeros((reps, d), est_p.dtype)
        for value in np.unique(params):  # a few distinct integers, not one call per repetition
            ids = np.flatnonzero(params == value)
            m_v = fam.tuned(mech, int(value))
            st = _stage_stats(k_main, m_v, ids, n_main, data, iid, block_size, nb)
            est_m = est_m.at[ids].set(_api.estimate_from_stats(m_v, st, n_main, "emp").astype(est_m.dtype))
    else:
        m_b = fam.tuned(mech, params)
        m_b = jax.tree_util.tree_map(lambda v: np.broadcast_to(np.asarray(v), (reps,)), m_b)  # leaves -> [r]
        st = _stage_stats(k_main, m_b, reps_ids, n_main, data, iid, block_size, nb, paired=True)
        est_m = jax.vmap(lambda m, x: _api.estimate_from_stats(m, x, n_main, "emp"))(m_b, st)

    # 4. combine
    est = est_m if combine == "main" else (n_pilot * est_p + n_main * est_m) / n
    return CollabResult(est, est_m, est_p, theta_hat, params, np.asarray(target, np.float64), n_pilot, n_main)
