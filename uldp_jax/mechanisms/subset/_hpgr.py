"""Hybrid projective geometry response HPGR (Feldman, Nelson, Nguyen, Talwar, ICML 2022): PGR inside ``h``
blocks, a cheaper server for small ``q``."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _fields, _likelihood, _pytree, _records, _report_space, _spec
from uldp_jax.mechanisms.core import _uniform
from uldp_jax.mechanisms.subset import _pgr, _projective as pg


def _dimension(d: int, h: int, q: int) -> int:
    """The smallest ``t >= 2`` with ``h (q^t - 1)/(q - 1) >= d`` (minilek's ``HybridProjectiveGeometryResponse``)."""
    t = 2
    while h * pg.num_points(q, t) < d:
        t += 1
    return t


class HPGR(_base.Mechanism):
    r"""eps-hybrid projective geometry response: item ``x`` is block ``B = x // b`` and point ``v = x % b`` of
    :math:`P^{t-1}(\mathbb F_q)` (``b`` points); the report ``(B', u)`` is ``(B, u)`` for each ``u`` on ``v``'s
    hyperplane w.p. :math:`e^\varepsilon p`, every other pair w.p. :math:`p = 1/(hb + (e^\varepsilon-1)c_{set})`.

    Not pure (an item's support probability depends on whether the other input shares its block), so its
    estimator also counts each block's reports: with ``T_x`` the reports of ``x``'s block whose hyperplane holds
    ``v`` and ``N_B`` the block's reports,
    :math:`\hat p_x = (T_x - r N_B - n\,p(c_{set} - r b)) / (n\,p(e^\varepsilon-1)(c_{set}-c_{int}))`,
    ``r = cint / cset`` (minilek's alpha, beta, gamma). Not a GLUTF base (``pure()`` is None).

    Privacy: ``eps``-LDP, tight. Reports: ``int32`` in ``[0, h b)``, ``log2(h b)`` bits; no shared randomness.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      h: number of blocks (static, >= 1); ``h = 1`` is PGR.
      q: field size, a prime (static); ``None``: minilek's ``max(2, ceil((e^eps + 1)/h))`` rounded up to a prime.

    References:
      Feldman, Nelson, Nguyen, Talwar, "Private frequency estimation via projective geometry", ICML 2022, §4;
      minilek/private_frequency_oracles ``oracles/hybrid_projective_geometry.cc``.
    """

    d: int = _pytree.static_field()
    eps: Any
    h: int = _pytree.static_field(default=5)
    q: Any = _pytree.static_field(default=None)

    report_kind = "projective"

    def __post_init__(self):
        d = _fields.check_domain(self)
        h = _validate.check_int("h", self.h, minimum=1, maximum=d)
        if self.q is None:  # minilek's; at most one line (q + 1 points) per block, and float32-exact sums
            target = math.ceil((math.exp(min(_fields.concrete_eps(self.eps, "q"), 40.0)) + 1) / h)
            q = pg.next_prime(max(2, min(target, math.ceil(d / h) - 1)))
            while not pg.exact_sums(q, _dimension(d, h, q)):
                q = max(p for p in range(2, q) if pg.is_prime(p))
        else:
            q = _validate.check_int("q", self.q, minimum=2, maximum=2896)
        if not pg.is_prime(q):
            raise ValueError(f"Expected q={q} to be a prime (field arithmetic mod q).")
        if not pg.exact_sums(q, _dimension(d, h, q)):
            raise ValueError(f"Expected q^t < 2^31 and t q^2 < 2^24, got q={q}, t={_dimension(d, h, q)} (d={d}).")
        _fields.set_fields(self, h=h, q=q)

    @property
    def t(self) -> int:
        return _dimension(self.d, self.h, self.q)

    @property
    def b(self) -> int:
        return pg.num_points(self.q, self.t)

    @property
    def num_outputs(self) -> int:
        return self.h * self.b

    def _sizes(self) -> tuple[int, int, int]:
        return self.b, pg.num_points(self.q, self.t - 1), pg.num_points(self.q, self.t - 2)

    def _p(self) -> tuple[jax.Array, jax.Array]:
        """(``e p``, ``p``) written with ``e^{-eps}``."""
        b, cset, _ = self._sizes()
        eps = jnp.asarray(self.eps)
        den = -jnp.expm1(-eps) * cset + jnp.exp(-eps) * self.h * b
        return 1.0 / den, jnp.exp(-eps) / den

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """``int32[...]`` reports ``B' b + u``: on the own hyperplane w.p. ``e p cset``; else another block's
        uniform point or the own block's uniform point off the hyperplane, in proportion to their numbers."""
        b, cset, _ = self._sizes()
        ep, _ = self._p()
        k_in, k_far, k_blk, k_pt, k_any = jax.random.split(key, 5)
        xs = xs.astype(jnp.int32)
        block, point = xs // b, xs % b
        on = jax.random.uniform(k_in, xs.shape, dtype=jnp.float32) < ep * cset
        far_n, near_n = (self.h - 1) * b, b - cset  # other blocks' points; the own block's points off the plane
        far = ~on & (jax.random.uniform(k_far, xs.shape, dtype=jnp.float32) < far_n / (far_n + near_n))
        other = _uniform.uniform_ints(k_blk, max(self.h - 1, 1), xs.shape)
        other = other + (other >= block).astype(jnp.int32)
        u = pg.draw(k_pt, pg.index_to_vec(point, self.q, self.t), on, self.q, self.t)
        anywhere = _uniform.uniform_ints(k_any, b, xs.shape)
        return jnp.where(far, other * b + anywhere, block * b + u).astype(jnp.int32)

    # ---- statistics and estimation ---------------------------------------------------------------------------
    def aggregate(self, ys: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d + h]``: per item, its block's reports whose hyperplane holds it (PGR's enumeration, shifted
        to the report's block); then the reports per block."""
        ys = jnp.reshape(jnp.asarray(ys, jnp.int32), (-1,))
        w = jnp.ones(ys.shape, jnp.int32) if weights is None else jnp.reshape(weights, (-1,)).astype(jnp.int32)
        b = self.b
        inner = _pgr.PGR.__new__(_pgr.PGR)  # PGR over the b points of one block (built without its checks)
        for name, value in (("d", b), ("eps", self.eps), ("q", self.q)):
            object.__setattr__(inner, name, value)
        block = ys // b
        T = inner.aggregate_shifted(ys % b, w, block * b, self.d)
        N = jnp.zeros(self.h, jnp.int32).at[block].add(w)
        return jnp.concatenate([T, N])

    def reports(self) -> _report_space.Reports:
        return _report_space.Reports(stats=self.d + self.h, bits=math.log2(self.num_outputs),
                                     columns=self._column_stats)

    def _coefficients(self) -> tuple[Any, Any, Any]:
        """``(scale, r, offset)``: ``p_x = scale (T_x - r N_B) / n - offset``."""
        b, cset, cint = self._sizes()
        _, p = self._p()
        em1p = self._p()[0] - p  # (e - 1) p
        r = cint / cset
        scale = 1.0 / (em1p * (cset - cint))
        return scale, r, scale * p * (cset - r * b)

    def estimator(self) -> _records.Estimator:
        block = jnp.asarray(np.arange(self.d) // self.b)

        def debias(stats, n):
            scale, r, offset = self._coefficients()
            stats = jnp.asarray(stats, jnp.result_type(scale, jnp.float32))
            T, N = stats[: self.d], stats[self.d:]
            return scale * (T - r * N[block]) / n - offset

        def variance(p, n):
            scale, r, _ = self._coefficients()
            b, cset, cint = self._sizes()
            ep, q = self._p()
            p = jnp.asarray(p)
            PB = jnp.zeros(self.h, p.dtype).at[block].add(p)[block]  # the item's block's mass
            f_s = q * cset + (ep - q) * (cset - cint) * p + (ep - q) * cint * PB  # P(supports x)
            f_n = q * b + (ep - q) * cset * PB  # P(report in x's block)
            second = f_s * (1.0 - r) ** 2 + (f_n - f_s) * r**2
            return scale**2 * (second - (f_s - r * f_n) ** 2) / n

        return _records.Estimator(debias=debias, variance=variance)

    _closed_form = _family.Family("HPGR", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: m.estimator().variance(p, 1.0))

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _column_support(self) -> np.ndarray:
        """bool ``[h b, d]``: report ``B' b + u`` supports the items of block ``B'`` on ``u``'s hyperplane."""
        b = self.b
        if self.d * self.num_outputs > _pgr.MAX_PGR_CHANNEL:
            raise ValueError(f"HPGR: exact channels need d * h * b <= {_pgr.MAX_PGR_CHANNEL}.")
        u = pg.index_to_vec(jnp.arange(b, dtype=jnp.int32), self.q, self.t)
        orth = np.asarray(pg.dot(u[:, None, :], u[None, :, :], self.q) == 0)  # [b, b], symmetric
        x = np.arange(self.d)
        rows = np.arange(self.num_outputs)
        return (rows[:, None] // b == x[None, :] // b) & orth[rows % b][:, x % b]

    def _column_stats(self) -> np.ndarray:
        same = (np.arange(self.num_outputs)[:, None] // self.b == np.arange(self.h)[None, :])
        return np.concatenate([self._column_support(), same], axis=1).astype(np.float64)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        b, cset, _ = self._sizes()
        den = -np.expm1(-eps) * cset + np.exp(-eps) * self.h * b
        Q = np.where(self._column_support().T, 1.0, np.exp(-eps)) / den
        return Q, np.ones(self.num_outputs, bool)

    def support(self, ys: jax.Array) -> jax.Array:
        """``bool[..., d]``: the items of each report's block on its hyperplane (O(n d))."""
        ys = jnp.asarray(ys, jnp.int32)
        x = jnp.arange(self.d, dtype=jnp.int32)
        u = pg.index_to_vec(ys % self.b, self.q, self.t)
        v = pg.index_to_vec(x % self.b, self.q, self.t)
        return (ys[..., None] // self.b == x // self.b) & (pg.dot(u[..., None, :], v, self.q) == 0)

    def likelihood(self) -> _records.Likelihood:
        """em-pure: report ``y`` has likelihood ``e^eps`` on the items it supports and 1 elsewhere (``pure_terms``)."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys),
                                   index=lambda ys: np.asarray(ys).astype(np.int64), support=self._column_support)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))
