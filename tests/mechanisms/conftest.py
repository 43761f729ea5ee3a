"""Shared fixtures for the context-aware LDP tests (HR family, binary E-LDP, hypothesis testing)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul


@pytest.fixture
def key():
    return jax.random.key(0)


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


@jax.jit
def _debias_rows(mech, eye):
    # One jitted function with the mechanism as a pytree argument: compiled once per mechanism configuration,
    # not once per call.
    return jax.vmap(lambda e: ul.mechanisms.core.debias(mech, e, 1.0))(eye)


def _decoder(mech):
    """float64 [m, d] matrix G with debias(stats, n) == stats @ G / n (debias is linear in stats)."""
    return np.asarray(_debias_rows(mech, jnp.eye(mech.num_outputs, dtype=jnp.float64)), np.float64)


def _moments(mech, p):
    """Exact (mean, n * covariance) of debias under the iid model, from the channel and the decoder."""
    from uldp_jax import channel

    Q = channel(mech).Q
    G = _decoder(mech)
    q = p @ Q
    mean = q @ G
    cov = G.T @ (np.diag(q) - np.outer(q, q)) @ G
    return mean, cov, Q, G


@pytest.fixture
def decoder():
    return _decoder


@pytest.fixture
def moments():
    return _moments
