r"""Exact-likelihood EM for pure LDP bases (SS, OLH, Wheel, GRR, UE) and their GLUTF mechanisms.

Every pure base here has a report likelihood of "support-ratio" form: for a report ``y`` with support
``S(y)``, :math:`P(y|x) = C(y)\,(t + (1-t)\,1[x \in S(y)])` with :math:`t = e^{-\varepsilon}` (OLH per fixed
hash, SS, Wheel's density, GRR, UE). For GLUTF (003 Alg. 1) a protected-only report has, up to the same
``C(y)``, likelihood :math:`t + (1-t) 1[x \in S(y)]` for sensitive ``x`` and
:math:`f(1-z)\,(t + (1-t)\,k(y)/s)` for every non-sensitive ``x`` (``k(y) = |S(y) \cap X_S|``); an invertible
report (``x`` alone or paired) comes from its ``x`` only. EM for the mixture weights ``p`` is then

.. math:: p'_x = \frac{1}{n}\Big(\sum_{i \in Y'} \frac{p_x L_{ix}}{\sum_u p_u L_{iu}} + N_x\Big),

where ``N_x`` counts the invertible reports of ``x``: the exact MLE on the simplex (a fixed point of EM),
from per-report support bits (``SupportRatio``: one byte per report and base item, never an ``n x d`` float
likelihood) built on device. The mechanisms offer these terms as the ``report`` field of their ``likelihood()``
record; the EM loop is estimation's one core (``ul.estimation.em``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact, _pytree, _report_space, _reports
from uldp_jax.mechanisms.core._records import likelihood_of


def report_support(base: Any, ys: Any) -> jax.Array:
    """``bool[n, s]``: the base items each base report supports."""
    if hasattr(base, "support"):
        return base.support(ys)
    if base.report_kind == "bits":
        return jnp.asarray(_compact.to_dense(ys), bool)  # the factors L[n, d] are dense anyway
    return jnp.asarray(ys)[:, None] == jnp.arange(base.d)


@_pytree.pytree_dataclass(data_fields=("bits", "items", "low", "high", "other", "weight", "inverted"),
                        meta_fields=())
@dataclasses.dataclass(frozen=True)
class SupportRatio:
    r"""Per-report likelihood of support-ratio form, kept as bits (never an ``n x d`` float matrix).

    Report ``i`` has likelihood proportional to ``high[i]`` at the items of its support, ``low[i]`` at the other
    items of ``items`` (the base domain), and ``other[i]`` at every item outside ``items``, so that with
    :math:`s_i = \sum_{x \in S_i} p_x`, :math:`P_S = \sum_{x \in items} p_x` and :math:`P_N = 1 - P_S`:
    :math:`D_i = low_i (P_S - s_i) + high_i s_i + other_i P_N`. Estimation runs EM on it in chunks of rows.

    Attributes:
      bits: ``bool[n, s]``: the base items each report supports (column ``j`` is item ``items[j]``).
      items: ``int32[s]``: the domain item of each column.
      low, high, other: ``float[n]``: the factors above (row-scaled so that none underflows at large eps).
      weight: ``float[n]``: 1 for a report in the likelihood, 0 for an invertible (or padding) report.
      inverted: ``float[d]``: invertible reports per item (likelihood proportional to ``p_x``).
    """

    bits: Any
    items: Any
    low: Any
    high: Any
    other: Any
    weight: Any
    inverted: Any


def pure_terms(mech: Any, ys: Any) -> SupportRatio:
    """``SupportRatio`` of a pure base: factor ``t + (1 - t) 1[x in S(y)]`` (``t = e^{-eps}``), all reports
    weighted. A report with an empty support has the factor ``t`` on every item: it is stored as 1 (a row's
    scale does not change EM), so ``t`` underflowing at large eps keeps the report."""
    t = jnp.exp(-jnp.asarray(mech.eps))
    sup = report_support(mech, ys)
    n = sup.shape[0]
    empty = ~jnp.any(sup, axis=1)
    low = jnp.where(empty, 1.0, t).astype(t.dtype)
    ones = jnp.ones(n, t.dtype)
    return SupportRatio(sup, jnp.arange(mech.d, dtype=jnp.int32), low, ones, jnp.zeros(n, t.dtype), ones,
                        jnp.zeros(mech.d, t.dtype))


def glutf_terms(mech: Any, ys: Any) -> Any:
    """GLUTF's per-report likelihood from the base's own: a ``SupportRatio`` (the protected reports' base support
    over the sensitive items with the base's factors; ``f(1-z)`` times the base factor averaged over the sensitive
    items at every non-sensitive item; 0/1 weights; the invertible counts), or dense ``(L, w, N)`` where the base's
    likelihood is dense.

    The base factors come from the base's ``likelihood().report``, else its ``product`` rates
    (``product_log_odds``), else the support ratio GLUTF read off its channel (``mech.support_ratio``); never
    from ``t = exp(-eps)`` alone, which a user's base need not follow.

    Raises:
      ValueError: a base with none of these (name the likelihood to define).
    """
    protected = ys.has_base & (ys.item < 0)
    item = jnp.where(ys.item >= 0, ys.item, 0)
    fp = mech.f_protected()
    base = _base_factors(mech, ys.base)
    dtype = jnp.result_type(fp, float)
    N = jnp.zeros(mech.d, dtype).at[item].add((ys.item >= 0).astype(dtype))
    if not isinstance(base, tuple):  # dense base factors L_b float[n, s]
        sens = jnp.asarray(mech.sensitive, jnp.int32)
        Lb = jnp.asarray(base, dtype)
        L = jnp.broadcast_to((fp * jnp.mean(Lb, axis=1))[:, None], (Lb.shape[0], mech.d)).at[:, sens].set(Lb)
        return L, protected.astype(dtype), N
    sup, low, high = base
    k = jnp.sum(sup, axis=1)
    # an empty support's factors are all ``low``, stored as 1 (row scales do not change EM; t underflows at eps ~ 87)
    other = (fp * (low + (high - low) * k / mech.s)).astype(low.dtype)
    return SupportRatio(sup, jnp.asarray(mech.sensitive, jnp.int32), low, high, other,
                        protected.astype(low.dtype), N.astype(low.dtype))


def _base_factors(mech: Any, ys_base: Any) -> Any:
    """``(support bool[n, s], low float[n], high float[n])`` of the base reports, or dense ``L_b float[n, s]``."""
    base = mech.base
    rec = likelihood_of(base)
    if rec.report is not None:
        terms = rec.report(ys_base)
        if isinstance(terms, SupportRatio):
            return terms.bits, terms.low, terms.high
        return terms[0]
    if rec.product is not None:
        t = jnp.exp(-jnp.asarray(product_log_odds(base)))
    elif getattr(mech, "support_ratio", None) is not None:
        t = jnp.asarray(mech.support_ratio, jnp.result_type(float))
    else:
        raise ValueError(f"GLUTF's EM over {type(base).__name__}: the base gives no per-report likelihood "
                         "(likelihood().report or product) and its channel has no support-ratio form; define the "
                         "base's likelihood().report.")
    sup = report_support(base, ys_base)
    empty = ~jnp.any(sup, axis=1)
    low = jnp.where(empty, 1.0, t).astype(t.dtype)
    return sup, low, jnp.ones(sup.shape[0], t.dtype)

def bit_log_odds(own: Any, other: Any) -> jax.Array:
    r"""The log-odds ratio of a product bit, :math:`w = \log\frac{a(1-b)}{(1-a)b}` with ``own`` :math:`= a =
    P(y_x = 1 | x)` and ``other`` :math:`= b = P(y_x = 1 | u \ne x)`, in log space (``log1p``: exact for rates
    near 0 or 1). A product likelihood's factor is :math:`t + (1 - t) y_x` with :math:`t = e^{-w}`; unary
    encodings have :math:`w = \varepsilon` for every keep probability, a thresholded histogram (THE) does not."""
    own, other = jnp.asarray(own), jnp.asarray(other)
    return jnp.log(own) - jnp.log1p(-own) - jnp.log(other) + jnp.log1p(-other)


def product_log_odds(mech: Any) -> jax.Array:
    """``w`` of ``mech.likelihood().product`` (EM's ``t = e^{-w}``), never assumed to be ``mech.eps``.

    From the record's third entry ``(mask, invertible, log_odds)`` when given; else from the rates of the
    independent-bits compact record (``compact().params``); else from the bit marginals of the exact channel
    (small domains). Concrete rates are checked to be the same on every product bit (EM's product form has one
    ``t``).

    Raises:
      ValueError: rates that differ across the product bits, or no rates to read (name what to supply).
    """
    mask, _, *log_odds = likelihood_of(mech).product
    if log_odds:
        return jnp.asarray(log_odds[0])
    mask = np.asarray(mask, bool)
    items = np.flatnonzero(mask)
    compact = mech.compact()
    if compact is not None and compact.params is not None:
        _, own, q = compact.params
        own = jnp.broadcast_to(jnp.asarray(own), (mech.d,))[items]
        other = jnp.broadcast_to(jnp.asarray(q), (mech.d,))[items]
    else:
        own, other = _channel_rates(mech, items)
    _check_common_rate(mech, own, other)
    return bit_log_odds(own[0], jnp.ravel(jnp.asarray(other))[0])


def _channel_rates(mech: Any, items: np.ndarray) -> tuple[jax.Array, jax.Array]:
    """``(own float[k], other float[k, k-1])`` per product bit from the exact channel's bit marginals."""
    k = int(_report_space.num_stats(mech))
    if mech.report_kind != "bits" or 2**k != int(mech.num_outputs):
        raise ValueError(f"{type(mech).__name__}.likelihood().product gives no rates and its channel has no bit "
                         "columns: pass product=(mask, invertible, log_odds), log_odds = "
                         "_likelihood.bit_log_odds(own, other) (P(bit x set | x), P(bit x set | another input)).")
    _reports.check_channel_size(type(mech).__name__, mech.d, 2**k)
    try:
        Q = mech.channel_matrix()[0]
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError) as e:
        raise ValueError(f"{type(mech).__name__}.likelihood().product gives no rates and its channel is not "
                         "traceable (inside jit/vmap): pass product=(mask, invertible, log_odds).") from e
    xp = np if _validate.is_concrete(Q) else jnp  # float64 marginals where the channel is concrete
    Q = np.asarray(Q, np.float64) if xp is np else Q
    marg = Q @ xp.asarray(_reports.bits_table(k), Q.dtype)  # [d, k]: P(bit j set | x)
    own = marg[items, items]
    others = xp.stack([marg[np.delete(items, i), j] for i, j in enumerate(items)])
    return own, others


def _check_common_rate(mech: Any, own: Any, other: Any) -> None:
    if not (_validate.is_concrete(own) and _validate.is_concrete(other)):
        return
    own, other = np.asarray(own, np.float64), np.ravel(np.asarray(other, np.float64))
    for name, v in (("P(bit x set | x)", own), ("P(bit x set | another input)", other)):
        if v.size and np.ptp(v) > 1e-6 * max(float(np.max(np.abs(v))), 1e-30):
            raise ValueError(f"{type(mech).__name__}: {name} differs across the product bits ({v.min():.6g} .. "
                             f"{v.max():.6g}); EM's product form has one rate per bit kind. Give likelihood() a "
                             "report(ys) with per-report factors instead.")
