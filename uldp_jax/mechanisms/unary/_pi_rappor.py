r"""PI-RAPPOR (Feldman, Talwar 2021): asymmetric RAPPOR's per-item marginals from a pairwise-independent family of
bits, sent as ``(t + 1) log2 q`` bits; minilek/private_frequency_oracles' ``pi_rappor.cc``."""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _counts, _family, _fields, _likelihood, _pytree, _records
from uldp_jax.mechanisms.core import _report_space, _reports, _spec

MAX_REPORTS = 2**31 - 1  # q^(t+1) report values, int32
MAX_Q = 46337  # the largest prime with q^2 < 2^31
CHUNK_ENTRIES = 2**22  # (coefficient vector, item) dot products held at once by aggregate


def is_prime(q: int) -> bool:
    return q >= 2 and all(q % f for f in range(2, math.isqrt(q) + 1))


def default_q(d: int, eps: float) -> int:
    r"""minilek's choice, the largest prime :math:`\le e^\varepsilon + 1` (at least 2); once that passes ``d``
    the smallest prime ``> d`` (``t = 1``: a larger eps pads no further), and never more than int32 reports
    allow."""
    cap = d + 1
    while not is_prime(cap):
        cap += 1
    q = max(2, min(math.floor(math.exp(min(eps, 30.0)) + 1.0), cap, MAX_Q))
    while not is_prime(q) or q ** (dimension(d, q) + 1) > MAX_REPORTS:
        q -= 1
    return q


def dimension(d: int, q: int) -> int:
    """``t``: the fewest base-``q`` digits with ``q^t > d`` (items ``x`` are the non-zero vectors ``x + 1``)."""
    t = 1
    while q**t <= d:
        t += 1
    return t


def _check_q(q: Any) -> int:
    q = _validate.check_int("q", q, minimum=2, maximum=MAX_Q)
    if not is_prime(q):
        raise ValueError(f"Expected q={q} to be a prime (field arithmetic mod q).")
    return q


def pi_rappor_probs(eps: Any, q: int) -> tuple[Any, Any]:
    r"""``(p*, q*)``: an item's own bit is 1 w.p. :math:`e^\varepsilon/(e^\varepsilon + q - 1)`, every other
    item's w.p. ``1/q`` (pairwise independence)."""
    _check_q(q)
    t = jnp.exp(-jnp.asarray(eps))
    return 1.0 / (1.0 + (q - 1.0) * t), jnp.full_like(t, 1.0 / q)


def pi_rappor_item_nvar(eps: Any, p: Any, q: int) -> Any:
    r"""Per-item :math:`n\mathrm{Var}(\hat p_x) = f(1 - f)/(p^* - q^*)^2`, :math:`f = q^* + (p^* - q^*) p_x`
    (iid model: the bit of ``x`` is Bernoulli(``f``) for every user); ``p: float[d]``."""
    P, Q = pi_rappor_probs(eps, q)
    f = Q + (P - Q) * jnp.asarray(p)
    return f * (1.0 - f) / (P - Q) ** 2


