"""Mechanisms written as a user would, outside the package, shared by several test files.

``Keep`` is README's ``KeepRR`` (keeps x w.p. e^eps / (e^eps + d - 1), else another item uniformly), without any
constructor check: grids and entry points must validate it themselves. ``OthersOutside`` is only the two records
of a bit mechanism whose compact process sets "other" bits outside its product part (none of the library's do).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import uldp_jax as ul
from uldp_jax.mechanisms.core import _records


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


class OthersOutside:
    """Six bits: the compact process sets every other bit w.p. 0.2, but the product part is the first three."""

    d = 6

    def compact(self):
        return _records.independent_bits(6, np.arange(6), jnp.full(6, 0.7), 0.2)

    def likelihood(self):
        return _records.Likelihood(product=(np.arange(6) < 3, True))
