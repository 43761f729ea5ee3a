"""The records ``Mechanism``'s grouped optional capabilities return (``None`` when a mechanism has none).

``pure()`` answers 003's questions about a pure mechanism (GLUTF's and the closed forms'); ``compact()`` says how
a bit-vector mechanism draws compact reports; ``estimator()`` describes the linear estimator ``debias`` (its
per-item affine form, its variance); ``counts()`` holds the exact count-level samplers and their cost;
``likelihood()`` the likelihood forms EM runs on and the channel's report columns; ``reports()`` (``Reports``,
defined in the leaf module ``_report_space``) the statistic's length, the report check and the bits sent. Each
record is one member on the base, so a capability that comes with several answers adds one name to the protocol,
not five.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax import _validate
from uldp_jax.mechanisms.core import _compact, _report_space
from uldp_jax.mechanisms.core import _pure_uldp as _th
from uldp_jax.mechanisms.core._report_space import Reports  # ``reports()``'s record, defined in a leaf module
from uldp_jax.mechanisms.core._reports import bits_table


class Pure(NamedTuple):
    """A pure mechanism's probabilities (003 Def 6), traceable JAX values (``Mechanism.pure()``).

    A report supports the user's own item w.p. ``p`` and each other sensitive item w.p. ``q``; a pure ULDP
    mechanism also reports a non-sensitive item as itself w.p. ``z``. The last three fields are GLUTF's questions
    to a pure LDP base (``z is None``): closed forms that spare it reading the base's exact channel.
    """

    p: Any  # p*: float[] (a grid: the grid's shape)
    q: Any  # q*
    z: Any = None  # z* of a pure ULDP mechanism; None: pure LDP (a valid GLUTF base)
    share: Any = None  # max_{i,m} p_im / sum_t p_tm over the outputs; None: GLUTF reads it off the channel
    z_max: Callable[[int], Any] | None = None  # s -> GLUTF's largest valid z over s sensitive items; None: channel
    z_published: Any = None  # 003's published (ULDP-violating) z for this base; None: 003 publishes none
    ratio: Any = None  # t of the support-ratio likelihood t + (1 - t) 1[x in S(y)]; None: e^{-eps} (tight bases)


class Compact(NamedTuple):
    """How a bit-vector mechanism draws compact reports (``CompactBits``, the positions of the ones)
    (``Mechanism.compact()``; ``mechanisms.core._compact``)."""

    perturb: Callable[..., Any]  # (key, xs, *args, num_chunks=None) -> reports; perturb_batch's law, no n x d bits
    preferred: bool  # ul.perturb returns compact reports (d >= COMPACT_MIN_D, at most d / 8 ones expected)
    stats: bool = False  # sample_stats and simulate's report path draw through the compact sampler
    params: tuple[np.ndarray, Any, Any] | None = None  # (items_s, own_prob float[d], q): independent bits


class Estimator(NamedTuple):
    r"""What ``emp``, ``emp+thr`` and ``ul.theory`` ask about the linear estimator ``debias`` (``Mechanism.estimator()``;
    ``None``: the channel's least-squares inverse, its variance from the channel).

    ``affine``: ``(a float[d], b float[d])`` with :math:`E[stats_j] / n = a_j p_j + b_j` (the default ``debias``
    is then :math:`(stats / n - b) / a`, O(d)). ``variance``: ``(p, n) -> float[d]``, the iid per-item variance
    of ``debias`` where neither the affine form nor the channel gives it (a mechanism whose own ``debias`` runs a
    transform, e.g. the Hadamard family's FWHT). ``debias``: ``(stats, n) -> float[d]``, the mechanism's own
    unbiased estimate, affine in ``stats`` (``None``: the affine inverse, else least squares on the channel;
    ``_estimation.default_debias``). Read them through ``mechanisms.core._estimation``'s ``debias``, ``affine``,
    ``debias_variance`` and ``stats_matrix``. ``exact`` (read only with ``affine``): ``affine`` holds exactly on
    the exact channel (``True``); ``False`` where it is the model of an ideal hash family that the exact channel's
    finite seed family only approximates (Wheel; OLH and uLH with ``family="hash"``), so the per-item estimator on
    that channel has a small, exactly computable bias (``ul.theory.exact_item_mse`` then asks for
    ``affine="mechanism"``).
    """

    affine: tuple[Any, Any] | None = None
    variance: Callable[[Any, Any], Any] | None = None
    debias: Callable[[Any, Any], Any] | None = None
    exact: bool = True


class Counts(NamedTuple):
    r"""A mechanism's exact count-level samplers (``Mechanism.counts()``; ``None``: the engine uses the per-user
    path). Build one with ``counts_record``, which fills the defaults; the engine reads it through ``counts_of``.

    ``fixed(key, counts float[d]) -> stats`` has exactly the law of ``aggregate(perturb_batch(key, xs))`` for any
    ``xs`` with ``bincount(xs) == counts`` (floats carrying exact integers; the engine runs it under float64).
    ``iid(key, n, p float[d]) -> stats`` is the law for ``n`` users drawn iid from ``p``; ``None``: the engine
    draws the true counts ``Multinomial(n, p)`` and runs ``fixed``. Give it when the iid law is cheaper (one
    ``Multinomial(n, p Q)``) or the only one available (SS, whose ``fixed`` is ``None``); a mechanism with only
    ``iid`` should also accept ``P`` independent populations, ``n float[P]`` with ``p float[P, d]``, returning the
    stats of their union (GLUTF's go users need it). Building blocks: ``mechanisms.core._counts``.

    ``draws(iid) -> float``: exact draws per repetition (binomials, multinomial cells), which ``simulate(path=
    "auto")`` weighs against the per-user path's ``n`` users and uses to size repetition chunks; default
    ``d + num_stats`` (the true counts and O(1) draws per statistic). ``memory(iid) -> float | None``: bytes of
    temporaries one repetition holds at once; ``None``: estimated from ``draws`` (every draw held at once, as in
    multinomial splitting). Give it when the draws are sequential (SS's scan holds O(k) bins, not O(d k) draws).
    """

    fixed: Callable[..., Any] | None = None  # (key, counts float[d]) -> stats; None: iid model only
    iid: Callable[..., Any] | None = None  # (key, n, p float[d]) -> stats; None: Multinomial(n, p), then fixed
    draws: Callable[[bool], float] | None = None  # iid -> exact draws per repetition; None: d + num_stats
    memory: Callable[[bool], float | None] | None = None  # iid -> bytes held per repetition; None: from draws


def counts_record(mech: Any, fixed: Callable[..., Any] | None = None, iid: Callable[..., Any] | None = None,
                  draws: Callable[[bool], float] | None = None,
                  memory: Callable[[bool], float | None] | None = None) -> Counts:
    """A ``Counts`` record for ``mech`` with the defaults filled in (``draws``: ``d + num_stats``; ``memory``:
    ``None``, estimated from ``draws``).

    Raises:
      ValueError: if neither ``fixed`` nor ``iid`` is given (return ``None`` from ``counts()`` instead).
    """
    if fixed is None and iid is None:
        raise ValueError(f"{type(mech).__name__}.counts(): expected fixed or iid to be a sampler; a mechanism "
                         "without an exact count sampler returns None.")
    if draws is None:
        draws = lambda iid_model: float(mech.d + _report_space.num_stats(mech))
    if memory is None:
        memory = lambda iid_model: None
    return Counts(fixed, iid, draws, memory)


def counts_of(mech: Any) -> Counts | None:
    """``mech.counts()`` with its defaults filled in (``counts_record``), or ``None``.

    Raises:
      TypeError: if ``counts()`` returns something other than a ``Counts`` record or ``None``.
    """
    rec = mech.counts()
    if rec is None:
        return None
    if not isinstance(rec, Counts):
        raise TypeError(f"Expected {type(mech).__name__}.counts() to return a Counts record "
                        f"(uldp_jax.mechanisms.core._records) or None, got {type(rec).__name__}.")
    return counts_record(mech, *rec)


class Likelihood(NamedTuple):
    r"""EM's likelihood of a mechanism's reports and the channel's report columns (``Mechanism.likelihood()``;
    ``None``: EM runs on the channel's columns, which are the items or the bit patterns). Generic code reads it
    through ``likelihood_of``, which fills ``index`` and ``support`` for item and bit reports.

    At most one of the first three is the form EM uses (``estimation._em.em`` asks in this order: item reports
    on the histogram, ``product``, ``report``):

    * ``ops``: ``(matvec: p -> p Q, rmatvec: v -> Q v)``, traceable and cheaper than the dense channel, for EM on
      the output histogram of item reports (one jitted solver; without it the dense ``channel_matrix()`` is built
      once, concrete parameters and small domains only);
    * ``product``: ``(product bool[d], invertible, log_odds)`` when a bit-vector report ``y`` has likelihood
      :math:`P(y|x) \propto t + (1 - t) y_x` for every ``x`` in ``product`` and, if ``invertible``, a bit set
      outside ``product`` identifies its input (uRAP's non-sensitive bits); EM then runs on the reported ones
      (``estimation._em_reports``). ``t = e^{-w}`` with ``w = log_odds``, the bits' log-odds ratio
      ``log[a (1 - b) / ((1 - a) b)]`` for ``a = P(y_x = 1 | x)``, ``b = P(y_x = 1 | u != x)``
      (``mechanisms.core._likelihood.bit_log_odds(a, b)``; ``eps`` for the unary encodings, not for a
      thresholded histogram). Without the third entry the rates come from ``compact().params``, else from the
      exact channel's bit marginals (``_likelihood.product_log_odds``), never from ``eps``;
    * ``report(ys)``: per-report factors, ``(L float[n, d], w float[n], N float[d])`` (report ``i``, weight
      ``w_i``, has likelihood proportional to ``L[i, x]``; ``N`` counts invertible reports per item) or the
      compact ``SupportRatio`` form of ``mechanisms.core._likelihood`` (the library's mechanisms).

    The channel's columns (``ul.check``, ``ul.testing``, ``ul.theory``'s exact moments, GLUTF over a base):
    ``index(ys) -> int64[...]``, the ``channel_matrix`` column of each report (default: items as is, bit vectors
    as ``sum_j bit_j 2^j``); ``support() -> float[num_outputs, d] | None``, 1 where column ``y`` supports item
    ``j`` (default: items support themselves, bit vectors their set bits; ``None`` for other report spaces).

    ``inputs``: the channel's rows, the inputs ``x`` of :math:`P(y|x)` (default ``d``; a PUM: its ``d`` items and
    ``num_tags`` bot items). ``log_channel() -> (log Q, protected)``: the whole exact log-likelihood table in ``channel_matrix``'s shape
    and column order, computed without forming ``Q`` (bit-product channels underflow float64 at large
    ``d * eps``); ``None``: ``ul.audit`` takes logs of ``channel_matrix()``. The audit checks it against the
    channel wherever float64 can tell. ``density() -> float64 [d, d]``: for real-valued reports (SHE), which have
    no finite channel, ``L[x, x'] = sup_y log f(y|x) - log f(y|x')`` exact from the report density; ``ul.audit``
    checks the claimed guarantee on it (``AuditReport.source == "density"``).
    """

    ops: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None  # (matvec, rmatvec); None: dense channel
    product: tuple | None = None  # (product bool[d], invertible[, log_odds]); None: not product-Bernoulli
    report: Callable[[Any], Any] | None = None  # ys -> SupportRatio or (L, w, N); None: no per-report factors
    index: Callable[[Any], np.ndarray] | None = None  # ys -> channel column of each report; None: items / bits
    support: Callable[[], np.ndarray | None] | None = None  # () -> [num_outputs, d]; None: items / bits
    log_channel: Callable[[], tuple[Any, Any]] | None = None  # () -> (log Q, protected); None: log(channel)
    inputs: int | None = None  # the channel's rows; None: d
    density: Callable[[], np.ndarray] | None = None  # () -> [d, d] sup log density ratios; None: a finite channel


def likelihood_of(mech: Any) -> Likelihood:
    """``mech.likelihood()`` with ``index`` and ``support`` filled in for item and bit reports and ``inputs`` as
    ``d`` by default (an empty record when ``likelihood()`` is ``None``).

    Raises:
      TypeError: if ``likelihood()`` returns something other than a ``Likelihood`` record or ``None``.
    """
    rec = mech.likelihood()
    if rec is None:
        rec = Likelihood()
    elif not isinstance(rec, Likelihood):
        raise TypeError(f"Expected {type(mech).__name__}.likelihood() to return a Likelihood record "
                        f"(uldp_jax.mechanisms.core._records) or None, got {type(rec).__name__}.")
    if rec.index is None:
        rec = rec._replace(index=lambda ys: _columns(mech, ys))
    if rec.support is None:
        rec = rec._replace(support=lambda: _column_support(mech))
    if rec.inputs is None:
        rec = rec._replace(inputs=mech.d)
    return rec


def _columns(mech: Any, ys: Any) -> np.ndarray:
    """int64 channel column of each item report (as is) or bit-vector report (``sum_j bit_j 2^j``)."""
    if mech.report_kind == "item":
        return np.asarray(ys).astype(np.int64)
    if mech.report_kind == "bits":
        ys = np.asarray(_compact.to_dense(ys))
        return (ys.astype(np.int64) << np.arange(ys.shape[-1])).sum(axis=-1)
    raise NotImplementedError(f"{type(mech).__name__} reports {mech.report_kind!r}; define likelihood() with "
                              "its index(ys) (the channel column of each report).")


def _column_support(mech: Any) -> np.ndarray | None:
    """``float64 [num_outputs, d]`` for item reports (each supports itself) and bit vectors (their set bits)."""
    m, d = int(mech.num_outputs), int(mech.d)
    if mech.report_kind == "item":
        return np.eye(m, d)
    k = int(_report_space.num_stats(mech))
    if mech.report_kind == "bits" and 2**k == m and k >= d:
        return bits_table(k)[:, :d].astype(np.float64)
    return None


def independent_bits(d: int, items_s: np.ndarray, own_prob: Any, q: Any) -> Compact:
    """The ``Compact`` record of reports with independent bits over ``d`` items: the own bit is 1 w.p.
    ``own_prob[x]``, every bit of ``items_s`` other than ``x`` w.p. ``q``, every other bit is 0.

    ``stats``: a domain of at least ``COMPACT_MIN_D`` and, for a concrete rate, at most ``d / 8`` ones expected
    (decided from the domain alone when the rate is traced).
    """

    def perturb(key: Any, xs: Any, num_chunks: int | None = None) -> _compact.CompactBits:
        return _compact.sample_ones(key, xs, items_s, own_prob, q, d, num_chunks)

    concrete = _validate.is_concrete(q)
    preferred = concrete and _compact.prefers_compact(d, 1.0 + len(items_s) * float(np.max(np.asarray(q))))
    stats = d >= _compact.COMPACT_MIN_D and (not concrete or preferred)
    return Compact(perturb, preferred, stats, (items_s, own_prob, q))


def pure_floats(mech: Any) -> tuple[float, float, float]:
    """``mech.pure()``'s ``(p*, q*, z*)`` as float64 floats (leaves cast to float64 under x64; ``z*`` is nan for
    a pure LDP mechanism), for checks against exact channels.

    Raises:
      ValueError: if ``mech`` is not pure (``pure()`` is ``None``).
    """
    with _th.x64():
        mech64 = jax.tree_util.tree_map(lambda v: jnp.asarray(np.asarray(v, np.float64)), mech)
        pure = mech64.pure()
        if pure is None:
            raise ValueError(f"{type(mech).__name__} is not pure (pure() is None), e.g. a GLUTF with "
                             "rule='non_pure' (003 eq 10).")
        z = float("nan") if pure.z is None else float(pure.z)
        return float(pure.p), float(pure.q), z
