"""Fixtures shared by the estimation tests."""

import pytest

from uldp_jax import _sizing


@pytest.fixture
def override():
    """``_sizing.SIZING_OVERRIDE``, empty before and after the test (a test sets the sizing fields it needs)."""
    _sizing.SIZING_OVERRIDE.clear()
    yield _sizing.SIZING_OVERRIDE
    _sizing.SIZING_OVERRIDE.clear()
