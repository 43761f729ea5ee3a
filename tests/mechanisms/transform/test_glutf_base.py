"""``uldp_jax/mechanisms/transform/_glutf_base.py`` (issue 54 item 3, and item 2's GLUTF part): GLUTF over a user's
base. What the base gives no closed form for (the share behind z, EM's support ratio) is read off its channel at
construction, outside tracing; a base past the channel-size guard is refused there with the reason (it was killed
at 13 GB); a grid built under vmap is refused with what to do; EM takes the base's own rates."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _likelihood, _records
from tests.test_user_likelihoods import THE

SENS = (0, 1, 2)


class MyGRR(ul.Mechanism):
    """A user's GRR with pure() but no share, no likelihood(): every GLUTF constant comes from its channel."""

    d: int = ul.static_field()
    eps: float
    report_kind = "item"

    @property
    def num_outputs(self):
        return self.d

    def keep(self):
        return 1.0 / (1.0 + (self.d - 1) * jnp.exp(-self.eps))

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        other = jax.random.randint(k2, xs.shape, 0, self.d - 1, jnp.int32)
        keep = jax.random.uniform(k1, xs.shape, jnp.float32) < self.keep()
        return jnp.where(keep, xs, other + (other >= xs)).astype(jnp.int32)

    def channel_matrix(self):
        k = self.keep()
        return jnp.where(jnp.eye(self.d, dtype=bool), k, (1 - k) / (self.d - 1)), jnp.ones(self.d, bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)

    def pure(self):
        k = self.keep()
        return _records.Pure(k, (1 - k) / (self.d - 1))

    def estimator(self):
        k = self.keep()
        q = (1 - k) / (self.d - 1)
        return _records.Estimator(affine=(jnp.full(self.d, k - q), jnp.full(self.d, q)))


class NotPure(MyGRR):
    """The same sampler declared without pure(): a non-pure base (rule='non_pure' only)."""

    def pure(self):
        return None


def test_constants_read_off_the_channel_at_construction():
    g = ul.glutf(MyGRR(3, 1.0), 6, SENS)
    share = float(ul.GRR(3, 1.0).pure().share)
    assert float(g.share) == pytest.approx(share, rel=1e-6)  # the library's float32 closed form
    assert float(g.support_ratio) == pytest.approx(np.exp(-1.0), rel=1e-12)
    np.testing.assert_allclose(float(g.z()), float(ul.glutf(ul.GRR(3, 1.0), 6, SENS).z()), atol=1e-6)


@pytest.mark.slow  # simulate/EM compiles
def test_perturb_simulate_and_check_work():
    g = ul.glutf(MyGRR(3, 1.0), 6, SENS)
    ys = ul.perturb(jax.random.key(0), g, jnp.arange(6, dtype=jnp.int32))
    assert ys.item.shape == (6,)
    res = ul.simulate(jax.random.key(1), g, p=np.full(6, 1 / 6), n=500, reps=2, methods=("emp", "em"))
    assert np.all(np.isfinite(res.estimates["em"]))
    assert ul.audit(g).ok


@pytest.mark.slow  # simulate/EM compiles
def test_em_equals_the_library_glutf_over_grr():
    """Same sampler, same keys: the user's base gives the library GRR base's EM (its likelihood, read off the
    channel, is GRR's)."""
    mine, lib = ul.glutf(MyGRR(3, 1.0), 6, SENS), ul.glutf(ul.GRR(3, 1.0), 6, SENS)
    xs = jnp.arange(3000, dtype=jnp.int32) % 6
    ys = ul.perturb(jax.random.key(2), lib, xs)
    np.testing.assert_allclose(ul.estimate(mine, ys, "em"), ul.estimate(lib, ys, "em"), atol=2e-5)


def test_a_large_base_is_refused_at_construction():
    with pytest.raises(ValueError, match=r"2\^24.*share"):
        ul.glutf(THE(25, 1.0), 30, tuple(range(25)))


def test_a_given_share_is_range_checked_and_used_past_the_guard():
    g = ul.glutf(THE(25, 1.0), 30, tuple(range(25)), share=0.5)
    assert float(g.share) == 0.5
    with pytest.raises(ValueError, match="share"):
        ul.glutf(THE(25, 1.0), 30, tuple(range(25)), share=1.5)


@pytest.mark.slow  # simulate/EM compiles
def test_a_vmap_built_grid_is_refused_with_what_to_do_and_a_stacked_one_runs():
    eps = jnp.array([0.5, 1.0])
    with pytest.raises(ValueError, match="concrete points"):
        jax.vmap(lambda e: ul.glutf(MyGRR(3, e), 6, SENS))(eps)
    grid = jax.tree_util.tree_map(lambda *ls: jnp.stack(ls), *[ul.glutf(MyGRR(3, float(e)), 6, SENS) for e in eps])
    res = ul.simulate(jax.random.key(3), grid, p=np.full(6, 1 / 6), n=200, reps=2)
    assert res.estimates["emp"].shape == (2, 2, 6)


def test_a_non_pure_base_is_sampled_and_audited():
    g = ul.glutf(NotPure(3, 1.0), 6, SENS, rule="non_pure")
    ys = ul.perturb(jax.random.key(4), g, jnp.arange(6, dtype=jnp.int32))
    assert ys.item.shape == (6,)
    assert ul.audit(g).ok
    with pytest.raises(TypeError, match="non_pure"):
        ul.glutf(NotPure(3, 1.0), 6, SENS)  # rule="pure" needs a pure base: refused with the reason


def test_glutf_em_takes_the_product_base_rates():
    """GLUTF over THE: the protected reports' factor is exp(-w) with THE's log-odds w, not exp(-eps)."""
    g = ul.glutf(THE(3, 1.0), 6, SENS)
    ys = ul.perturb(jax.random.key(5), g, jnp.arange(600, dtype=jnp.int32) % 6)
    terms = _likelihood.glutf_terms(g, ys)
    nonempty = np.asarray(jnp.any(terms.bits, axis=1))
    w = float(_likelihood.product_log_odds(g.base))
    np.testing.assert_allclose(np.asarray(terms.low)[nonempty], np.exp(-w), rtol=1e-5)
    assert abs(w - 1.0) > 0.1
