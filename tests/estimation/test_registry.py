"""``uldp_jax/estimation/_registry.py``: ``register_method`` protects the built-in methods and needs a callable
(issue 22's defect; the rest of tests/test_defects.py moved to the mirrors of the modules it tested, issue 48
item 4)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

from uldp_jax.estimation import _registry


def test_register_method_protects_builtins_and_needs_a_callable():
    with pytest.raises(ValueError, match="built in"):
        _registry.register_method("emp", lambda mech, stats, n: stats)
    with pytest.raises(TypeError, match="callable"):
        _registry.register_method("test-nope", 3)
    f = lambda mech, stats, n: jnp.zeros(mech.d)  # noqa: E731
    _registry.register_method("test-mine", f)
    try:
        with pytest.raises(ValueError, match="replace=True"):
            _registry.register_method("test-mine", f)
        _registry.register_method("test-mine", f, replace=True)
    finally:
        _registry._METHODS.pop("test-mine", None)
