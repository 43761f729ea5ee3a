r"""Summation with histogram encoding (SHE; Wang, Blocki, Li, Jha, USENIX Security 2017 §4.3): the one-hot vector
plus Laplace noise, summed by the aggregator. ``HE`` is the same mechanism (the encoding; SHE names its estimator).

Reports are real vectors, so there is no finite channel: the guarantee is checked from the Laplace density itself.
A report ``y`` of input ``x`` has density :math:`\prod_j \frac{1}{2b} e^{-|y_j - 1[j=x]|/b}`, so

.. math:: \log\frac{f(y|x)}{f(y|x')} = \frac{|y_x - 0| - |y_x - 1| + |y_{x'} - 1| - |y_{x'} - 0|}{b} \le \frac{2}{b},

with equality at :math:`y_x \ge 1`, :math:`y_{x'} \le 0` (a set of positive probability): the exact level is
``2 / scale`` for every pair, eps-LDP iff ``scale >= 2 / eps`` (``density_log_ratios``: ``likelihood().density``,
read by ``ul.audit``).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _fields, _pytree, _records, _spec


def _she_item_nvar(mech: Any, p: Any) -> jax.Array:
    """iid ``n Var`` of SHE's estimate per item: ``p (1 - p) + 2 scale^2`` (the Laplace variance)."""
    p = jnp.asarray(p)
    return p * (1.0 - p) + 2.0 * jnp.asarray(mech.scale) ** 2


