"""``uldp_jax/engine/_reports_device.py``: simulate(..., methods=("em",)) on compact-report mechanisms keeps
every repetition's reports on the device (bit-packed block by block inside one compiled call): same answer as
EM on the same reports, no host loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.engine import _plan, _reports


@pytest.mark.slow
@pytest.mark.parametrize("make, packed", [(lambda: ul.RAPPOR(1024, 4.5), True), (lambda: ul.RAPPOR(1024, 8.0), False),
                                          (lambda: ul.URAP(1024, tuple(range(300)), 8.0), False)],
                         ids=["RAPPOR-packed", "RAPPOR-rows", "URAP-rows"])
def test_compact_reports_em_on_device(make, packed, monkeypatch):
    """Bit-packed (many ones) or the sampler's positions as support lists (few ones), both on the device."""
    mech = make()
    assert mech.compact().stats and _reports._prefers_packed(mech) == packed
    xs = jnp.asarray(np.arange(700) % 40, jnp.int32)
    key = jax.random.key(3)

    def host_path(*a, **k):
        raise AssertionError("the per-repetition host path ran")

    monkeypatch.setattr(_reports, "_compact_on_host", host_path)
    res = ul.simulate(key, mech, xs=xs, reps=2, methods=("em", "emp"), block_size=256)
    plan = _plan.make_plan(key, mech, xs=xs, block_size=256, path="per_user")
    items_s = _reports._StaticItems(mech.compact().params[0])
    n = jnp.int32(plan.n)
    nc = int(np.max(_reports._chunks_all(mech, key, plan.data, n, plan.iid, 256, plan.num_blocks, items_s, 2)[..., 0]))
    for r in range(2):
        ones = _reports._compact_reports(mech, jax.random.fold_in(key, r), plan.data, n, plan.iid, 256,
                                         plan.num_blocks, max(nc, 1))[:700]
        ys = ul.CompactBits(ones, ul.mechanisms.core.num_stats(mech))
        np.testing.assert_array_equal(np.asarray(mech.aggregate(ys)), np.asarray(res.stats[r]))
        want = ul.estimate(mech, ys, "em")
        np.testing.assert_allclose(np.asarray(res.estimates["em"][r]), np.asarray(want), atol=1e-5)
