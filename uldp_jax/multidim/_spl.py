r"""SPL: every attribute reported, the budget split over the ``k`` attributes.

Each attribute ``j`` goes through its own frequency oracle (any library mechanism with item or bit-vector reports,
built at ``eps / k``); the report is the tuple of the ``k`` reports, encoded as one flat column index
(``_product``). The channel is the Kronecker product of the per-attribute channels, so for small products the
whole report is audited exactly.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms import Mechanism, PrivacySpec
from uldp_jax.multidim import _marginals, _product

def product_spec(oracles: Sequence[Mechanism], eps: float, domains: Sequence[int]) -> PrivacySpec:
    """The guarantee of a report built from the oracles' reports: LDP if every oracle is LDP, else ULDP with
    ``X_S`` the tuples sensitive in every attribute (only they never reach an invertible output)."""
    sens = [_product.oracle_sensitive(o) for o in oracles]
    d = _product.product_size(domains)
    if all(s is None for s in sens):
        return PrivacySpec.ldp(d, eps)
    return PrivacySpec.uldp(d, _product.all_sensitive_inputs(domains, sens), eps)


def check_channel_size(d: int, m: int) -> None:
    """The library's exact-channel guard (2^24 entries, ``mechanisms.core``'s), for the product's channel."""
    if d * m > 2**24:
        raise ValueError(f"Expected an exact channel of at most 2^24 entries, got d={d} "
                         f"inputs x {m} outputs; use a smaller product domain.")


class SPL(Mechanism):
    r"""Split: each of the ``k`` attributes reported through its own oracle (usually at ``eps / k``).

    Input: the flat index of the tuple (``encode``); report: the flat index of the tuple of per-attribute channel
    columns. The estimate (``ul.estimate``) is the joint over the product, by the channel's inverse (identifiable:
    the Kronecker product of full-rank channels is full rank); ``marginals`` gives each attribute's own estimate.

    Privacy: sequential composition: ``sum_j eps_j``-LDP (``= eps`` with ``spl``'s split) when every oracle is LDP.
    With utility-optimized oracles (uRR, uRAP, GLUTF) a report is protected when every component is, and on
    protected reports the ratio is at most ``exp(sum_j eps_j)``; ``privacy_spec`` states the ULDP guarantee of
    the product (``X_S`` = tuples sensitive in every attribute), which ``ul.audit`` certifies. Stronger, per
    attribute (not in the spec): a component ``y_j`` that is protected hides ``x_j`` at ``eps_j``.

    Attributes:
      oracles: one mechanism per attribute (leaves: a grid of eps vmaps through them).
    """

    oracles: tuple
    report_kind = "item"

    def __post_init__(self) -> None:
        _product.check_oracles(self.oracles, minimum_k=1)

    @property
    def domains(self) -> tuple[int, ...]:
        return tuple(int(o.d) for o in self.oracles)

    @property
    def d(self) -> int:
        return _product.product_size(self.domains)

    @property
    def num_outputs(self) -> int:
        return _product.product_size(_product.columns_per_attribute(self.oracles))

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        parts = _product.decode(xs, self.domains)
        keys = jax.random.split(key, len(self.oracles))
        sizes = _product.columns_per_attribute(self.oracles)
        out = jnp.zeros(jnp.shape(xs), jnp.int32)
        for kj, o, xj, s in zip(keys, self.oracles, parts, _product.strides(sizes)):
            out = out + _product.to_column(o, o.perturb_batch(kj, xj.astype(jnp.int32))) * s
        return out

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        check_channel_size(self.d, self.num_outputs)
        Q, prot = np.ones((1, 1)), np.ones(1, bool)
        for o in self.oracles:
            Qj, pj = _product.channel64(o)
            Q, prot = np.kron(Q, Qj), np.logical_and.outer(prot, pj).reshape(-1)
        return Q, prot

    def marginals(self, stats: jax.Array, n: Any) -> tuple[jax.Array, ...]:
        """Each attribute's estimate ``float[d_j]`` from the report histogram ``stats`` of ``n`` users: its oracle's
        debiasing of its statistic."""
        return _marginals.spl_marginals(self.oracles, stats, n)

    def marginal_variance(self, ps: Sequence[Any], n: Any) -> tuple[jax.Array, ...]:
        """Per-item iid variance of ``marginals``: each oracle's at its own eps (``eps / k``) with ``n`` users."""
        return _marginals.spl_variance(self.oracles, ps, n)

    def privacy_spec(self) -> PrivacySpec:
        eps = sum(float(o.privacy_spec().eps) for o in self.oracles)
        return product_spec(self.oracles, eps, self.domains)


def build_oracles(make: Callable | Sequence[Callable], domains: Any, eps: Any) -> tuple[Mechanism, ...]:
    """``make(d_j, eps)`` per attribute; ``make`` may be one callable or one per attribute (e.g. each with its own
    sensitive set: ``lambda d, e: ul.URR(d, S_j, e)``)."""
    domains = _product.check_domains(domains)
    makers = list(make) if isinstance(make, (list, tuple)) else [make] * len(domains)
    if len(makers) != len(domains):
        raise ValueError(f"Expected make to give one oracle per attribute ({len(domains)}), got {len(makers)}.")
    return tuple(m(d, eps) for m, d in zip(makers, domains))


def spl(make: Callable | Sequence[Callable], domains: Any, eps: Any) -> SPL:
    """SPL over ``domains`` with each attribute's oracle ``make(d_j, eps / k)``: ``eps``-LDP (or ULDP) in all.

    Raises:
      ValueError: bad ``domains`` or ``eps`` (non-positive, non-finite), named.
    """
    eps = _validate.check_eps(eps)
    domains = _product.check_domains(domains)
    return SPL(build_oracles(make, domains, eps / len(domains)))
