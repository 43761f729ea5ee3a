"""``uldp_jax/data/_pum_scenario.py``: the synthetic personalized scenario refuses bad arguments, naming them (its
shapes and counts are checked with the PUM Monte Carlo runs in tests/pum/test_simulate.py, which share its
module-scoped scenario)."""

import jax
import pytest

from uldp_jax.data._pum_scenario import pum_scenario


def test_scenario_bad_arguments():
    with pytest.raises(ValueError, match="num_sensitive"):
        pum_scenario(jax.random.key(0), grid=3, n=10, num_sensitive=8)
    with pytest.raises(ValueError, match="frac_home"):
        pum_scenario(jax.random.key(0), grid=5, n=10, num_sensitive=2, frac_home=1.5)
    with pytest.raises(TypeError, match="key"):
        pum_scenario(None, grid=4, n=10)
