"""``uldp_jax/longitudinal/_attack.py``: the MAP attack on memoized protocols (google/rappor issue #11), simulated,
against its exact success, and memoization against the naive protocol."""

import jax
import numpy as np
import pytest

from uldp_jax import longitudinal as lg
from uldp_jax import testing

from tests.longitudinal._protocols import PROTOCOLS


@pytest.mark.slow
@pytest.mark.parametrize("name", ["L-GRR", "L-OUE"])
def test_simulated_attack_matches_its_exact_success_and_memoization_caps_it(name):
    """The MAP adversary's simulated success after each of 3 rounds is within SE of the exact success; with
    memoization it stays at most the naive protocol's (fresh eps_1 randomness each round) after 8 rounds."""
    mech = PROTOCOLS[name]()
    curve = lg.attack_curve(jax.random.key(11), mech, 3, 20_000)
    exact = [lg.exact_attack_success(mech, tau) for tau in (1, 2, 3)]
    assert testing.within_se(curve.success, exact, curve.se)
    both = lg.compare_attack(jax.random.key(12), mech, 8, 20_000)
    memo, naive = both["memoized"], both["naive"]
    assert testing.at_most(memo.success[-1] - naive.success[-1], 0.0, np.hypot(memo.se[-1], naive.se[-1]))
    assert naive.success[-1] > naive.success[0]
