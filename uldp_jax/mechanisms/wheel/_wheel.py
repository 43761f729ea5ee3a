"""The Wheel mechanism (Wang et al., VLDB 2020; 003 App. B)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _fields, _likelihood, _pytree, _reports, _spec, _records
from uldp_jax.mechanisms.core import _hashing
from uldp_jax.mechanisms.core import _pure_uldp as _th
from uldp_jax.mechanisms.core import _family
from uldp_jax.mechanisms.core import _nmse
from uldp_jax.mechanisms.core import _optima


class WheelReport(NamedTuple):
    """A Wheel report: the hash seed and a point on the unit circle.

    Attributes:
      seed: ``uint32[...]`` seed naming the hash function ``H_seed: [0, d) -> [0, 1)``.
      y: ``float32[...]`` reported point in ``[0, 1)``.
    """

    seed: jax.Array
    y: jax.Array


# Coverage range in which float32 sampling is exact enough: reported points are float32, 2**-24 apart near 1,
# so an arc of length l holds l / 2**-24 representable points and a draw rounds onto the arc's open end with
# probability about 2**-25 / l (<= 2**-11 relative at L_MIN). Below ~1e-8 the float64 channel loses the arc
# altogether (rows stop summing to 1). L_MAX keeps 1 - l representable in float32.
L_MIN = 2.0**-14
L_MAX = 1.0 - 2.0**-22


def WHEEL_L_DOMAIN(s):  # noqa: N802  (a Family domain: the coverage's valid range, closed)
    """``[L_MIN, L_MAX]``: the coverages float32 sampling represents (``Family.domain``, ``closed=True``)."""
    return L_MIN, L_MAX


def default_l(s: int, eps: Any, theta_n: float = 0.0) -> float:
    """The MSE-optimal coverage ``1 / g*`` (docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l; ``s = d``, ``theta_n = 0`` for the LDP Wheel), clipped to
    ``[L_MIN, L_MAX]`` (the optimum leaves it for eps above ~9.7 or near 0)."""
    eps = _fields.concrete_eps(eps, "l")
    with _th.x64():
        return float(np.clip(float(_th.uwheel_l_opt(s, eps, float(theta_n))), L_MIN, L_MAX))


def check_l(l: Any) -> Any:
    """``l`` in ``[L_MIN, L_MAX]`` (concrete values; tracers pass)."""
    arr = _validate.check_keep_probability("l", l)
    if _validate.is_concrete(arr) and (np.any(arr < L_MIN) or np.any(arr > L_MAX)):
        raise ValueError(f"Expected l={l!r} in [2**-14, 1 - 2**-22]: shorter arcs are not sampled exactly by "
                         "float32 points (2**-24 apart).")
    return arr


def check_wheel_fields(mech: Any, s: int, theta_n: float = 0.0) -> None:
    """Checks and sets the coverage ``l`` (``None``: ``default_l(s, eps, theta_n)``) and ``num_hashes`` of a Wheel
    over ``s`` items (Wheel, uWheel)."""
    l = default_l(s, mech.eps, theta_n) if mech.l is None else mech.l
    _fields.set_fields(mech, l=check_l(l), num_hashes=_hashing.check_num_hashes("hash", mech.num_hashes, 2, s))


class Wheel(_hashing.SeededHash, _base.Mechanism):
    r"""eps-Wheel over ``d`` items with coverage ``l``.

    A user draws a seed, hashes ``x`` to ``h = H(x)`` in ``[0, 1)`` and reports ``(seed, y)`` with ``y`` drawn
    on the circle ``[0, 1)`` with density :math:`e^\varepsilon/(le^\varepsilon+1-l)` on the arc
    :math:`C_h = [h, h + l) \bmod 1` and :math:`1/(le^\varepsilon+1-l)` elsewhere (003 eq 58). A report supports
    every item ``x'`` whose arc contains ``y``. Hash values lie on the grid ``k 2^{-24}``.

    Pure LDP: :math:`p^* = le^\varepsilon/(le^\varepsilon+1-l)`, :math:`q^* = l` (the latter for uniform,
    independent hash values, up to ``O(2**-24)`` for the full seed range; a small finite family deviates).
    With ``l = 1/g`` it has the pure probabilities of OLH with range ``g``.

    Privacy: ``eps``-LDP for every hash function (the density ratio is at most ``e^eps``), tight.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      l: coverage in ``[L_MIN, L_MAX] = [2**-14, 1 - 2**-22]`` (leaf). ``None``: the MSE-optimal ``1 / g*``
        with ``s = d``, ``theta_N = 0`` (about ``1 / (e^eps + 1)``), clipped to that range; needs a concrete eps.
      num_hashes: seeds of the hash family (``None``: all ``2**32``); small values give an exact channel.

    Channel (discretised): for each seed, the circle is cut at ``0`` and at every arc end ``H(t)``,
    ``H(t) + l mod 1``, giving ``2 d + 1`` cells (some of length 0) on which every density is constant; column
    ``seed * (2 d + 1) + cell``. ``likelihood().index`` maps reports to cells.

    References:
      Wang et al. (PVLDB 13(8), 2020); He et al. (GLUTF) App. B.
    """

    d: int = _pytree.static_field()
    eps: Any
    l: Any = None
    num_hashes: Any = _pytree.static_field(default=None)

    report_kind = "wheel"

    def __post_init__(self):
        check_wheel_fields(self, _fields.check_domain(self))

    @property
    def num_cells(self) -> int:
        return 2 * self.d + 1

    @property
    def num_outputs(self) -> int:
        return self.family_size * self.num_cells

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        return _th.wheel_probs(self.eps, self.l)

    def hash(self, seeds: Any, items: Any) -> Any:
        """``H_seed(x)`` in ``[0, 1)`` (float32 under JAX, float64 under NumPy; equal values)."""
        return _hashing.unit_interval(_hashing.mix32(seeds, items))

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> WheelReport:
        """Randomizes ``xs: int32[...]``; returns ``WheelReport`` with fields of shape ``xs.shape``."""
        p, _ = self._pq()
        l = jnp.asarray(self.l)
        k_seed, k_in, k_pos = jax.random.split(key, 3)
        seeds = _hashing.draw_seeds(k_seed, xs.shape, self.num_hashes)
        h = self.hash(seeds, xs)
        u = jax.random.uniform(k_pos, xs.shape, dtype=jnp.float32)
        inside = jax.random.uniform(k_in, xs.shape, dtype=jnp.float32) < p
        y = h + jnp.where(inside, l * u, l + (1.0 - l) * u)
        y = y - jnp.floor(y)
        return WheelReport(seeds, y.astype(jnp.float32))

    def support(self, ys: WheelReport) -> jax.Array:
        """``bool[..., d]``: items whose arc covers the reported point; O(n d), vectorised."""
        h = self.hash(ys.seed[..., None], jnp.arange(self.d, dtype=jnp.uint32))
        diff = ys.y[..., None] - h
        return diff - jnp.floor(diff) < self.l

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the support-ratio likelihood ``t + (1 - t) 1[x in S(y)]`` of each report (``core._likelihood``);
        the channel's columns are the cells of each seed's circle (``_columns``, ``_column_support``)."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys), index=self._columns,
                                   support=self._column_support)

    def estimator(self) -> _records.Estimator:
        l = jnp.asarray(self.l)
        t = jnp.exp(-jnp.asarray(self.eps))
        gap = l * (1.0 - l) * -jnp.expm1(-jnp.asarray(self.eps)) / (l + (1.0 - l) * t)
        # affine: the model of independent uniform hash values; a finite seed family only approximates it
        return _records.Estimator(affine=(jnp.full((self.d,), gap), jnp.full((self.d,), l, dtype=gap.dtype)),
                                  exact=False)

    # ---- exact (discretised) channel
    def _cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(boundaries [F, C], lengths [F, C], covered bool [F, C, d])`` of the discretised circle."""
        if self.num_hashes is None or self.num_hashes > _hashing.MAX_CHANNEL_HASHES:
            raise ValueError(
                f"Wheel: the exact channel enumerates the hash family; it has {self.family_size} functions, "
                f"more than {_hashing.MAX_CHANNEL_HASHES}. Pass a small num_hashes.")
        _reports.check_channel_size("Wheel", self.d, self.num_hashes * self.num_cells)
        l = float(np.asarray(self.l, np.float64))
        H = self.hash(np.arange(self.num_hashes, dtype=np.uint32)[:, None], np.arange(self.d))  # [F, d]
        ends = np.mod(H + l, 1.0)
        B = np.sort(np.concatenate([np.zeros((H.shape[0], 1)), H, ends], axis=1), axis=1)  # [F, C]
        upper = np.concatenate([B[:, 1:], np.ones((H.shape[0], 1))], axis=1)
        lengths = upper - B
        mid = (B + upper) / 2.0
        diff = mid[:, :, None] - H[:, None, :]
        covered = (diff - np.floor(diff) < l) & (lengths[:, :, None] > 0)
        return B, lengths, covered

    def _column_support(self) -> np.ndarray:
        """bool ``[F * C, d]``: items supported by each cell column."""
        _, _, covered = self._cells()
        return covered.reshape(-1, self.d)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        l = float(np.asarray(self.l, np.float64))
        t = np.exp(-eps)
        _, lengths, covered = self._cells()
        dens = np.where(covered, 1.0, t) / (l + (1.0 - l) * t)  # [F, C, d]
        Q = (lengths[:, :, None] * dens).reshape(-1, self.d).T / self.num_hashes
        return Q, np.ones(Q.shape[1], dtype=bool)

    def _columns(self, ys: WheelReport) -> np.ndarray:
        B, _, _ = self._cells()
        seed = np.asarray(ys.seed).astype(np.int64)
        y = np.asarray(ys.y).astype(np.float64)
        cell = (B[seed] <= y[..., None]).sum(axis=-1) - 1
        return seed * self.num_cells + cell

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))


    _closed_form = _family.Family(
        "Wheel", "l", lambda e, s, th, cov: _nmse.wheel_nmse(e, s, cov), _family.uwheel_probs, ldp=True,
        domain=WHEEL_L_DOMAIN, closed=True, optimum=lambda e, s, th: _optima.optimal_l(e, s, 0.0))

    def pure(self) -> _records.Pure:
        """Pure LDP (``wheel_probs``); the share ``e/(e+d-1)``: a point covered by one arc only (exists for some
        hash function)."""
        p, q = self._pq()
        return _records.Pure(p, q, share=_th.ratio_share(self.eps, self.d),
                             z_max=lambda s: _th.uwheel_z_max(s, self.eps, self.l),
                             z_published=_th.uwheel_z_published(self.eps, self.l))

    def value_bits(self) -> float:
        """003 Def 5 for a float32 point: 32 bits, without the seed (``reports().bits`` adds its ``log2 F``)."""
        return 32.0
