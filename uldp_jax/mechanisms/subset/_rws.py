r"""RWS, short reports for subset selection (Fang et al., USENIX Security 2025): subset selection's support law
sent as a seed naming a public k-subset and a ``ceil(log2 d)``-bit shift."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _fields, _hashing, _likelihood, _nmse, _optima, _pytree
from uldp_jax.mechanisms.core import _pure_uldp as _th
from uldp_jax.mechanisms.core import _records, _report_space, _reports, _spec, _uniform
from uldp_jax.mechanisms.subset import _pgr, _rws_subsets, _ss

FAMILIES = ("hash", "full")


class RWSReport(NamedTuple):
    """An RWS report: the seed naming the public subset ``S_seed`` and the shift ``y``; it supports ``S_seed + y``.

    Attributes:
      seed: ``uint32[...]`` seed of the subset.
      shift: ``int32[...]`` in ``[0, d)``.
    """

    seed: jax.Array
    shift: jax.Array


def _check_seeds(family: Any, num_seeds: Any, d: int, k: int) -> int | None:
    if family not in FAMILIES:
        raise ValueError(f"Expected family={family!r} in {FAMILIES}.")
    if family == "full":
        size = math.comb(d, k)
        if size > _hashing.MAX_CHANNEL_HASHES:
            raise ValueError(f"family='full' enumerates the C(d, k)={size} subsets, more than "
                             f"{_hashing.MAX_CHANNEL_HASHES}; use family='hash'.")
        if num_seeds is not None and num_seeds != size:
            raise ValueError(f"Expected num_seeds={num_seeds!r} to be None or C(d, k)={size} with family='full'.")
        return size
    if num_seeds is None:
        return None
    return _validate.check_int("num_seeds", num_seeds, minimum=1, maximum=_hashing.MAX_EXPLICIT_HASHES)


def _tuned_k(mech: Any, k: Any, theta_n: Any = None) -> Any:
    """``ul.tune``'s copy with ``k`` set (the ``"full"`` family's size ``C(d, k)`` follows it)."""
    return _pytree.replace(mech, k=k, num_seeds=None if mech.family == "full" else mech.num_seeds)


class RWS(_base.Mechanism):
    r"""eps-subset selection sent as a short report (Fang et al.'s RWS, "random wheel spinner").

    A seed names a public k-subset ``S`` of ``[0, d)`` (``_rws_subsets``). Item ``x`` reports the shift ``y`` with
    :math:`P(y|x, S) = e^\varepsilon/(ke^\varepsilon+d-k)` when :math:`(x - y) \bmod d \in S`, else
    :math:`1/(ke^\varepsilon+d-k)`, and the report ``(seed, y)`` supports ``S + y`` (mod ``d``). For a uniform
    k-subset ``S`` the support ``T = S + y`` has exactly subset selection's law (``ul.SS`` with the same ``k``):
    :math:`P(T|x) \propto e^\varepsilon` for ``x in T`` and ``1`` otherwise, since each ``T`` arises from one
    ``S`` per shift. So the support counts, the affine ``debias`` (SS's ``p*``, ``q*``) and every per-item
    variance are SS's: ``ul.theory`` gives SS's closed form (003 §5.1), and the per-item MSE equals SS's in both
    the iid and the fixed model (covariances between items differ; the sum of variances does not).

    Seed model (public coin): the seed is drawn uniformly by the user, independently of ``x``, from a public
    family known to the server: ``"hash"`` (``num_seeds`` seeds, ``None``: all ``2**32``; the subsets of an ideal
    public hash, so the affine model is SS's up to the hash's departure from uniform subsets, like OLH's
    ``family="hash"``) or ``"full"`` (the seed is the subset's rank, ``C(d, k)`` seeds: exactly uniform
    subsets, exactly SS's law; small domains). The exact channel is over ``(seed, y)`` with the seed uniform on
    the finite family: ``Q[x, seed d + y] = P(y | x, S_seed) / F``.

    Privacy: ``eps``-LDP for *every* subset ``S`` (the seed is independent of ``x`` and part of the report), tight.

    Communication: ``reports().bits`` is ``ceil(log2 d)`` bits for ``y`` plus ``log2 F`` for the seed (32 with
    the default family); where the server assigns the seeds (public coin, e.g. from user ids) a user sends
    ``value_bits() = ceil(log2 d)`` bits. Decoding regenerates each report's subset: ``O(n d)`` work, like SS.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      k: subset size (static int in ``[1, d - 1]``); ``None``: SS's MSE-optimal integer (``ul.SS``'s default,
        also Fang et al.'s rounding of ``d / (e^eps + 1)``); needs a concrete eps.
      family: ``"hash"`` (default) or ``"full"``.
      num_seeds: the family's size (``"hash"``: ``None`` for all ``2**32``, or an int giving an explicit finite
        family with an exact channel when at most ``2**16``; ``"full"``: ``C(d, k)``, derived).

    Channel columns: ``seed * d + y`` for seeds in ``[0, F)`` (``F`` at most ``2**16``), ``y`` in ``[0, d)``.

    References:
      Fang et al., USENIX Security 2025; SEUNICK/LDP_Frequency_Protocols ``fp/RWS.py``.
    """

    d: int = _pytree.static_field()
    eps: Any
    k: Any = _pytree.static_field(default=None)
    family: str = _pytree.static_field(default="hash")
    num_seeds: Any = _pytree.static_field(default=None)

    report_kind = "seeded_subset"

    def __post_init__(self):
        _ss.check_k(self, _fields.check_domain(self))
        _fields.set_fields(self, num_seeds=_check_seeds(self.family, self.num_seeds, self.d, self.k))

    @property
    def family_size(self) -> int:
        """The number of seeds ``F``."""
        return 2**32 if self.num_seeds is None else self.num_seeds

    @property
    def num_outputs(self) -> int:
        return self.family_size * self.d

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        return _th.ss_probs(self.d, self.eps, self.k)

    def subsets(self, seeds: Any) -> jax.Array:
        """``bool[..., d]``: the public subsets ``S_seed`` of ``seeds: uint32[...]``."""
        return _rws_subsets.subsets(self.family, seeds, self.d, self.k)

    # ---- sampling --------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> RWSReport:
        """Randomizes ``xs: int32[...]``: a uniform seed, then ``y = x - u`` with ``u`` a uniform member of ``S``
        w.p. ``p* = k e / (k e + d - k)``, else a uniform non-member (rank selection on the subset's bits)."""
        xs = jnp.asarray(xs, jnp.int32)
        k_seed, k_own, k_rank = jax.random.split(key, 3)
        seeds = _hashing.draw_seeds(k_seed, xs.shape, self.num_seeds)
        own = jax.random.uniform(k_own, xs.shape, dtype=jnp.float32) < self._pq()[0]
        rank = _uniform.uniform_ints(k_rank, jnp.where(own, self.k, self.d - self.k), xs.shape)
        bits = self.subsets(seeds)
        u = _rws_subsets.select(jnp.where(own[..., None], bits, ~bits), rank)
        return RWSReport(seeds, (xs - u) % self.d)

    # ---- statistics and estimation ---------------------------------------------------------------------------
    def support(self, ys: RWSReport) -> jax.Array:
        """``bool[..., d]``: item ``i`` is supported when ``(i - y) mod d`` is in ``S_seed`` (O(n d))."""
        bits = self.subsets(ys.seed)
        idx = (jnp.arange(self.d, dtype=jnp.int32) - jnp.asarray(ys.shift, jnp.int32)[..., None]) % self.d
        return jnp.take_along_axis(bits, idx, axis=-1)

    def aggregate(self, ys: RWSReport, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]``: per-item support counts, in chunks of reports holding about ``_pgr.CHUNK_POINTS`` subset
        entries, PGR's budget for the same enumeration (``O(n d)`` work, bounded memory)."""
        seed = jnp.reshape(jnp.asarray(ys.seed, jnp.uint32), (-1,))
        shift = jnp.reshape(jnp.asarray(ys.shift, jnp.int32), (-1,))
        n = seed.shape[0]
        w = jnp.ones(n, jnp.int32) if weights is None else jnp.reshape(weights, (-1,)).astype(jnp.int32)
        B = max(1, min(n, _pgr.CHUNK_POINTS // self.d))
        pad = -n % B
        cut = lambda a: jnp.concatenate([a, jnp.zeros(pad, a.dtype)]).reshape(-1, B)  # noqa: E731; weight 0 pads

        def step(acc, chunk):
            s, y, wt = chunk
            sup = self.support(RWSReport(s, y))
            return acc + jnp.sum(jnp.where(sup, wt[:, None], 0), axis=0, dtype=jnp.int32), None

        acc, _ = jax.lax.scan(step, jnp.zeros(self.d, jnp.int32), (cut(seed), cut(shift), cut(w)))
        return acc

    def value_bits(self) -> int:
        """The shift's ``ceil(log2 d)`` bits, without the seed (the public-coin report)."""
        return math.ceil(math.log2(self.d))

    def reports(self) -> _report_space.Reports:
        """Support counts (``d``); ``ceil(log2 d) + log2 F`` bits (the seed sent with the shift)."""
        return _report_space.Reports(stats=self.d, check=self._check,
                                     bits=float(self.value_bits() + math.log2(self.family_size)))

    def _check(self, ys: Any) -> None:
        """Structure and dtypes (``default_check``); values too where the reports are concrete (not under jit)."""
        _reports.default_check(self, ys)
        if not (_validate.is_concrete(ys.seed) and _validate.is_concrete(ys.shift)):
            return
        seed, shift = np.asarray(ys.seed), np.asarray(ys.shift)
        if shift.size and (shift.min() < 0 or shift.max() >= self.d):
            raise ValueError(f"Expected ys.shift in [0, {self.d}), got values in [{shift.min()}, {shift.max()}].")
        if seed.size and self.num_seeds is not None and seed.max() >= self.num_seeds:
            raise ValueError(f"Expected ys.seed in [0, {self.num_seeds}), got a seed {seed.max()}.")

    def estimator(self) -> _records.Estimator:
        """SS's affine model; exact on the ``"full"`` family's channel, the ideal-hash model for ``"hash"``."""
        p, q = self._pq()
        return _records.Estimator(affine=(jnp.full((self.d,), p - q), jnp.full((self.d,), q)),
                                  exact=self.family == "full")

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the support-ratio likelihood ``t + (1 - t) 1[x in S(y)]`` (``P(y|x, S)`` above); the channel's
        columns are ``(seed, y)``."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys), index=self._columns,
                                   support=self._column_support)

    def pure(self) -> _records.Pure:
        """Pure LDP: SS's ``p*``, ``q*`` and share ``e/(ke + d - k)`` (every column supports ``k`` items)."""
        p, q = self._pq()
        return _records.Pure(p, q, share=_th.ss_share(self.d, self.eps, self.k))

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _seeds(self) -> np.ndarray:
        if self.num_seeds is None or self.num_seeds > _hashing.MAX_CHANNEL_HASHES:
            raise ValueError(f"RWS: the exact channel enumerates the seeds; there are {self.family_size}, more than "
                             f"{_hashing.MAX_CHANNEL_HASHES}. Use family='full' on a small domain or a small "
                             f"num_seeds.")
        _reports.check_channel_size("RWS", self.d, self.num_seeds * self.d)
        return np.arange(self.num_seeds, dtype=np.uint32)

    def _column_support(self) -> np.ndarray:
        """bool ``[F d, d]``: the items each column ``(seed, y)`` supports."""
        seeds = self._seeds()
        grid = RWSReport(np.repeat(seeds, self.d), np.tile(np.arange(self.d, dtype=np.int32), seeds.size))
        with jax.ensure_compile_time_eval():
            return np.asarray(self.support(RWSReport(jnp.asarray(grid.seed), jnp.asarray(grid.shift))))

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        t = np.exp(-eps)
        den = self.k + (self.d - self.k) * t  # (k e + d - k) / e
        Q = np.where(self._column_support().T, 1.0 / den, t / den) / self.num_seeds
        return Q, np.ones(Q.shape[1], dtype=bool)

    def _columns(self, ys: RWSReport) -> np.ndarray:
        return np.asarray(ys.seed).astype(np.int64) * self.d + np.asarray(ys.shift).astype(np.int64)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    _closed_form = _family.Family(
        "RWS", "k", lambda e, s, th, k: _nmse.ss_nmse(e, s, k), _family.uss_probs, ldp=True, integer=True,
        domain=lambda s: (1, s - 1), optimum=lambda e, s, th: _optima.optimal_k(e, s, 0.0), rebuild=_tuned_k)
