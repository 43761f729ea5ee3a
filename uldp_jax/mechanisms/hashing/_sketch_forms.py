r"""Closed-form risks of Apple's count mean sketches (CMS, HCMS) with Apple's estimator.

Both sketches have one support structure (``_sketch``): a user holding ``x'`` supports ``x`` w.p.
:math:`r(x, x') = \mathrm{apart} + g\,C(x, x')`, ``g = collide - apart``, with ``C(x, x')`` the fraction of the
``k`` hash rows in which ``x`` and ``x'`` share a cell (``C(x, x) = 1``), and the estimate is
:math:`\hat p_x = (T_x/n - b)/a` with Apple's ``a = g (m-1)/m``, ``b = apart + g/m``.

* **Given the hashes** (``given_item_mse``: the instance's risk, what a simulation with its fixed seed measures):
  :math:`\bar f_x = \sum_{x'} p_{x'} r(x, x')`; iid :math:`\mathrm{Var} = \bar f(1-\bar f)/(n a^2)`, fixed
  :math:`\sum_{x'} p_{x'} r(1-r)/(n a^2)`; bias :math:`(\bar f_x - b)/a - p_x
  = \frac{m}{m-1}\sum_{x' \ne x} p_{x'}(C(x, x') - 1/m)`, which does not shrink with ``n``.
* **Over a uniform draw of the k hash functions** (``sketch_item_mse``; Apple's model): the collision
  indicators are independent Bernoulli(1/m), so :math:`E[\mathrm{bias}] = 0` and, with
  :math:`S_x = \sum_{x' \ne x} p_{x'}^2` and :math:`V = g^2 (m-1)/(k m^2)` (the variance of one ``r``),

  .. math:: \mathrm{MSE}_{iid} = \frac{\mu(1-\mu) - V S_x}{n a^2} + \frac{S_x}{k(m-1)},\quad
            \mathrm{MSE}_{fixed} = \frac{p_x c(1-c) + (1-p_x)(b(1-b) - V)}{n a^2} + \frac{S_x}{k(m-1)},

  :math:`\mu = a p_x + b`, ``c = collide``. The last term is the hash-collision term: it does not shrink with
  ``n``, so a sketch needs ``k (m-1)`` well above ``n S_x``. (Both forms are checked exactly against the channel in
  tests/mechanisms/hashing/test_sketch_forms.py; "Count-mean sketch as an optimized framework for frequency
  estimation with LDP", arXiv:2406.03785, also revisits the original paper's expectation and variance.)
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

ROW_CHUNK_ENTRIES = 2**24  # k * rows * d booleans per step of the fixed model's collision rows


def apple_affine(collide: Any, apart: Any, m: int) -> tuple[jax.Array, jax.Array]:
    """``(a, b)`` of Apple's estimator: ``E[T_x]/n = a p_x + b`` for uniformly random hashes."""
    g = jnp.asarray(collide) - jnp.asarray(apart)
    return g * (m - 1.0) / m, jnp.asarray(apart) + g / m


def cms_rates(eps: Any) -> tuple[jax.Array, jax.Array]:
    """CMS: each of the ``m`` bits is kept w.p. ``e^{eps/2}/(e^{eps/2}+1)``; a report supports ``x`` (bit ``+1``
    at ``h_j(x)``) w.p. that keep rate when the user's one-hot is there, the flip rate otherwise."""
    e = jnp.asarray(eps) / 2.0
    return jax.nn.sigmoid(e), jax.nn.sigmoid(-e)


def hcms_rates(eps: Any) -> tuple[jax.Array, jax.Array]:
    """HCMS: the sign is kept w.p. ``e^eps/(e^eps+1)``; with distinct cells two Hadamard columns agree on half the
    rows, so a uniform coefficient supports ``x`` w.p. exactly 1/2."""
    keep = jax.nn.sigmoid(jnp.asarray(eps))
    return keep, jnp.full_like(keep, 0.5)


def _cell_mass(table: jax.Array, m: int, p: jax.Array) -> jax.Array:
    """``cbar float[d]``: :math:`\\sum_{x'} p_{x'} C(x, x')` via each row's cell histogram of ``p`` (O(k (d + m)))."""
    k = table.shape[0]
    rows = jnp.broadcast_to(jnp.arange(k)[:, None], table.shape)
    P = jnp.zeros((k, m), p.dtype).at[rows, table].add(jnp.broadcast_to(p, table.shape))
    return jnp.mean(jnp.take_along_axis(P, table, axis=1), axis=0)


