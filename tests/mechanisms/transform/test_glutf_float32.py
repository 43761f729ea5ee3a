"""float32 simulation stays finite at eps = 50 for the GLUTF defaults; near-1 keep-probabilities are refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul


def test_uue_default_at_eps_50_is_private_and_finite():
    mech = ul.UUE(6, [1, 3, 4], 50.0)
    assert np.float32(mech.p) < 1
    rep = ul.audit(mech)
    assert rep.ok and rep.tight
    xs = jnp.arange(3000, dtype=jnp.int32) % 6
    est = np.asarray(ul.simulate(jax.random.key(0), mech, xs=xs).estimates["emp"])
    assert np.all(np.isfinite(est))
    np.testing.assert_allclose(est, 1 / 6, atol=1e-3)


def test_explicit_near_one_parameters_are_refused():
    with pytest.raises(ValueError, match="p"):
        ul.UUE(6, [1, 3, 4], 5.0, p=1 - 1e-9)
    with pytest.raises(ValueError, match="l"):
        ul.UWheel(6, [1, 3, 4], 5.0, l=1 - 1e-9)
    with pytest.raises(ValueError, match="l"):
        ul.Wheel(6, 5.0, l=1 - 1e-9)


def test_glutf_refuses_bases_without_per_item_counts():
    with pytest.raises(TypeError, match="base"):
        ul.glutf(ul.HR(3, 1.0), 6, (0, 2, 5), rule="non_pure")
