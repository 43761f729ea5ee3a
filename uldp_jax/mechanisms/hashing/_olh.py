"""Optimized local hashing (OLH; Wang et al. 2017; 003 §5.3)."""

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


class HashReport(NamedTuple):
    """A local-hashing report: the user's hash seed and the randomized hash value.

    Attributes:
      seed: ``uint32[...]`` seed naming the hash function ``H_seed``.
      value: ``int32[...]`` perturbed hash value in ``[0, g)``.
    """

    seed: jax.Array
    value: jax.Array


def default_g(s: int, eps: Any, theta_n: float = 0.0) -> int:
    """The MSE-optimal integer range (docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l ``g*``; ``e^eps + 1`` for LDP, i.e. ``theta_n = 0``, s = d)."""
    return _th.ulh_g_int(s, _fields.concrete_eps(eps, "g"), theta_n)


def check_hash_fields(mech: Any, s: int, theta_n: float = 0.0) -> None:
    """Checks and sets ``g`` (an int >= 2; ``None``: ``default_g(s, eps, theta_n)``), ``family`` and ``num_hashes``
    of a hash over ``s`` items (OLH, uLH)."""
    g = default_g(s, mech.eps, theta_n) if mech.g is None else mech.g
    g = _validate.check_int("g", g, minimum=2, maximum=2**31 - 1)
    family = _hashing.check_family(mech.family)
    _fields.set_fields(mech, g=g, family=family, num_hashes=_hashing.check_num_hashes(family, mech.num_hashes, g, s))


