"""EM on a jax.vmap grid of an item mechanism defined outside the package equals a loop over its points."""

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul


class KeepRR(ul.Mechanism):
    """README's outside-defined mechanism: keeps x w.p. e^eps / (e^eps + d - 1), else another item uniformly."""

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
        other = jax.random.randint(k2, xs.shape, 0, self.d - 1)
        keep = jax.random.uniform(k1, xs.shape) < self.keep()
        return jnp.where(keep, xs, other + (other >= xs)).astype(jnp.int32)

    def channel_matrix(self):
        k = self.keep()
        Q = jnp.where(jnp.eye(self.d, dtype=bool), k, (1.0 - k) / (self.d - 1))
        return Q, jnp.ones(self.d, dtype=bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)


def test_em_on_a_vmap_grid_equals_a_loop():
    eps = jnp.linspace(0.5, 4.0, 4)
    grid = jax.vmap(lambda e: KeepRR(6, e))(eps)
    xs = jnp.arange(2000, dtype=jnp.int32) % 6
    ys = jnp.stack([ul.perturb(jax.random.key(i), KeepRR(6, float(e)), xs) for i, e in enumerate(eps)])
    batched = jax.vmap(lambda m, y: ul.estimate(m, y, "em"))(grid, ys)
    looped = [np.asarray(ul.estimate(KeepRR(6, float(e)), ys[i], "em")) for i, e in enumerate(eps)]
    np.testing.assert_allclose(np.asarray(batched), np.stack(looped), atol=1e-5)