def _collision_square_mass(table: jax.Array, p: jax.Array) -> jax.Array:
    """``float[d]``: :math:`\\sum_{x'} p_{x'} C(x, x')^2`, by rows of ``C`` in chunks (O(k d^2) time, bounded
    memory)."""
    k, d = table.shape
    B = max(1, min(d, ROW_CHUNK_ENTRIES // max(1, k * d)))
    pad = -d % B
    items = jnp.concatenate([jnp.arange(d), jnp.zeros(pad, jnp.int32)]).reshape(-1, B)

    def rows(xs):
        C = jnp.mean((table[:, xs][:, :, None] == table[:, None, :]).astype(p.dtype), axis=0)  # [B, d]
        return C**2 @ p

    return jax.lax.map(rows, items).reshape(-1)[:d]


def given_item_variance(collide: Any, apart: Any, table: jax.Array, m: int, p: Any, n: Any, model: str) -> jax.Array:
    """``float[d]``: ``Var(p_hat_x)`` of Apple's estimator given the hashes ``table int32[k, d]``."""
    p = jnp.asarray(p)
    collide, apart = jnp.asarray(collide, p.dtype), jnp.asarray(apart, p.dtype)
    a, _ = apple_affine(collide, apart, m)
    g = collide - apart
    cbar = _cell_mass(table, m, p)
    fbar = apart + g * cbar
    if model == "iid":
        spread = fbar * (1.0 - fbar)
    else:  # sum_x' p_x' r (1 - r) with r = apart + g C and sum p = 1
        spread = fbar - (apart**2 + 2.0 * apart * g * cbar + g**2 * _collision_square_mass(table, p))
    return spread / (jnp.asarray(n, p.dtype) * a**2)


def given_item_mse(collide: Any, apart: Any, table: jax.Array, m: int, p: Any, n: Any, model: str) -> jax.Array:
    """``float[d]``: :math:`E(\\hat p_x - p_x)^2` of Apple's estimator given the hashes (variance plus the
    collisions' squared bias)."""
    p = jnp.asarray(p)
    collide, apart = jnp.asarray(collide, p.dtype), jnp.asarray(apart, p.dtype)
    a, b = apple_affine(collide, apart, m)
    fbar = apart + (collide - apart) * _cell_mass(table, m, p)
    bias = (fbar - b) / a - p
    return given_item_variance(collide, apart, table, m, p, n, model) + bias**2


def sketch_item_mse(collide: Any, apart: Any, p: Any, n: Any, k: int, m: int, model: str = "iid") -> jax.Array:
    """``float[d]``: :math:`E(\\hat p_x - p_x)^2` averaged over ``k`` independent uniformly random hash functions
    ``[d] -> [m]`` (and the reports), for support rates ``collide``/``apart``; see the module docstring."""
    p = jnp.asarray(p)
    collide, apart = jnp.asarray(collide, p.dtype), jnp.asarray(apart, p.dtype)
    a, b = apple_affine(collide, apart, m)
    g = collide - apart
    S = jnp.sum(p**2, axis=-1, keepdims=True) - p**2
    V = g**2 * (m - 1.0) / (k * m**2)
    n = jnp.asarray(n, p.dtype)
    if model == "iid":
        mu = a * p + b
        var = (mu * (1.0 - mu) - V * S) / (n * a**2)
    else:
        var = (p * collide * (1.0 - collide) + (1.0 - p) * (b * (1.0 - b) - V)) / (n * a**2)
    return var + S / (k * (m - 1.0))


def cms_item_mse(eps: Any, p: Any, n: Any, k: int, m: int, model: str = "iid") -> jax.Array:
    """CMS's per-item risk over a uniform draw of its ``k`` hash functions (Apple's model; ``sketch_item_mse``)."""
    return sketch_item_mse(*cms_rates(eps), p, n, k, m, model)


def hcms_item_mse(eps: Any, p: Any, n: Any, k: int, m: int, model: str = "iid") -> jax.Array:
    """HCMS's per-item risk over a uniform draw of its ``k`` hash functions (Apple's model; ``sketch_item_mse``)."""
    return sketch_item_mse(*hcms_rates(eps), p, n, k, m, model)
