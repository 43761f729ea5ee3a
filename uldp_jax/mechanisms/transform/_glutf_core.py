"""GLUTF machinery shared by ``GLUTF`` and the named ULDP mechanisms: reports, sampling, aggregation, exact channels."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.mechanisms.core import _base, _compact, _likelihood, _family, _pure_uldp as _th, _records
from uldp_jax.mechanisms.core import _report_space, _reports, _spec
from uldp_jax.mechanisms.transform import _glutf_counts, _nonpure_uldp as _np_th
from uldp_jax.mechanisms.transform._glutf_channel import GLUTFChannel

# Any pure base: 003 eq 28 from the instance's own (p*, q*, z*).
GENERIC_FAMILY = _family.Family("GLUTF", None, None, None, ldp=False, generic=True)

RULES = ("pure", "non_pure")
Z_RULES = ("max", "zero", "published_unsafe")


class GLUTFReport(NamedTuple):
    """A GLUTF report (003 eqs 8, 11-12).

    Attributes:
      base: the base mechanism's report (a pytree with leading shape ``[...]``); meaningful only where
        ``has_base`` (elsewhere it holds an unused draw).
      has_base: ``bool[...]``: the report contains a base output ``y_1``.
      item: ``int32[...]``: the disclosed non-sensitive item ``x`` (``-1`` when none). ``has_base & item < 0``
        is a protected output ``y_1`` (``Y_P``); ``~has_base`` is ``x`` alone; ``has_base & item >= 0`` is the
        pair ``<y_1, x>`` (both invertible, ``Y_I``).
    """

    base: Any
    has_base: jax.Array
    item: jax.Array


def raw(cls: type, **fields: Any) -> Any:
    """Builds a mechanism without ``__post_init__`` (for bases rebuilt from leaves, possibly tracers)."""
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj


class GLUTFMixin(GLUTFChannel):
    """ULDP behaviour shared by ``GLUTF`` and the named mechanisms (``USS``, ``UUE``, ``ULH``, ``UWheel``).

    Subclasses provide ``base`` (a pure LDP mechanism over ``[0, s)``; sensitive item ``sensitive[r]`` is base
    item ``r``), ``d``, ``sensitive``, ``rule`` and ``z_rule``.
    """

    report_kind = "glutf"

    # ---- sizes and parameters
    @property
    def s(self) -> int:
        return len(self.sensitive)

    @property
    def num_outputs(self) -> int:
        m_b, dn = self.base.num_outputs, self.d - self.s
        return m_b * (1 + dn) + dn

    def _masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sensitive bool[d], rank among sensitive int32[d] (-1 elsewhere), rank among non-sensitive)."""
        sens = _spec.sensitive_mask(self.d, self.sensitive)
        rank_s = np.where(sens, np.cumsum(sens) - 1, -1).astype(np.int32)
        rank_n = np.where(~sens, np.cumsum(~sens) - 1, -1).astype(np.int32)
        return sens, rank_s, rank_n

    def f(self) -> jax.Array:
        """GLUTF's f: 003 eq 9 (``rule="pure"``) or eq 10 (``rule="non_pure"``)."""
        if self.rule == "pure":
            base = self.base.pure()
            return _th.glutf_f(base.p, base.q, self.s)
        return _th.glutf_f_nonpure(self.base.eps, self.s)

    def _share(self) -> Any:
        """The base's share: its closed form (``Pure.share``), else the value GLUTF read off its channel at
        construction (``_glutf_base``; never a channel under tracing)."""
        base = self.base.pure()
        share = None if base is None else base.share
        if share is None:
            share = getattr(self, "share", None)
        if share is None:
            raise ValueError(f"{type(self).__name__} over {type(self.base).__name__}: the base has no closed-form "
                             "share (Pure.share) and none was read off its channel; build it with ul.glutf.")
        return share

    def z(self) -> jax.Array:
        """The probability of disclosing ``x`` with the base output (Algorithm 1 line 6)."""
        if self.z_rule == "zero":
            return jnp.zeros_like(jnp.asarray(self.f()))
        if self.z_rule == "published_unsafe":
            return self._published_z()
        closed = self._closed_z() if self.rule == "pure" else None
        if closed is not None:
            return closed
        return jnp.maximum(_th.glutf_z_max(self.base.eps, self.s, self.f(), self._share()), 0.0)

    def _closed_z(self) -> Any:
        """The base's closed form of the largest valid z (exact zeros stay exact), or ``None``."""
        base = self.base.pure()
        return None if base is None or base.z_max is None else base.z_max(self.s)

    def _published_z(self) -> jax.Array:
        base = self.base.pure()
        z = None if base is None else base.z_published
        if z is None:
            raise ValueError(f"z_rule='published_unsafe' exists only for OLH/Wheel bases (uLH, uWheel), "
                             f"got {type(self.base).__name__}.")
        return z

    def f_protected(self) -> jax.Array:
        r"""``f (1 - z)``: probability that a non-sensitive input gives a protected output, without cancellation.

        For the largest valid z it is :math:`e^{-\varepsilon} s \max_{i,m} p_{im}/\sum_t p_{tm}` (capped at f),
        which stays accurate when ``z`` rounds to 1 (large eps).
        """
        f = self.f()
        if self.z_rule == "zero":
            return f
        if self.z_rule == "published_unsafe":
            return f * (1.0 - self.z())
        z = self.z()
        t = jnp.exp(-jnp.asarray(self.base.eps))
        # Both forms are exact in real arithmetic; take the one without cancellation (z = 0 stays exactly f).
        return jnp.where(z < 0.5, f * (1.0 - z), jnp.minimum(self.s * t * self._share(), f))

    def z_star(self) -> jax.Array:
        """003 Theorem 5: ``z* = 1 - f + f z`` (computed as ``1 - f (1 - z)``)."""
        return 1.0 - self.f_protected()

    # ---- sampling
    def perturb_batch(self, key: jax.Array, xs: jax.Array) -> GLUTFReport:
        """Randomizes ``xs: int32[...]`` by Algorithm 1; returns a ``GLUTFReport`` with leading shape ``xs.shape``."""
        return self._perturb(key, xs, self.base.perturb_batch)

    def compact(self) -> Any:
        """With a compact base (uUE): ``perturb_batch`` with the base part drawn by the base's compact sampler
        (``CompactBits``; same law, no ``n x s`` bits), preferred as the base's. Every consumer (``aggregate``,
        emp, EM, ``check_reports``) takes either form. ``None`` for a base without compact reports."""
        base = self.base.compact()
        if base is None:
            return None

        def perturb(key: jax.Array, xs: jax.Array, num_chunks: int | None = None) -> GLUTFReport:
            return self._perturb(key, xs, lambda k, b: base.perturb(k, b, num_chunks))

        return _records.Compact(perturb, base.preferred)

    def _check_reports(self, ys: Any) -> None:
        if isinstance(ys, GLUTFReport) and isinstance(ys.base, _compact.CompactBits):
            _reports.check_reports(self.base, ys.base)
            n = len(ys.base)
            for name, leaf, kind in (("has_base", ys.has_base, "b"), ("item", ys.item, "iu")):
                if jnp.shape(leaf) != (n,) or jnp.dtype(leaf.dtype).kind not in kind:
                    raise TypeError(f"Expected ys.{name} of shape ({n},) matching ys.base, got "
                                    f"{getattr(leaf, 'dtype', type(leaf).__name__)}{list(jnp.shape(leaf))}.")
            return
        _reports.default_check(self, ys)

    def _perturb(self, key: jax.Array, xs: jax.Array, base_sampler: Any) -> GLUTFReport:
        sens_np, rank_np, _ = self._masks()
        sens = jnp.asarray(sens_np)[xs]
        k_go, k_x, k_base, k_z = jax.random.split(key, 4)
        xprime = jax.random.randint(k_x, xs.shape, 0, self.s, dtype=jnp.int32)
        b_in = jnp.where(sens, jnp.asarray(rank_np)[xs], xprime).astype(jnp.int32)
        yb = base_sampler(k_base, b_in)
        go = jax.random.uniform(k_go, xs.shape, dtype=jnp.float32) < self.f()
        pair = jax.random.uniform(k_z, xs.shape, dtype=jnp.float32) * self.f() >= self.f_protected()
        has_base = sens | go
        disclose = ~sens & (~go | pair)
        return GLUTFReport(yb, has_base, jnp.where(disclose, xs, -1).astype(jnp.int32))

    def counts(self) -> _records.Counts | None:
        """Exact whenever the base has a count sampler: per-item alone/pair/protected-only cells + the base's own
        sampler (``_glutf_counts``). A base with only an iid sampler (uSS: two iid populations of SS's item scan)
        gives only ``iid``, costing at most twice the base's draws (and memory) plus the true counts and the
        per-item cells."""
        base = _records.counts_of(self.base)
        if base is None:
            return None
        iid = lambda key, n, p: _glutf_counts.glutf_iid(key, self, n, p)
        if base.fixed is not None:
            return _records.counts_record(self, lambda key, counts: _glutf_counts.glutf_counts(key, self, counts), iid)
        draws = float(self.d + 3 * (self.d - self.s) + 2 * base.draws(True))
        memory = base.memory(True)
        memory = None if memory is None else 2.0 * float(memory) + 32.0 * self.d
        return _records.counts_record(self, iid=iid, draws=lambda iid_model: draws, memory=lambda iid_model: memory)

    def revealed_inputs(self, ys: GLUTFReport) -> jax.Array:
        """``-1`` for a protected output ``y_1`` (a base output, no item), else the disclosed non-sensitive item:
        ``x`` alone and the pair ``<y_1, x>`` are both invertible (003 eqs 11-12)."""
        return jnp.where(ys.has_base & (ys.item < 0), -1, ys.item).astype(jnp.int32)

    # ---- aggregation
    def aggregate(self, ys: GLUTFReport, weights: jax.Array | None = None) -> jax.Array:
        """Per-item support counts ``int32[d]`` (003 eqs 22, 29) for ``rule="pure"``.

        For ``rule="non_pure"`` the statistic of 003 eq 30 (``int32[d + 1]``): base support counts of the
        protected-only reports ``Y'`` at the sensitive items, counts of ``x`` alone at the non-sensitive items,
        and ``|Y'|`` last.
        """
        if self.rule != "pure":
            return self.eq30_stats(ys, weights)
        w = jnp.ones(ys.item.shape, bool) if weights is None else weights.astype(bool)
        has_item = ys.item >= 0
        return self._counts(ys, ys.has_base & w, has_item & w)

    def likelihood(self) -> _records.Likelihood:
        """em-pure: the exact per-report likelihood of GLUTF reports (protected factors, weights, invertible
        counts; ``core._likelihood.glutf_terms``); the channel's columns in 003 eq 29's order and the channel in log
        space (``GLUTFChannel``)."""
        return _records.Likelihood(report=lambda ys: _likelihood.glutf_terms(self, ys), index=self._columns,
                                   support=self._column_support, log_channel=self._log_channel)

    def _counts(self, ys: GLUTFReport, wb: jax.Array, wn: jax.Array) -> jax.Array:
        counts_s = self.base.aggregate(ys.base, wb)
        counts = jnp.zeros(self.d, jnp.int32).at[jnp.where(ys.item >= 0, ys.item, 0)].add(wn.astype(jnp.int32))
        return counts.at[jnp.asarray(self.sensitive, jnp.int32)].set(counts_s.astype(jnp.int32))

    def eq30_stats(self, ys: GLUTFReport, weights: jax.Array | None = None) -> jax.Array:
        """The statistic of 003 eq 30 (``int32[d + 1]``, any ``rule``); see ``theory.nonpure_estimate``."""
        w = jnp.ones(ys.item.shape, bool) if weights is None else weights.astype(bool)
        protected_only = ys.has_base & (ys.item < 0) & w
        counts = self._counts(ys, protected_only, ~ys.has_base & w)
        return jnp.append(counts, jnp.sum(protected_only, dtype=jnp.int32))

    def estimate_eq30(self, stats: jax.Array, n: Any) -> jax.Array:
        """003 eq 30 (unbiased for either rule) from ``eq30_stats`` (``aggregate`` when ``rule="non_pure"``)."""
        base = self.base.pure()  # a pure base (rule="non_pure" accepts a base with an affine estimator() too)
        p, q = (None, None) if base is None else (base.p, base.q)
        sens = jnp.asarray(_spec.sensitive_mask(self.d, self.sensitive))
        f = self.f()
        return _np_th.nonpure_estimate(stats, n, p, q, f, 1.0 - self.f_protected() / f, sens)

    def estimator(self) -> _records.Estimator:
        """The unbiased linear estimate ("emp"): 003 eq 21 (``rule="pure"``) as ``(stats/n - b)/a`` with ``a = p* -
        q*``, ``b = q*`` on ``X_S`` and ``a = z*``, ``b = 0`` on ``X_N``.

        For ``rule="non_pure"``, no affine form: ``debias`` is 003 eq 30 (``estimate_eq30``), its variance read off
        the channel.
        """
        if self.rule != "pure":
            return _records.Estimator(debias=self.estimate_eq30)
        base = self.base.estimator()
        a_b, b_b = base.affine
        zs = self.z_star()
        idx = jnp.asarray(self.sensitive, jnp.int32)
        a = jnp.full((self.d,), zs, dtype=a_b.dtype).at[idx].set(a_b)
        b = jnp.zeros((self.d,), dtype=a_b.dtype).at[idx].set(b_b)
        debias = lambda stats, n: (jnp.asarray(stats, a.dtype) / jnp.asarray(n, a.dtype) - b) / a  # noqa: E731
        return _records.Estimator(affine=(a, b), debias=debias, exact=base.exact)  # the base's model, exact or not

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.uldp_spec(self.d, self.sensitive, _spec.eps_value(self.base.eps))

    def closed_form(self) -> _family.Family:
        """The class's closed form when ``z_rule="max"``; otherwise 003 eq 28 from this instance's (p*, q*, z*).

        Raises:
          TypeError: for ``rule="non_pure"`` (003 eqs 30-31 have no exact closed form here).
        """
        if self.rule != "pure":
            raise TypeError(f"Expected a pure GLUTF mechanism (rule='pure'), got rule={self.rule!r}: 003 eqs 30-31 "
                            "are approximate and have no exact closed form here.")
        named = _family.of_class(type(self))
        if named is not None and self.z_rule == "max":
            return named
        return GENERIC_FAMILY

    def pure(self) -> Any:
        """003 Theorem 5 for ``rule="pure"``: the base's ``(p*, q*)`` and ``z*``; ``None`` for ``rule="non_pure"``."""
        if self.rule != "pure":
            return None
        base = self.base.pure()
        return _records.Pure(base.p, base.q, self.z_star())

    def reports(self) -> _records.Reports:
        r"""The statistic (``d``; ``d + 1`` for ``rule="non_pure"``, 003 eq 30), the report check (a compact base
        part too) and 003 Def 5's bits: :math:`\log_2 |Y|`, :math:`|Y| = |Y_P|(1 + |X_N|) + |X_N|` (003 §5.4)."""
        cb, dn = float(_report_space.comm_bits(self.base)), self.d - self.s
        return _records.Reports(stats=self.d if self.rule == "pure" else self.d + 1, check=self._check_reports,
                                bits=cb + float(np.log2((1 + dn) + dn * 2.0 ** (-cb))))
