r"""What Apple's count mean sketches (CMS, HCMS) share: the public hashes, the support statistic, Apple's estimator.

Public-coin model: ``k`` hash functions :math:`h_1..h_k: [d] \to [m]`, fixed at construction as a deterministic
function of the stored int ``seed`` (:math:`h_i(x) = \mathrm{mix32}(\mathrm{mix32}(seed, i), x) \bmod m`, the
``uint32`` hash of ``core._hashing``, bit for bit the same under NumPy and JAX), are known to every user and to the
server; each user draws its row :math:`j` uniformly from ``[k]`` with private coins and sends ``j``. For fixed
hashes the channel :math:`Q(y \mid x)` is therefore exact and finite, which is what ``ul.audit`` certifies.

A report supports item ``x`` when its bit at ``x``'s hashed cell is ``+1`` (CMS: ``v[h_j(x)] = +1``; HCMS:
``b H[l, h_j(x)] = +1``). Given the hashes, a user holding ``x'`` supports ``x`` w.p. ``apart + (collide - apart)
C(x, x')``, with ``C(x, x') = #{i: h_i(x) = h_i(x')} / k`` (``C(x, x) = 1``): the rates depend on the collisions,
so neither sketch is pure (003 Def 6) for fixed hashes. Apple's estimator is the affine inverse of the statistic
under the model :math:`E[C(x, x')] = 1/m` (uniformly random hash functions):

.. math:: \hat f(x) = \frac{m}{m-1}\Big(\frac1k \sum_{i} M[i, h_i(x)] - \frac{n}{m}\Big), \qquad
          \frac{E[T_x]}{n} = a\,p_x + b,\quad a = g\frac{m-1}{m},\quad b = \mathrm{apart} + \frac{g}{m},

``g = collide - apart``, ``T_x`` the support count. It is unbiased over a random draw of the hashes, and biased
given them (``estimator().exact`` is False); ``ul.theory`` gives the risk of the instance (given its hashes, bias
included) and, as ``cms_item_mse``/``hcms_item_mse``, the risk averaged over the hash draw (Apple's model).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _base, _family, _fields, _hashing, _likelihood, _pytree, _records, _spec
from uldp_jax.mechanisms.hashing import _sketch_forms as _forms


def hash_cells(seed: int, m: int, rows: Any, items: Any) -> Any:
    """``h_rows(items) = mix32(mix32(seed, row), item) mod m`` as int32 (broadcasting; NumPy rows: NumPy, else JAX)."""
    xp = np if isinstance(rows, np.ndarray) else jnp
    s = _hashing.mix32(xp.asarray(np.uint32(seed)), xp.asarray(rows).astype(xp.uint32))
    return (_hashing.mix32(s, items) % xp.uint32(m)).astype(xp.int32)


class CountMeanSketch(_base.Mechanism, abstract=True):
    """Shared fields and estimation of CMS and HCMS (subclasses give the sampler, the statistic and the channel).

    Attributes:
      d: domain size (static, >= 2).
      eps: privacy budget (leaf).
      k: number of hash functions (static int in ``[1, 2**16]``).
      m: cells per hash function (static int in ``[2, 2**24]``; a power of two for HCMS).
      seed: the public seed the ``k`` hash functions are derived from (static int in ``[0, 2**32)``).
    """

    d: int = _pytree.static_field()
    eps: Any
    k: int = _pytree.static_field(default=16)
    m: int = _pytree.static_field(default=1024)
    seed: int = _pytree.static_field(default=0)

    def __post_init__(self):
        _fields.check_domain(self)
        # k <= 2**16 rows (the statistic gathers k cells per item); m <= 2**24 cells (float32-exact counts per row)
        _fields.set_fields(self, k=_validate.check_int("k", self.k, minimum=1, maximum=2**16),
                           m=_validate.check_int("m", self.m, minimum=2, maximum=2**24),
                           seed=_validate.check_int("seed", self.seed, minimum=0, maximum=2**32 - 1))

    # ---- the public hashes ----------------------------------------------------------------------------------
    def hashes(self) -> np.ndarray:
        """``int32[k, d]``: ``h_i(x)`` for every row and item (NumPy; the same values the samplers compute)."""
        return hash_cells(self.seed, self.m, np.arange(self.k, dtype=np.uint32)[:, None], np.arange(self.d))

    def _cells(self, rows: jax.Array, items: jax.Array) -> jax.Array:
        """``h_rows(items)`` (JAX, int32; computed on the fly, no ``k x d`` table in the program)."""
        return hash_cells(self.seed, self.m, jnp.asarray(rows), jnp.asarray(items))

    def _table(self) -> jax.Array:
        """``int32[k, d]`` under JAX (the statistic's gather)."""
        return self._cells(jnp.arange(self.k, dtype=jnp.int32)[:, None], jnp.arange(self.d, dtype=jnp.int32))

    # ---- rates and Apple's estimator --------------------------------------------------------------------------
    def rates(self) -> tuple[jax.Array, jax.Array]:
        """``(collide, apart)``: P(a report supports ``x`` | the user's item shares ``x``'s cell in its row, or
        not)."""
        raise NotImplementedError

    def _affine(self) -> tuple[jax.Array, jax.Array]:
        collide, apart = self.rates()
        return _forms.apple_affine(collide, apart, self.m)

    def estimator(self) -> _records.Estimator:
        """Apple's estimator: the affine inverse under random hashes (``a = g (m-1)/m``, ``b = apart + g/m``),
        equal to pure-LDP's ``CMSServer.estimate / n``; ``exact=False`` (biased given the hashes). ``variance``:
        its iid variance given this instance's hashes (``_sketch_forms.given_item_variance``), what ``emp+thr``
        thresholds with."""
        a, b = self._affine()
        collide, apart = self.rates()
        return _records.Estimator(
            affine=(jnp.full((self.d,), a), jnp.full((self.d,), b)), exact=False,
            variance=lambda p, n: _forms.given_item_variance(collide, apart, self._table(), self.m, p, n, "iid"))

    def support(self, ys: Any) -> jax.Array:
        raise NotImplementedError

    def likelihood(self) -> _records.Likelihood:
        """EM on the reports: for fixed hashes :math:`Q(y|x) = C(y)\\,e^{\\varepsilon 1[x \\in S(y)]}` exactly
        (CMS: the ``m`` bits flip independently at ``eps/2``, and only the bit at ``h_j(x)`` depends on ``x``; HCMS:
        binary RR of one sign), the support-ratio form ``t + (1 - t) 1[x in S(y)]`` with ``t = e^{-eps}``."""
        return _records.Likelihood(report=lambda ys: _likelihood.pure_terms(self, ys), index=self._columns,
                                   support=self._column_support)

    def pure(self) -> None:
        """Not pure (003 Def 6), so not a GLUTF base for ``rule="pure"``: given the hashes a report supports another
        item ``x'`` w.p. ``apart + g C(x, x')``, which depends on how often ``x`` and ``x'`` collide, not a common
        ``q*`` (equal only for collision-free hashes). ``ul.glutf(..., rule="non_pure")`` (003 eq 10) takes it."""
        return None

    def privacy_spec(self) -> _spec.PrivacySpec:
        return _spec.ldp_spec(self.d, _spec.eps_value(self.eps))

    def closed_form(self) -> _family.Family:
        """The risk of this instance given its hashes (bias from collisions included): ``item_risk``."""
        return _family.Family(type(self).__name__, None, None, None, ldp=True, item_risk=_instance_risk)

    def _columns(self, ys: Any) -> np.ndarray:
        raise NotImplementedError

    def _column_support(self) -> np.ndarray:
        raise NotImplementedError


def _instance_risk(mech: CountMeanSketch, p: Any, n: Any, model: str) -> jax.Array:
    collide, apart = mech.rates()
    return _forms.given_item_mse(collide, apart, mech._table(), mech.m, p, n, model)
