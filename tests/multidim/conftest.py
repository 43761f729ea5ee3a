"""Fixtures of the multidimensional-collection tests."""

import jax
import pytest


@pytest.fixture
def key():
    return jax.random.key(0)
