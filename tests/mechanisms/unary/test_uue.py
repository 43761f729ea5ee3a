"""``uldp_jax/mechanisms/unary/_uue.py``: uUE's compact form (the base UE part as ``CompactBits``) has the exact
channel's law and gives every consumer what the dense form gives, and ``perturb`` takes it on a large sensitive set."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing


@pytest.mark.slow
def test_uue_compact_sampler_matches_the_channel_and_every_consumer():
    """uUE's compact form (the base UE part as CompactBits): chi-square per input against the exact channel,
    and aggregate / emp / EM / check_reports give what the dense form gives."""
    m = ul.UUE(7, (0, 2, 3, 6), 1.5)
    n = 35_000
    xs = jnp.asarray(np.arange(n) % 7, jnp.int32)
    ys = m.compact().perturb(jax.random.key(9), xs)
    assert isinstance(ys.base, ul.CompactBits)
    dense = ys._replace(base=ul.to_dense(ys.base))
    cols = testing.report_index(m, dense)
    Q, _ = m.channel_matrix()
    for x in range(7):
        obs = np.bincount(cols[np.asarray(xs) == x], minlength=Q.shape[1])
        assert testing.fits(testing.chi_square(obs, Q[x])), x
    ul.mechanisms.core.check_reports(m, ys)
    np.testing.assert_array_equal(np.asarray(m.aggregate(ys)), np.asarray(m.aggregate(dense)))
    for method in ("emp", "emp+thr", "em"):
        np.testing.assert_allclose(np.asarray(ul.estimate(m, ys, method)), np.asarray(ul.estimate(m, dense, method)),
                                   atol=1e-6)
    with pytest.raises(TypeError, match="has_base"):
        ul.mechanisms.core.check_reports(m, ys._replace(has_base=ys.has_base[:10]))


def test_uue_perturb_is_compact_on_a_large_sensitive_set():
    m = ul.UUE(3000, tuple(range(1500)), 3.0)
    ys = ul.perturb(jax.random.key(0), m, jnp.arange(2000, dtype=jnp.int32))
    assert m.compact().preferred and isinstance(ys.base, ul.CompactBits) and ys.base.shape == (2000, 1500)
    assert not ul.UUE(6, (1, 4), 2.0).compact().preferred
