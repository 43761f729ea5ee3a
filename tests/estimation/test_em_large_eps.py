"""EM is exact up to eps = 100 (float32: t = e^-eps underflows beyond ~87) and refuses bad init/throw options."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

XS = jnp.arange(3000, dtype=jnp.int32) % 8


@pytest.mark.parametrize("eps", [85.0, 87.0, 90.0, 100.0])
def test_oue_em_at_large_eps_is_the_count_mle(eps):
    """At eps >= 85 an OUE report holds its own bit w.p. 1/2 and nothing else (q < 1e-36): the MLE is the share
    of each item among the non-empty reports."""
    mech = ul.OUE(8, eps)
    ys = ul.perturb(jax.random.key(1), mech, XS)
    c = np.asarray(mech.aggregate(ys), np.float64)
    p_hat = np.asarray(ul.estimate(mech, ys, "em"), np.float64)
    np.testing.assert_allclose(p_hat, c / c.sum(), atol=1e-5)


@pytest.mark.parametrize("eps", [85.0, 100.0])
def test_glutf_oue_em_at_large_eps(eps):
    mech = ul.UUE(8, [0, 3, 6], eps)
    ref = ul.UUE(8, [0, 3, 6], 60.0)  # e^-60 is still a normal float32: the old form is exact here
    ys, ys_ref = (ul.perturb(jax.random.key(2), m, XS) for m in (mech, ref))
    p_hat = np.asarray(ul.estimate(mech, ys, "em"))
    assert np.all(np.isfinite(p_hat)) and abs(p_hat.sum() - 1) < 1e-5
    np.testing.assert_allclose(p_hat, np.asarray(ul.estimate(ref, ys_ref, "em")), atol=1e-5)


@pytest.mark.parametrize("mech", [ul.GRR(4, 1.0), ul.SS(4, 1.0, k=2), ul.RAPPOR(4, 1.0)], ids=lambda m: type(m).__name__)
def test_bad_init_and_throw(mech):
    ys = ul.perturb(jax.random.key(0), mech, jnp.arange(100, dtype=jnp.int32) % 4)
    for bad, exc in (("abc", TypeError), ([True, False, True, True], TypeError), ([1, 2, 3, np.nan], ValueError),
                     ([[0.25] * 4], ValueError), ([0, 0, 0, 0], ValueError), ([1, -1, 1, 1], ValueError)):
        with pytest.raises(exc, match="init"):
            ul.estimate(mech, ys, "em", init=bad)
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="throw"):
            ul.estimate(mech, ys, "em", throw=bad)
