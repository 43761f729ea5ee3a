"""Mechanisms written as a user would, outside the package, shared by several test files.

``Keep`` is README's ``KeepRR`` (keeps x w.p. e^eps / (e^eps + d - 1), else another item uniformly), without any
constructor check: grids and entry points must validate it themselves.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

import uldp_jax as ul


class Keep(ul.Mechanism):
    """README's KeepRR: keeps x w.p. e^eps / (e^eps + d - 1), else another item uniformly."""

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
        return jnp.where(jnp.eye(self.d, dtype=bool), k, (1.0 - k) / (self.d - 1)), jnp.ones(self.d, dtype=bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)
