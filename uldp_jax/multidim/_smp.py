r"""SMP: each user samples one attribute uniformly and reports ``(j, oracle_j(x_j))`` at the full budget.

The report is encoded as ``offset_j + column`` with ``offset_j = m_1 + ... + m_{j-1}`` (``m_j`` the columns of
oracle ``j``), so the channel is the block matrix ``Q[x, offset_j + c] = Q_j[x_j, c] / k``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms import Mechanism, PrivacySpec
from uldp_jax.multidim import _marginals, _product, _spl


def offsets(sizes: Sequence[int]) -> tuple[int, ...]:
    """``offset_j = m_1 + ... + m_{j-1}``: where attribute ``j``'s columns start in the SMP report space."""
    return tuple(int(v) for v in np.concatenate([[0], np.cumsum(sizes)[:-1]]))


class SMP(Mechanism):
    r"""Sample: one uniformly drawn attribute, reported through its oracle (usually at the full ``eps``).

    ``ul.estimate``'s joint (least squares on the channel) is not identifiable (the channel has rank at most
    ``sum_j d_j - k + 1 < prod d_j``): it is the minimum-norm joint that fits the reports; its marginals are exactly
    unbiased (each marginal indicator lies in the span of the channel's columns), but use ``marginals`` for them.

    Privacy: ``max_j eps_j``-LDP when every oracle is LDP (the sampled index is independent of the data; on a
    report ``(j, y)`` the ratio is oracle ``j``'s). With utility-optimized oracles, a report ``(j, y)`` is
    protected when ``y`` is protected for oracle ``j``; ``privacy_spec`` states ULDP over the product with ``X_S``
    the tuples sensitive in every attribute (an input with a non-sensitive attribute can be revealed through that
    attribute's invertible outputs), certified by ``ul.audit``.

    Attributes:
      oracles: one mechanism per attribute, ``k >= 2`` of them.
    """

    oracles: tuple
    report_kind = "item"

    def __post_init__(self) -> None:
        _product.check_oracles(self.oracles, minimum_k=2)

    @property
    def domains(self) -> tuple[int, ...]:
        return tuple(int(o.d) for o in self.oracles)

    @property
    def d(self) -> int:
        return _product.product_size(self.domains)

    @property
    def num_outputs(self) -> int:
        return int(sum(_product.columns_per_attribute(self.oracles)))

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        k = len(self.oracles)
        ksel, *keys = jax.random.split(key, k + 1)
        j = jax.random.randint(ksel, jnp.shape(xs), 0, k, jnp.int32)
        parts = _product.decode(xs, self.domains)
        offs = offsets(_product.columns_per_attribute(self.oracles))
        out = jnp.zeros(jnp.shape(xs), jnp.int32)
        for i, (ki, o, xi, off) in enumerate(zip(keys, self.oracles, parts, offs)):
            col = _product.to_column(o, o.perturb_batch(ki, xi.astype(jnp.int32))) + off
            out = jnp.where(j == i, col, out)
        return out

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        _spl.check_channel_size(self.d, self.num_outputs)
        k = len(self.oracles)
        parts = np.unravel_index(np.arange(self.d), self.domains)
        blocks, prot = [], []
        for o, xj in zip(self.oracles, parts):
            Qj, pj = _product.channel64(o)
            blocks.append(Qj[xj] / k)
            prot.append(pj)
        return np.concatenate(blocks, axis=1), np.concatenate(prot)

    def marginals(self, stats: jax.Array, n: Any = None) -> tuple[jax.Array, ...]:
        """Each attribute's estimate from the ``n_j`` users who sampled it (unbiased given ``n_j > 0``; ``n_j`` is
        read off the histogram ``stats``, so ``n`` is not needed)."""
        return _marginals.smp_marginals(self.oracles, offsets(_product.columns_per_attribute(self.oracles)), stats)

    def marginal_variance(self, ps: Sequence[Any], n: Any) -> tuple[jax.Array, ...]:
        """Per-item iid variance: each oracle's at the full eps with ``n / k`` users (``E[n_j]``; first order)."""
        return _marginals.smp_variance(self.oracles, ps, n)

    def privacy_spec(self) -> PrivacySpec:
        eps = max(float(o.privacy_spec().eps) for o in self.oracles)
        return _spl.product_spec(self.oracles, eps, self.domains)


def smp(make: Callable | Sequence[Callable], domains: Any, eps: Any) -> SMP:
    """SMP over ``domains`` (``k >= 2`` attributes), each oracle ``make(d_j, eps)``: ``eps``-LDP (or ULDP).

    Raises:
      ValueError: bad ``domains`` (fewer than two attributes, a size < 2) or ``eps``, named.
    """
    eps = _validate.check_eps(eps)
    domains = _product.check_domains(domains, minimum_k=2)
    return SMP(_spl.build_oracles(make, domains, eps))