def _digits(v: Any, q: int, t: int) -> jax.Array:
    """int32 ``[..., t]``: the base-``q`` digits of ``v`` (little-endian)."""
    v = jnp.asarray(v, jnp.int32)[..., None]
    return (v // jnp.asarray(q ** np.arange(t), jnp.int32)) % q


class PIRAPPOR(_base.Mechanism):
    r"""PI-RAPPOR over ``d`` items (Feldman, Talwar 2021): RAPPOR's bits made pairwise independent by a linear
    hash over :math:`\mathbb F_q`.

    Item ``x`` is the non-zero vector :math:`v_x \in \mathbb F_q^t` of the digits of ``x + 1`` (``q`` prime,
    ``t`` the fewest digits with :math:`q^t > d`). A report is a uniform :math:`a \in \mathbb F_q^t` and
    :math:`c = z - \langle a, v_x\rangle`, with :math:`z = q - 1` w.p. :math:`p^* = e^\varepsilon/(e^\varepsilon
    + q - 1)`, else uniform on :math:`[0, q - 1)`. It supports the items with :math:`\langle a, v\rangle + c =
    q - 1`: the own item w.p. :math:`p^*`, any other w.p. ``1/q`` (for :math:`v \ne v_x`,
    :math:`\langle a, v - v_x\rangle` is uniform and independent of ``z``), so the support counts give the pure
    affine estimate and its per-item variance is exact (``pi_rappor_item_nvar``). Reports are ``y = A q + c``
    in ``[0, q^(t+1))``, ``A`` the number with digits ``a`` (minilek's numbering).

    At :math:`q = e^\varepsilon + 1` (a prime) :math:`p^* = 1/2` and ``1/q`` are OUE's probabilities: the paper's
    PI-RAPPOR, OUE's variance with :math:`\approx \log_2 d + \varepsilon\log_2 e` bits. For other eps minilek
    keeps the own bit at 1/2 with ``q`` the largest prime :math:`\le e^\varepsilon + 1` (the paper's
    construction, stated for :math:`q \approx e^\varepsilon + 1`), which is only :math:`\ln(q - 1)`-LDP;
    this class spends the whole budget (:math:`p^*` above), a lower variance for the same eps (and a working
    mechanism for eps < ln 2, where minilek's ``q = 2`` carries no information).

    Privacy: ``eps``-LDP, tight (:math:`P(y|x) \propto p^*` or :math:`(1 - p^*)/(q - 1)`, ratio
    :math:`e^\varepsilon`). Pure: ``p* = pi_rappor_probs[0]``, ``q* = 1/q``, a GLUTF base. Communication:
    ``(t + 1) log2 q`` bits, ``a`` sent in the clear (private coin); with ``a`` drawn from a seed the server
    shares (public coin) the user sends ``c`` alone, ``log2 q`` bits.

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      q: the field size, a prime (static); ``None``: ``default_q`` (needs a concrete eps).

    References:
      Feldman, Talwar, "Lossless compression of efficient private local randomizers", ICML 2021;
      minilek/private_frequency_oracles ``oracles/pi_rappor.cc``.
    """

    d: int = _pytree.static_field()
    eps: Any
    q: Any = _pytree.static_field(default=None)

    report_kind = "linear"  # (a, c) as one int; the statistic is support counts

    def __post_init__(self):
        d = _fields.check_domain(self)
        q = default_q(d, _fields.concrete_eps(self.eps, "q")) if self.q is None else self.q
        q = _check_q(q)
        t = dimension(d, q)
        if q ** (t + 1) > MAX_REPORTS:
            raise ValueError(f"Expected q^(t+1) <= 2^31 - 1 (int32 reports), got q={q}, t={t} (d={d}).")
        _fields.set_fields(self, q=q)

    @property
    def t(self) -> int:
        return dimension(self.d, self.q)

    @property
    def num_outputs(self) -> int:
        return self.q ** (self.t + 1)

    def _pq(self) -> tuple[jax.Array, jax.Array]:
        return pi_rappor_probs(self.eps, self.q)

    def _items(self) -> jax.Array:
        """int32 ``[t, d]``: the digits of ``x + 1`` for every item."""
        return _digits(jnp.arange(1, self.d + 1), self.q, self.t).T

    # ---- sampling --------------------------------------------------------------------------------------------
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> jax.Array:
        """``int32[...]`` reports ``A q + c``: ``a`` uniform, ``c = z - <a, v_x>`` mod ``q``."""
        xs = jnp.asarray(xs, jnp.int32)
        q, t = self.q, self.t
        k_a, k_keep, k_z = jax.random.split(key, 3)
        a = jax.random.randint(k_a, xs.shape + (t,), 0, q, dtype=jnp.int32)
        dot = jnp.sum(a * _digits(xs + 1, q, t), axis=-1) % q
        keep = jax.random.uniform(k_keep, xs.shape, dtype=jnp.float32) < self._pq()[0]
        z = jnp.where(keep, q - 1, jax.random.randint(k_z, xs.shape, 0, max(q - 1, 1), dtype=jnp.int32))
        A = jnp.sum(a * jnp.asarray(q ** np.arange(t), jnp.int32), axis=-1)
        return (A * q + (z - dot) % q).astype(jnp.int32)

    # ---- statistics and estimation ---------------------------------------------------------------------------
    def support(self, ys: jax.Array) -> jax.Array:
        """``bool[..., d]``: the items with ``<a, v> + c = q - 1`` (O(n d t); ``aggregate`` goes through the
        report histogram instead)."""
        ys = jnp.asarray(ys, jnp.int32)
        a = _digits(ys // self.q, self.q, self.t)
        return (a @ self._items() + (ys % self.q)[..., None]) % self.q == self.q - 1

    def aggregate(self, ys: jax.Array, weights: jax.Array | None = None) -> jax.Array:
        """``int32[d]`` support counts from the report histogram ``h[A, c]`` (``support_counts``), ``O(n)`` plus
        the histogram's cost, independent of ``n``."""
        hist = _reports.bincount(ys, self.num_outputs, weights)
        return self.support_counts(hist)

    def support_counts(self, hist: jax.Array) -> jax.Array:
        """Support counts ``[d]`` (``hist``'s dtype) of a report histogram ``[q^(t+1)]`` (also the exact count
        path's): minilek's digit-by-digit dynamic program, ``O(t q^(t+2))``, where that is cheaper than reading
        every item's ``q^t`` cells, ``O(q^t d)`` (``d > t q^2``: small ``q``, large domains)."""
        if self.t * self.q**2 < self.d:
            return self._digit_program(hist)
        return self._direct_counts(hist)

    def _direct_counts(self, hist: jax.Array) -> jax.Array:
        """:math:`C_x = \\sum_A h[A, (q - 1 - \\langle a, v_x\\rangle) \\bmod q]`, coefficient vectors in chunks."""
        q, t, V = self.q, self.t, self._items()
        rows = q**t
        chunk = max(1, min(rows, CHUNK_ENTRIES // self.d))
        steps = -(-rows // chunk)
        h = jnp.zeros((steps * chunk, q), hist.dtype).at[:rows].set(hist.reshape(rows, q))

        def step(acc, i):
            A = i * chunk + jnp.arange(chunk, dtype=jnp.int32)
            want = (q - 1 - _digits(A, q, t) @ V) % q  # [chunk, d]: the c each item needs
            block = jax.lax.dynamic_slice_in_dim(h, i * chunk, chunk)  # [chunk, q]
            return acc + jnp.sum(jnp.take_along_axis(block, want, axis=1), axis=0, dtype=hist.dtype), None

        acc, _ = jax.lax.scan(step, jnp.zeros(self.d, hist.dtype), jnp.arange(steps, dtype=jnp.int32))
        return acc

    def _digit_program(self, hist: jax.Array) -> jax.Array:
        """``dp_bottom_up`` (minilek) as ``t`` tensor steps: axis ``k`` of ``h[a_{t-1}, ..., a_0, c]`` becomes the
        item digit ``v`` by :math:`F[\\ldots, v, z] = \\sum_a F[\\ldots, a, (z - a v) \\bmod q]`; then
        :math:`C_x = F[v_x, q - 1]` (the ``t`` item axes read as the number ``x + 1``)."""
        q, t = self.q, self.t
        ar = np.arange(q)
        idx = jnp.asarray((ar[None, None, :] - ar[:, None, None] * ar[None, :, None]) % q)  # [a, v, z]
        F = hist.reshape((q,) * (t + 1))
        for k in range(t):  # static: one tensor step per digit
            X = jnp.moveaxis(F, k, -2)  # [..., a, z]

            def add(acc, a, X=X):
                return acc + jnp.take(jax.lax.dynamic_index_in_dim(X, a, -2, keepdims=False), idx[a], axis=-1), None

            F, _ = jax.lax.scan(add, jnp.zeros(X.shape[:-2] + (q, q), hist.dtype), jnp.arange(q))
            F = jnp.moveaxis(F, -2, k)
        return F.reshape(q**t, q)[1 : self.d + 1, q - 1]

    def reports(self) -> _report_space.Reports:
        """Support counts (``d``); ``(t + 1) log2 q`` bits (private coin; ``log2 q`` with a public ``a``)."""
        return _report_space.Reports(stats=self.d, check=self._check, bits=math.log2(self.num_outputs))

    def _check(self, ys: Any) -> None:
        arr = np.asarray(ys)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"Expected ys to be integer reports (ul.perturb of PIRAPPOR), got dtype {arr.dtype}.")
        if arr.ndim != 1:
            raise ValueError(f"Expected ys to have rank 1, got shape {arr.shape}.")
        if arr.size and (arr.min() < 0 or arr.max() >= self.num_outputs):
            raise ValueError(f"Expected ys in [0, {self.num_outputs}), got values in [{arr.min()}, {arr.max()}].")

    def estimator(self) -> _records.Estimator:
        p, q = self._pq()
        return _records.Estimator(affine=(jnp.full((self.d,), p - q), jnp.full((self.d,), q)))

    def counts(self) -> _records.Counts:
        """iid model, exact: the report histogram is one ``Multinomial(n, p Q)`` (``p Q`` by the chunked dot
        products), then its support counts; ``q^(t+1)`` cells."""
        return _records.counts_record(
            self, iid=lambda key, n, p: self.support_counts(_counts.multinomial(key, n, self.channel_matvec(p))),
            draws=lambda iid: float(self.d + 2 * self.num_outputs))

    def channel_matvec(self, p: jax.Array) -> jax.Array:
        """``p Q`` (``float[..., q^(t+1)]``) of ``p: float[..., d]``: cell ``(A, c)`` gets ``q^-t ((1 - p*)/(q - 1)
        sum p + (p* - (1 - p*)/(q - 1)) sum_x p_x 1[<a, v_x> + c = q - 1])``; the inner sums are the transpose of
        ``support_counts`` (linear in the histogram) applied to ``p``."""
        p = jnp.asarray(p)
        if p.ndim > 1:
            return jax.vmap(self.channel_matvec)(p.reshape(-1, p.shape[-1])).reshape(p.shape[:-1] + (-1,))
        zero = jnp.zeros(self.num_outputs, p.dtype)
        (mass,) = jax.linear_transpose(self.support_counts, zero)(p)
        P = self._pq()[0].astype(p.dtype)
        low = P * jnp.exp(-jnp.asarray(self.eps, p.dtype))  # (1 - P)/(q - 1)
        return (low * jnp.sum(p) + (P - low) * mass) / self.q**self.t

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the support-ratio likelihood ``t + (1 - t) 1[x in S(y)]``, ``t = e^{-eps}``."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys),
                                   index=lambda ys: np.asarray(ys).astype(np.int64), support=self._column_support)

    def pure(self) -> _records.Pure:
        """Pure LDP: ``p* = e/(e + q - 1)``, ``q* = 1/q``; GLUTF reads the share off the channel (a report's
        support size varies with ``a``)."""
        return _records.Pure(*self._pq())

    # ---- exact channel ---------------------------------------------------------------------------------------
    def _column_support(self) -> np.ndarray:
        """bool ``[q^(t+1), d]``: the items each report supports."""
        _reports.check_channel_size("PIRAPPOR", self.d, self.num_outputs)
        return np.asarray(self.support(jnp.arange(self.num_outputs, dtype=jnp.int32)))

    def channel_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        eps = _spec.eps_value(self.eps)
        q, t = self.q, self.t
        P = 1.0 / (1.0 + (q - 1.0) * np.exp(-eps))
        low = P * np.exp(-eps)  # (1 - P)/(q - 1), without cancelling at large eps
        Q = np.where(self._column_support().T, P, low) / float(q) ** t
        return Q, np.ones(self.num_outputs, bool)

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    _closed_form = _family.Family("PIRAPPOR", None, None, None, ldp=True,
                                  item_nvar=lambda m, p: pi_rappor_item_nvar(m.eps, p, m.q))
