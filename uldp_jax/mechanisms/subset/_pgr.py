"""Projective geometry response PGR (Feldman, Nelson, Nguyen, Talwar, ICML 2022): a block design on the points of
a projective space, subset selection's variance with ``log2 K`` bits."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _fields, _likelihood, _pytree, _records, _report_space, _spec
from uldp_jax.mechanisms.subset import _projective as pg

MAX_PGR_CHANNEL = 2**22  # d * K entries of an exact channel
CHUNK_POINTS = 2**21  # hyperplane points enumerated per step of aggregate (bounded memory)


def default_q(d: int, eps: float) -> int:
    """minilek's choice: the smallest prime ``>= ceil(e^eps + 1)``; once ``q + 1 >= d`` (one line of ``K = q + 1``
    points already holds the domain) the smallest prime ``>= d - 1``, so a large eps pads no further; at most
    the largest prime whose sums in ``aggregate`` stay float32-exact (``_projective.exact_sums``)."""
    q = pg.next_prime(min(math.ceil(math.exp(min(eps, 40.0)) + 1.0), max(d - 1, 2)))
    while not pg.exact_sums(q, pg.dimension(d, q)):
        q = max(p for p in range(2, q) if pg.is_prime(p))
    return q


def pgr_probs(eps: Any, K: int, cset: int, cint: int) -> tuple[Any, Any]:
    r"""``(p*, q*)``: a report lies on the own point's hyperplane w.p. :math:`e c_{set}/((e-1)c_{set}+K)`, on
    another point's w.p. :math:`((e-1)c_{int}+c_{set})/((e-1)c_{set}+K)` (written with ``e^{-eps}``)."""
    t = jnp.exp(-jnp.asarray(eps))
    u = -jnp.expm1(-jnp.asarray(eps))
    den = u * cset + t * K
    return cset / den, (u * cint + t * cset) / den