class OLH(_hashing.SeededHash, _base.Mechanism):
    r"""eps-optimized local hashing over ``d`` items with hash range ``g``.

    A user draws a seed (a hash function ``H`` from the family), hashes ``x`` to ``H(x)`` in ``[0, g)`` and
    reports ``(seed, v)`` with ``v`` = ``g``-ary randomized response of ``H(x)``: ``v = H(x)`` w.p.
    :math:`e^\varepsilon/(e^\varepsilon+g-1)`, else uniform among the other ``g - 1`` values. A report supports
    every item ``x'`` with ``H(x') = v``.

    Pure LDP: :math:`p^* = e^\varepsilon/(e^\varepsilon+g-1)`, :math:`q^* = 1/g` (exact for ``family="full"``;
    for ``"hash"`` up to the family's deviation from pairwise independence, ``O(2**-32)`` with all seeds).

    Privacy: ``eps``-LDP for *every* hash function in the family (the seed is part of the report), tight.

    Attributes:
      d: domain size (static, >= 2; a GLUTF base over one item is built internally without this check).
      eps: privacy budget (leaf).
      g: hash range (static int >= 2). ``None``: the MSE-optimal integer, the better of floor/ceil of the exact
        optimum of 003 eq 28 with ``s = d``, ``theta_N = 0`` (docs/errata.md#003-eqs-49-and-63-exact-optimal-g-and-l ``g*``; tends to ``e^eps + 1`` as ``d``
        grows); needs a concrete eps.
      family: ``"hash"`` (seeded murmur-style hash, default) or ``"full"`` (all ``g**d`` functions).
      num_hashes: number of seeds of a ``"hash"`` family (``None``: all ``2**32``); small values give an
        explicit finite family with an exact channel.

    Channel columns: ``seed * g + v`` for seeds in ``[0, F)`` (``F`` = family size, at most 2**16), values
    ``v`` in ``[0, g)``; ``likelihood().index`` maps reports to them.

    References:
      Wang, Blocki, Li, Jha (USENIX Security 2017) §4.4; He et al. (GLUTF) §5.3.
    """

    d: int = _pytree.static_field()
    eps: Any
    g: Any = _pytree.static_field(default=None)
    family: str = _pytree.static_field(default="hash")
    num_hashes: Any = _pytree.static_field(default=None)

    report_kind = "hash"

    def __post_init__(self):
        check_hash_fields(self, _fields.check_domain(self))

    @property
    def num_outputs(self) -> int:
        return self.family_size * self.g

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        return _th.lh_probs(self.eps, self.g)

    def hash(self, seeds: Any, items: Any) -> Any:
        """``H_seed(x)`` (``uint32``; NumPy in, NumPy out)."""
        return _hashing.hash_values(self.family, self.g, self.d, seeds, items)

    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> HashReport:
        """Randomizes ``xs: int32[...]``; returns ``HashReport`` with fields of shape ``xs.shape``."""
        keep, _ = self._pq()
        k_seed, k_keep, k_other = jax.random.split(key, 3)
        seeds = _hashing.draw_seeds(k_seed, xs.shape, self.num_hashes)
        hx = self.hash(seeds, xs).astype(jnp.int32)
        r = jax.random.randint(k_other, xs.shape, 0, self.g - 1, dtype=jnp.int32)
        other = r + (r >= hx).astype(jnp.int32)
        value = jnp.where(jax.random.uniform(k_keep, xs.shape, dtype=jnp.float32) < keep, hx, other)
        return HashReport(seeds, value.astype(jnp.int32))

    def support(self, ys: HashReport) -> jax.Array:
        """``bool[..., d]``: which items each report supports (``H_seed(x) == v``); O(n d), vectorised."""
        h = self.hash(ys.seed[..., None], jnp.arange(self.d, dtype=jnp.uint32))
        return h == ys.value[..., None].astype(jnp.uint32)

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the support-ratio likelihood ``t + (1 - t) 1[x in S(y)]`` of each report (``core._likelihood``);
        the channel's columns are ``(seed, v)`` (``_columns``, ``_column_support``)."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys), index=self._columns,
                                   support=self._column_support)

    def estimator(self) -> _records.Estimator:
        t = jnp.exp(-jnp.asarray(self.eps))
        gap = (self.g - 1) * -jnp.expm1(-jnp.asarray(self.eps)) / (self.g * (1.0 + (self.g - 1) * t))
        return _records.Estimator(affine=(jnp.full((self.d,), gap),
                                          jnp.full((self.d,), 1.0 / self.g, dtype=gap.dtype)),
                                  exact=self.family == "full")  # "hash": nearly pairwise independent

    def _seeds(self) -> np.ndarray:
        if self.num_hashes is None or self.num_hashes > _hashing.MAX_CHANNEL_HASHES:
            raise ValueError(
                f"OLH: the exact channel enumerates the hash family; it has {self.family_size} functions, more "
                f"than {_hashing.MAX_CHANNEL_HASHES}. Use family='full' on a small domain or a small num_hashes.")
        _reports.check_channel_size("OLH", self.d, self.num_hashes * self.g)
        return np.arange(self.num_hashes, dtype=np.uint32)

    def _column_support(self) -> np.ndarray:
        """bool ``[F * g, d]``: items supported by each channel column ``(seed, v)``."""
        seeds = self._seeds()
        h = self.hash(seeds[:, None], np.arange(self.d))  # [F, d]
        sup = h[:, None, :] == np.arange(self.g, dtype=np.uint32)[None, :, None]  # [F, g, d]
        return sup.reshape(-1, self.d)

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        t = np.exp(-eps)
        keep, other = 1.0 / (1.0 + (self.g - 1) * t), t / (1.0 + (self.g - 1) * t)
        sup = self._column_support()  # [F g, d]
        Q = np.where(sup.T, keep, other) / self.num_hashes
        return Q, np.ones(Q.shape[1], dtype=bool)

    def _columns(self, ys: HashReport) -> np.ndarray:
        return np.asarray(ys.seed).astype(np.int64) * self.g + np.asarray(ys.value).astype(np.int64)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    _closed_form = _family.Family(
        "OLH", "g", lambda e, s, th, g: _nmse.olh_nmse(e, s, g), _family.ulh_probs, ldp=True, integer=True,
        domain=lambda s: (2, 2**31 - 1), optimum=lambda e, s, th: _optima.optimal_g(e, s, 0.0), rebuild=_hashing.tuned_g)

    def pure(self) -> _records.Pure:
        """Pure LDP: ``p* = e/(e+g-1)``, ``q* = 1/g``; the share ``e/(e+d-1)`` is attained by a hash with
        ``H(i) = v`` and ``H(t) != v`` for every other ``t``."""
        p, q = self._pq()
        return _records.Pure(p, q, share=_th.ratio_share(self.eps, self.d),
                             z_max=lambda s: _th.ulh_z_max(s, self.eps, self.g),
                             z_published=_th.ulh_z_published(self.eps, self.g))

    def value_bits(self) -> Any:
        """003 Table 1's ``log2 g``: the hashed value's bits, without the seed (``reports().bits`` adds it)."""
        return np.log2(self.g)
