r"""RS+FD (Arcolezi et al., CIKM 2021): one sampled attribute perturbed at an amplified budget, the others fake.

Each user samples ``j`` uniformly; attribute ``j`` goes through its oracle at
:math:`\varepsilon' = \ln(k(e^\varepsilon - 1) + 1)`; every other attribute ``i`` reports fake data: ``fake="r"``
the oracle applied to a uniform random value (RS+FD[GRR]'s uniform value: GRR's rows average to uniform;
RS+FD[SUE-r]/[OUE-r]), ``fake="z"`` (bit-vector oracles: RS+FD[SUE-z]/[OUE-z]) the oracle applied to the zero vector,
each bit set with the oracle's ``q``. The report is the full tuple (flat, as in SPL), so the aggregator cannot tell
which attribute was sampled; the sampling amplifies the privacy of the perturbed one back to ``eps``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms import Mechanism, PrivacySpec, static_field
from uldp_jax.multidim import _marginals, _product, _spl

FAKES = ("r", "z")


def amplified_eps(eps: Any, k: int) -> Any:
    r""":math:`\varepsilon' = \ln(k(e^\varepsilon - 1) + 1)` (Arcolezi et al. 2021, Theorem 1)."""
    return jnp.log(k * jnp.expm1(eps) + 1.0) if not _validate.is_concrete(eps) else np.log(k * np.expm1(eps) + 1.0)


def fake_row(oracle: Mechanism, fake: str) -> np.ndarray:
    """float64[m_j]: the law of attribute ``j``'s fake report (its channel's mean row, or the zero vector's)."""
    Q, _ = _product.channel64(oracle)
    if fake == "r":
        return Q.mean(axis=0)
    q = float(oracle.pure_probs()[1])
    ones = ((np.arange(Q.shape[1])[:, None] >> np.arange(oracle.d)[None, :]) & 1).sum(axis=1)
    return q**ones * (1.0 - q) ** (oracle.d - ones)