class PGR(_base.Mechanism):
    r"""eps-projective geometry response over ``d`` items (Feldman, Nelson, Nguyen, Talwar 2022).

    Items are the first ``d`` of the ``K = (q^t - 1)/(q - 1)`` points of :math:`P^{t-1}(\mathbb F_q)` (``q``
    prime, ``t`` the smallest ``>= 2`` with ``K >= d``). Item ``x`` (point ``v``) reports a point ``u``: each of
    the ``cset`` points with :math:`\langle u, v\rangle = 0` w.p. :math:`e^\varepsilon p`, every other point w.p.
    ``p``, :math:`p = 1/((e^\varepsilon-1)c_{set}+K)`. A report supports the items on its hyperplane, so
    ``aggregate`` counts them (``cset`` points per report, enumerated in chunks) and ``debias`` is the pure
    affine inverse. With ``q = e^eps + 1`` a prime this is subset selection's variance.

    Pure LDP: ``p*, q*`` of ``pgr_probs``. Privacy: ``eps``-LDP, tight. Reports: ``int32`` point indices in
    ``[0, K)``, ``log2 K`` bits; no shared randomness (the design is public and fixed).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      q: the field size, a prime (static); ``None``: ``default_q`` (needs a concrete eps).

    References:
      Feldman, Nelson, Nguyen, Talwar, "Private frequency estimation via projective geometry", ICML 2022;
      minilek/private_frequency_oracles ``oracles/projective_geometry.cc``.
    """

    d: int = _pytree.static_field()
    eps: Any
    q: Any = _pytree.static_field(default=None)

    report_kind = "projective"

    def __post_init__(self):
        d = _fields.check_domain(self)
        q = default_q(d, _fields.concrete_eps(self.eps, "q")) if self.q is None else self.q
        q = _validate.check_int("q", q, minimum=2, maximum=2896)
        if not pg.is_prime(q):
            raise ValueError(f"Expected q={q} to be a prime (field arithmetic mod q).")
        t = pg.dimension(d, q)
        if not pg.exact_sums(q, t):  # int32 indices; float32-exact hyperplane sums
            raise ValueError(f"Expected q^t < 2^31 and t q^2 < 2^24, got q={q}, t={t} (d={d}).")
        _fields.set_fields(self, q=q)

    # ---- the design ------------------------------------------------------------------------------------------
    @property
    def t(self) -> int:
        return pg.dimension(self.d, self.q)

    @property
    def num_outputs(self) -> int:
        return pg.num_points(self.q, self.t)

    @property
    def cset(self) -> int:
        return pg.num_points(self.q, self.t - 1)

    @property
    def cint(self) -> int:
        return pg.num_points(self.q, self.t - 2)

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        return pgr_probs(self.eps, self.num_outputs, self.cset, self.cint)

    def _inv(self) -> jax.Array:
        return jnp.asarray(pg.inverse_table(self.q))

    # ---- sampling --------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """``int32[...]`` reports: on the own hyperplane w.p. ``p*`` (a uniform one of its ``cset`` points), else
        a uniform point off it (a uniform non-zero value of :math:`\\langle u, v\\rangle` and free coordinates)."""
        p_star, _ = self._pq()
        k_in, k_pt = jax.random.split(key)
        on = jax.random.uniform(k_in, xs.shape, dtype=jnp.float32) < p_star
        v = pg.index_to_vec(xs.astype(jnp.int32), self.q, self.t)
        return pg.draw(k_pt, v, on, self.q, self.t).astype(jnp.int32)

    # ---- statistics and estimation ---------------------------------------------------------------------------
    def support(self, ys: jax.Array) -> jax.Array:
        """``bool[..., d]``: the items on each report's hyperplane (O(n d); ``aggregate`` enumerates instead)."""
        u = pg.index_to_vec(jnp.asarray(ys, jnp.int32), self.q, self.t)
        v = pg.index_to_vec(jnp.arange(self.d, dtype=jnp.int32), self.q, self.t)
        return pg.dot(u[..., None, :], v, self.q) == 0

    def aggregate(self, ys: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]``: per item, the reports whose hyperplane holds it (``cset`` points per report, in chunks of
        reports holding about ``CHUNK_POINTS`` points; points ``>= d`` are padding and dropped)."""
        ys = jnp.reshape(jnp.asarray(ys, jnp.int32), (-1,))
        w = jnp.ones(ys.shape, jnp.int32) if weights is None else jnp.reshape(weights, (-1,)).astype(jnp.int32)
        return self.aggregate_shifted(ys, w, jnp.zeros(ys.shape, jnp.int32), self.d)

    def aggregate_shifted(self, ys: jax.Array, w: jax.Array, shift: jax.Array, length: int) -> jax.Array:
        """``int32[length]``: the support counts of reports ``ys: int32[n]`` (weights ``w``), report ``i``'s points
        shifted by ``shift[i]`` (HPGR's blocks); points beyond ``length`` are padding and dropped."""
        B = max(1, min(ys.shape[0], CHUNK_POINTS // self.cset))
        pad = -ys.shape[0] % B
        cut = lambda a: jnp.concatenate([a, jnp.zeros(pad, jnp.int32)]).reshape(-1, B)  # noqa: E731
        inv, table = self._inv(), jnp.asarray(pg.placed_index_table(self.q, self.t))

        def step(acc, chunk):
            y, wt, sh = chunk
            pts = pg.hyperplane(pg.index_to_vec(y, self.q, self.t), self.q, self.t, inv, table)  # [B, cset]
            pts = jnp.where(pts < self.d, pts + sh[:, None], length)  # a block's padding points are dropped
            wt = jnp.broadcast_to(wt[:, None], pts.shape)
            return acc.at[pts.reshape(-1)].add(wt.reshape(-1), mode="drop"), None

        acc, _ = jax.lax.scan(step, jnp.zeros(length, jnp.int32), (cut(ys), cut(w), cut(shift)))
        return acc

    def reports(self) -> _report_space.Reports:
        return _report_space.Reports(stats=self.d, check=self._check, bits=math.log2(self.num_outputs))

    def _check(self, ys: Any) -> None:
        arr = np.asarray(ys)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"Expected ys to be integer point indices (ul.perturb of PGR), got dtype {arr.dtype}.")
        if arr.size and (arr.min() < 0 or arr.max() >= self.num_outputs):
            raise ValueError(f"Expected ys in [0, {self.num_outputs}), got values in [{arr.min()}, {arr.max()}].")

    def estimator(self) -> _records.Estimator:
        p, q = self._pq()
        return _records.Estimator(affine=(jnp.full((self.d,), p - q), jnp.full((self.d,), q)))

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the support-ratio likelihood ``t + (1 - t) 1[x on the report's hyperplane]``."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys), index=self._columns,
                                   support=self._column_support)

    def pure(self) -> _records.Pure:
        r"""Pure LDP (``pgr_probs``). Share (GLUTF's question): without padding (``d = K``) every report's
        hyperplane holds ``cset`` items, so :math:`\max p_{im}/\sum_t p_{tm} = e/((e-1)c_{set} + d)`; with padding
        GLUTF reads it off the exact channel."""
        share = None
        if self.d == self.num_outputs:
            eps = jnp.asarray(self.eps)
            share = 1.0 / (-jnp.expm1(-eps) * self.cset + jnp.exp(-eps) * self.d)
        return _records.Pure(*self._pq(), share=share)

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _column_support(self) -> np.ndarray:
        """bool ``[K, d]``: the items on each point's hyperplane."""
        K = self.num_outputs
        if self.d * K > MAX_PGR_CHANNEL:
            raise ValueError(f"PGR: exact channels need d * K <= {MAX_PGR_CHANNEL}, got d={self.d}, K={K}.")
        return np.asarray(self.support(jnp.arange(K, dtype=jnp.int32)))

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        t = np.exp(-_spec.eps_value(self.eps))
        K, cset = self.num_outputs, self.cset
        den = -np.expm1(-_spec.eps_value(self.eps)) * cset + t * K
        Q = np.where(self._column_support().T, 1.0, t) / den
        return Q, np.ones(K, bool)

    def _columns(self, ys: Any) -> np.ndarray:
        return np.asarray(ys).astype(np.int64)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    _closed_form = _family.Family("PGR", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: pgr_item_nvar(m.eps, p, m.q, m.t))


def pgr_item_nvar(eps: Any, p: Any, q: int, t: int) -> Any:
    r"""Per-item :math:`n\mathrm{Var}(\hat p_x) = f(1-f)/(p^*-q^*)^2`, :math:`f = q^* + (p^*-q^*)p_x` (iid) of PGR
    over the points of :math:`P^{t-1}(\mathbb F_q)`; ``p: float[d]``."""
    P, Q = pgr_probs(eps, pg.num_points(q, t), pg.num_points(q, t - 1), pg.num_points(q, t - 2))
    f = Q + (P - Q) * jnp.asarray(p)
    return f * (1.0 - f) / (P - Q) ** 2