class SHE(_base.Mechanism):
    r"""Summation with histogram encoding over ``d`` items: report :math:`e_x + \mathrm{Lap}(b)^d`, ``b = 2/eps``.

    The aggregator sums the reports; :math:`\hat p = \sum_i y_i / n` is unbiased with per-item variance
    :math:`(p_j(1-p_j) + 2b^2)/n` (iid; :math:`8/\varepsilon^2` per item is Wang et al.'s Var*). Report: ``d``
    float32 values (``32 d`` bits). Reports are real, so EM runs on the exact Laplace likelihood of each report,
    and the aggregate's exact law is drawn from the counts: :math:`S_j = n_j + b(G_j - G'_j)` with
    :math:`G, G' \sim \mathrm{Gamma}(n, 1)` (a sum of ``n`` Laplace variables is a scaled difference of two
    Gamma variables).

    Privacy: ``eps``-LDP, tight, when ``scale = 2/eps`` (the default): the exact level is ``2 / scale`` (see the
    module docstring); ``ul.audit`` checks it from the density (``source="density"``, no finite channel) and
    fails a mechanism built with a smaller ``scale``.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      scale: Laplace scale ``b`` (leaf, > 0). ``None``: ``2 / eps`` (the L1 sensitivity of the one-hot encoding,
        2, over eps). A smaller scale is accepted and audited as what it is (a leak), not silently raised.

    References:
      Wang, Blocki, Li, Jha, "Locally differentially private protocols for frequency estimation", USENIX
      Security 2017, §4.3 (HE, SHE); pure-LDP ``HEClient``/``HEServer``; multi-freq-ldpy ``HE_Client``.
    """

    d: int = _pytree.static_field()
    eps: Any
    scale: Any = None

    report_kind = "real"

    _closed_form = _family.Family("SHE", None, None, None, ldp=True, item_nvar=_she_item_nvar)

    def __post_init__(self):
        _fields.check_domain(self)
        scale = 2.0 / np.asarray(self.eps, np.float64) if _validate.is_concrete(self.eps) else 2.0 / self.eps
        scale = scale if self.scale is None else self.scale
        _fields.set_fields(self, scale=_validate.as_param("scale", scale, lower=0.0))

    @property
    def num_outputs(self) -> float:
        """The report space is ``R^d``: uncountable (``inf``); there is no finite channel."""
        return math.inf

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """Randomizes ``xs: int32[...]``; returns ``float32[..., d]`` reports ``e_x + Lap(scale)``."""
        own = (xs[..., None] == jnp.arange(self.d, dtype=xs.dtype)).astype(jnp.float32)
        noise = jax.random.laplace(key, xs.shape + (self.d,), dtype=jnp.float32)
        return own + jnp.asarray(self.scale, jnp.float32) * noise

    def aggregate(self, ys: Any, weights: jax.Array | None = None) -> jax.Array:
        """``float[d]``: the sum of the reports (``weights``, 0/1 per user, masks padded users)."""
        ys = jnp.asarray(ys)
        if weights is not None:
            ys = ys * jnp.asarray(weights, ys.dtype)[:, None]
        return jnp.sum(ys, axis=0)

    def reports(self) -> _records.Reports:
        """``d`` sums; ``32 d`` bits a report (float32); the statistic of ``xs`` drawn without the ``n x d`` reports
        (``sample_stats``): the same law as summing them (the counts law below, on ``bincount(xs)``)."""
        return _records.Reports(stats=self.d, check=self._check, bits=32.0 * self.d, sample=self._sample_stats)

    def _sample_stats(self, key: jax.Array, xs: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        w = jnp.ones(xs.shape, jnp.float32) if weights is None else jnp.asarray(weights, jnp.float32)
        counts = jnp.zeros((self.d,), jnp.float32).at[xs].add(w)
        return self._laplace_sums(key, counts)

    def _laplace_sums(self, key: jax.Array, counts: jax.Array) -> jax.Array:
        """``counts + scale (G - G')``, ``G, G' ~ Gamma(n, 1)`` per item: the sum of ``n`` reports' noise."""
        n = jnp.sum(counts)
        g = jax.random.gamma(key, jnp.full((2, self.d), n, counts.dtype), dtype=counts.dtype)
        return counts + jnp.asarray(self.scale, counts.dtype) * (g[0] - g[1])

    def _check(self, ys: Any) -> None:
        shape, dtype = getattr(ys, "shape", None), getattr(ys, "dtype", None)
        if shape is None or len(shape) != 2 or shape[1] != self.d or jnp.dtype(dtype).kind != "f":
            raise TypeError(f"Expected ys to be SHE reports, float[n, {self.d}], got "
                            f"{getattr(dtype, 'name', type(ys).__name__)}{tuple(shape or ())}.")
        if _validate.is_concrete(ys) and not np.all(np.isfinite(np.asarray(ys))):
            raise ValueError("Expected ys to be finite SHE reports (a NaN or inf entry).")

    def estimator(self) -> _records.Estimator:
        """``p_hat = stats / n`` (the affine form ``a = 1, b = 0``), with SHE's own variance (not a Bernoulli's)."""
        ones = jnp.ones((self.d,), jnp.result_type(jnp.asarray(self.scale), float))
        return _records.Estimator(affine=(ones, jnp.zeros_like(ones)),
                                  variance=lambda p, n: _she_item_nvar(self, p) / jnp.asarray(n))

    def counts(self) -> _records.Counts:
        """Exact: ``S_j = n_j + scale (G_j - G'_j)``, ``G, G'`` iid ``Gamma(n, 1)`` per item (``n`` users in all)."""

        return _records.counts_record(self, self._laplace_sums, draws=lambda iid: float(3 * self.d))

    def likelihood(self) -> _records.Likelihood:
        r"""EM on the exact density: :math:`f(y|x) \propto e^{(|y_x| - |y_x - 1|)/b}` per report (row-scaled into
        ``(0, 1]``; the other coordinates' factors are common to every ``x``); the audit: ``density``, the exact
        sup log density ratios (no finite channel)."""
        return _records.Likelihood(report=self._report_terms, density=self.density_log_ratios)

    def _report_terms(self, ys: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        ys = jnp.asarray(ys)
        b = jnp.asarray(self.scale, ys.dtype)
        L = jnp.exp((jnp.abs(ys) - jnp.abs(ys - 1.0) - 1.0) / b)
        return L, jnp.ones(ys.shape[0], ys.dtype), jnp.zeros(self.d, ys.dtype)

    def density_log_ratios(self) -> np.ndarray:
        """``2 / scale`` for every pair ``x != x'`` (the module docstring's supremum), float64."""
        level = 2.0 / float(np.asarray(self.scale, np.float64))
        return np.where(np.eye(self.d, dtype=bool), 0.0, level)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError(
            "SHE reports real vectors (e_x + Laplace noise): there is no finite channel. ul.audit checks its "
            "guarantee exactly from the Laplace density ratio (SHE.density_log_ratios); for a finite-channel "
            "relative use ul.THE (the same reports thresholded).")

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))


def HE(d: int, eps: Any) -> SHE:
    """Histogram encoding (Wang et al. 2017 §4.3): ``e_x + Lap(2/eps)^d``, i.e. ``SHE`` (summed by the aggregator);
    ``ul.THE`` is the same encoding thresholded."""
    return SHE(d, eps)
