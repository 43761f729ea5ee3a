"""Error metrics between estimated and true distributions (broadcast over leading axes)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def l1(p_hat: jax.Array, p: jax.Array) -> jax.Array:
    """l1 loss ``sum_x |p_hat(x) - p(x)|`` over the last axis."""
    return jnp.sum(jnp.abs(p_hat - p), axis=-1)


def tv(p_hat: jax.Array, p: jax.Array) -> jax.Array:
    """Total variation distance, ``l1 / 2`` (001 §6)."""
    return 0.5 * l1(p_hat, p)


def l2sq(p_hat: jax.Array, p: jax.Array) -> jax.Array:
    """Squared l2 loss ``sum_x (p_hat(x) - p(x))^2`` (001 Appendix C)."""
    return jnp.sum((p_hat - p) ** 2, axis=-1)


def mse(p_hat: jax.Array, p: jax.Array) -> jax.Array:
    """Mean squared error per item, ``l2sq / d`` (003 §6)."""
    return jnp.mean((p_hat - p) ** 2, axis=-1)


def mae(p_hat: jax.Array, p: jax.Array) -> jax.Array:
    """Mean absolute error per item, ``l1 / d`` (003 Fig 8)."""
    return jnp.mean(jnp.abs(p_hat - p), axis=-1)


__all__ = [
    "l1", "l2sq", "mae", "mse", "tv",
]