class RSFD(Mechanism):
    r"""Random sampling plus fake data over ``k >= 2`` attributes; oracles built at the amplified ``eps'``.

    Input: flat tuple index; report: flat index of the tuple of channel columns (as ``SPL``). The channel is the
    mixture :math:`Q(y|x) = \frac1k \sum_j Q'_j(y_j|x_j) \prod_{i \ne j} F_i(y_i)`. ``ul.estimate``'s joint is not
    identifiable (as SMP's; its marginals are unbiased); ``marginals`` gives Arcolezi's per-attribute estimator.

    Privacy: ``eps'``-LDP for the whole report, tight (``ul.audit`` on the exact channel): two tuples that differ in
    every attribute have ratio exactly :math:`e^{\varepsilon'}` on the report ``y = x``, since each term of the
    mixture has ratio :math:`e^{\varepsilon'}`. The paper's :math:`\varepsilon = \ln((e^{\varepsilon'} - 1)/k + 1)`
    (Arcolezi et al. 2021, Thm 1) bounds one attribute's report alone; over the tuple it holds (exactly, tight) for
    the ``"z"`` variants and pairs that differ in one attribute, and not even there for ``"r"``/GRR (the exact
    channel gives 1.044 for GRR over (3, 4) at eps = 1). docs/multidim.md gives the figures; tests pin them. Every
    oracle must be LDP (utility-optimized RS+FD is not built).

    Attributes:
      oracles: one LDP mechanism per attribute, all at the same ``eps'``.
      fake: ``"r"`` (oracle on a uniform value) or ``"z"`` (bit oracles on the zero vector).
    """

    oracles: tuple
    fake: str = static_field(default="r")
    report_kind = "item"

    def __post_init__(self) -> None:
        _product.check_oracles(self.oracles, minimum_k=2)
        if self.fake not in FAKES:
            raise ValueError(f"Expected fake={self.fake!r} in {FAKES}.")
        for j, o in enumerate(self.oracles):
            if self.fake == "z" and o.report_kind != "bits":
                raise ValueError(f"fake='z' needs bit-vector oracles; oracles[{j}] reports {o.report_kind!r}.")
            if _validate.is_concrete(o.eps) and o.privacy_spec().invertible_inputs is not None:
                raise ValueError(f"Expected LDP oracles for RS+FD; oracles[{j}]={o!r} is utility-optimized.")

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
        k = len(self.oracles)
        ksel, kfake, *keys = jax.random.split(key, k + 2)
        n = jnp.shape(xs)
        sel = jax.random.randint(ksel, n, 0, k, jnp.int32)
        parts = _product.decode(xs, self.domains)
        fkeys = jax.random.split(kfake, k)
        sizes = _product.columns_per_attribute(self.oracles)
        out = jnp.zeros(n, jnp.int32)
        for i, (ki, fk, o, xi, s) in enumerate(zip(keys, fkeys, self.oracles, parts, _product.strides(sizes))):
            mine = sel == i
            if self.fake == "r":  # fake input uniform; one oracle call serves real and fake users
                xin = jnp.where(mine, xi, jax.random.randint(fk, n, 0, o.d, jnp.int32))
                col = _product.to_column(o, o.perturb_batch(ki, xin.astype(jnp.int32)))
            else:  # zero vector: each bit set w.p. q
                zero = jax.random.uniform(fk, (*n, o.d), jnp.float32) < jnp.asarray(o.pure().q, jnp.float32)
                real = o.perturb_batch(ki, xi.astype(jnp.int32))
                col = jnp.where(mine, _product.to_column(o, real), _product.to_column(o, zero))
            out = out + col * s
        return out

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        _spl.check_channel_size(self.d, self.num_outputs)
        k = len(self.oracles)
        chans = [_product.channel64(o)[0] for o in self.oracles]
        fakes = [np.ones((o.d, 1)) * fake_row(o, self.fake)[None, :] for o in self.oracles]
        Q = 0.0
        for j in range(k):
            term = np.ones((1, 1))
            for i in range(k):
                term = np.kron(term, chans[i] if i == j else fakes[i])
            Q = Q + term / k
        return Q, np.ones(self.num_outputs, bool)

    def marginals(self, stats: jax.Array, n: Any) -> tuple[jax.Array, ...]:
        """Arcolezi et al.'s unbiased per-attribute estimator from the report histogram (``rsfd_marginals``)."""
        return _marginals.rsfd_marginals(self.oracles, self.fake, stats, n)

    def marginal_variance(self, ps: Sequence[Any], n: Any) -> tuple[jax.Array, ...]:
        """``Variance_RSpFD`` per item (``_marginals.rsfd_variance``)."""
        return _marginals.rsfd_variance(self.oracles, self.fake, ps, n)

    def privacy_spec(self) -> PrivacySpec:
        """``eps'``-LDP (the amplified budget: what the whole report guarantees; see the class's Privacy)."""
        return PrivacySpec.ldp(self.d, max(float(o.privacy_spec().eps) for o in self.oracles))

    @property
    def target_eps(self) -> float:
        r"""The paper's ``eps`` behind ``eps'`` (:math:`\ln((e^{\varepsilon'} - 1)/k + 1)`), for reference."""
        amp = float(self.oracles[0].privacy_spec().eps)
        return math.log(math.expm1(amp) / len(self.oracles) + 1.0)


def rsfd(make: Callable | Sequence[Callable], domains: Any, eps: Any, fake: str = "r") -> RSFD:
    """RS+FD over ``domains`` (``k >= 2``), each oracle ``make(d_j, eps')`` at the amplified ``eps'`` (Arcolezi's
    construction for a target ``eps``; the whole report is ``eps'``-LDP, see ``RSFD``).

    RS+FD[GRR]: ``rsfd(ul.GRR, domains, eps)``; RS+FD[OUE-z]: ``rsfd(ul.OUE, domains, eps, fake="z")``;
    RS+FD[SUE-r]: ``rsfd(ul.SUE, domains, eps)``.

    Raises:
      ValueError: bad ``domains`` (fewer than two attributes), ``eps`` or ``fake``, named.
    """
    eps = _validate.check_eps(eps)
    domains = _product.check_domains(domains, minimum_k=2)
    if fake not in FAKES:
        raise ValueError(f"Expected fake={fake!r} in {FAKES}.")
    return RSFD(_spl.build_oracles(make, domains, amplified_eps(eps, len(domains))), fake)
