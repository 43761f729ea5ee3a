r"""The ``likelihood`` row of ``ul.check``: the likelihood EM runs on (``likelihood()``'s forms) against the exact
channel, for small domains.

Each form gives a model :math:`L(y, x)` of the report likelihood up to a factor per report; it is right when
every column ``y`` of the channel is proportional to it, :math:`Q(y|x) = c(y) L(y, x)` for every input ``x``
(zeros included). Checked, in float64, wherever the record has them:

* ``product = (mask, invertible[, w])``: :math:`L(y, x) = t + (1 - t) y_x` with :math:`t = e^{-w}` (``w`` the
  record's log-odds ratio, :math:`\varepsilon` without one) for ``x`` in
  ``mask``, :math:`t` for the other inputs, and (``invertible``) a column with one bit set outside ``mask``
  comes from that bit's input alone: on every bit-pattern column. A record whose rate is not its bits' (a
  thresholded histogram encoding given ``w = eps``, say) fails;
* ``report(ys)``: the per-report factors (``SupportRatio`` or ``(L, w, N)``) of one sampled report of each column
  seen; an invertible report (weight 0) must have a column that one input alone reaches, and ``N`` must count
  them;
* ``ops = (matvec, rmatvec)``: ``p @ Q`` and ``Q @ v`` at random ``p`` and ``v``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from uldp_jax.checks._report import CheckRow, skip
from uldp_jax.mechanisms.core import _likelihood, _records, _report_space, _reports
from uldp_jax.privacy import _channel

LIKELIHOOD_RTOL = 1e-6  # largest spread of log(Q(y|x) / L(y, x)) over the inputs of one column


def _spread(Q: np.ndarray, L: np.ndarray, cols: np.ndarray) -> tuple[float, int]:
    """Worst ``max_x log(Q/L) - min_x log(Q/L)`` over ``cols`` (``inf`` where the zeros differ) and its column.

    Args:
      Q: ``[d, m]`` channel.
      L: ``[len(cols), d]`` the model's likelihood of each column in ``cols``.
      cols: the channel columns ``L`` describes.
    """
    q = Q[:, cols].T
    zeros_differ = np.any((q > 0) != (L > 0), axis=1)
    both = (q > 0) & (L > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(np.where(both, q, 1.0)) - np.log(np.where(both, L, 1.0))
    spread = np.where(both.any(axis=1), np.where(both, r, -np.inf).max(1) - np.where(both, r, np.inf).min(1), 0.0)
    spread = np.where(zeros_differ, np.inf, spread)
    i = int(np.argmax(spread))
    return float(spread[i]), int(cols[i])


def product_model(mech: Any, product: tuple[Any, bool], m: int) -> np.ndarray:
    """``L float64[m, d]`` of the product form on every bit-pattern column."""
    mask, invertible = np.asarray(product[0], bool), bool(product[1])
    d, k = int(mech.d), int(_report_space.num_stats(mech))
    bits = _reports.bits_table(k)[:, :d].astype(np.float64)
    # EM's rate, resolved as EM resolves it (the record's log-odds, the compact rates or the channel's marginals)
    w = _likelihood.product_log_odds(mech)
    t = float(np.exp(-np.asarray(w, np.float64)))
    L = np.where(mask[None, :], t + (1.0 - t) * bits, t)
    if invertible:
        outside = bits[:, ~mask]
        one = outside.sum(axis=1) == 1
        L[one] = 0.0
        L[one[:, None] & ~mask[None, :] & (bits > 0)] = 1.0
        L[outside.sum(axis=1) > 1] = 0.0
    return L


def report_model(rec: Any, ys: Any, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(L float64[r, d], weight float64[r], inverted float64[d])`` of the ``report`` form on reports ``ys``."""
    out = rec.report(ys)
    if isinstance(out, _likelihood.SupportRatio):
        bits = np.asarray(out.bits, bool)
        items = np.asarray(out.items)
        low, high, other = (np.asarray(v, np.float64)[:, None] for v in (out.low, out.high, out.other))
        L = np.repeat(other, d, axis=1)
        L[:, items] = np.where(bits, high, low)
        return L, np.asarray(out.weight, np.float64), np.asarray(out.inverted, np.float64)
    L, w, N = out
    return np.asarray(L, np.float64), np.asarray(w, np.float64), np.asarray(N, np.float64)


def check_likelihood(mech: Any, Q: np.ndarray, ys: Any = None, cols: np.ndarray | None = None) -> CheckRow:
    """The ``likelihood`` row (see the module docstring); ``ys`` and ``cols`` are sampled reports and their
    channel columns (``None``: the ``report`` form is not checked)."""
    d, m = Q.shape
    if d != int(mech.d):
        return skip("likelihood", f"the channel has {d} inputs for d={mech.d} items")
    checked, worst = [], (0.0, -1, "")
    try:
        with jax.enable_x64(True):
            mech64 = _channel.as_float64(mech)
            rec = _records.likelihood_of(mech64)
            if rec.product is not None:
                spread, col = _spread(Q, product_model(mech64, rec.product, m), np.arange(m))
                checked.append(f"product ({m} columns)")
                worst = max(worst, (spread, col, "product"))
            if rec.report is not None and ys is not None:
                _, first = np.unique(cols, return_index=True)
                L, w, N = report_model(rec, jax.tree.map(lambda a: jnp.asarray(np.asarray(a)[first]), ys), d)
                inv = w == 0
                if inv.any():
                    reach = (Q[:, cols[first[inv]]] > 0)
                    if np.any(reach.sum(axis=0) != 1):
                        y = int(cols[first[inv]][np.argmax(reach.sum(axis=0) != 1)])
                        return CheckRow("likelihood", "FAIL", f"report(): a report of column {y} is called "
                                        "invertible, but several inputs reach that column")
                    if not np.allclose(N, reach.sum(axis=1), atol=1e-9):
                        return CheckRow("likelihood", "FAIL", f"report(): the invertible counts N={N.tolist()} "
                                        f"do not count the invertible reports per input {reach.sum(1).tolist()}")
                if (~inv).any():
                    spread, col = _spread(Q, L[~inv], cols[first[~inv]])
                    worst = max(worst, (spread, col, "report"))
                checked.append(f"report ({first.size} columns sampled)")
            if rec.ops is not None:
                rng = np.random.default_rng(0)
                p, v = rng.dirichlet(np.ones(d)), rng.standard_normal(m)
                got = (np.asarray(rec.ops[0](jnp.asarray(p)), np.float64), np.asarray(rec.ops[1](jnp.asarray(v))))
                err = max(float(np.max(np.abs(got[0] - p @ Q))), float(np.max(np.abs(got[1] - Q @ v))
                                                                        / max(1.0, float(np.max(np.abs(Q @ v))))))
                checked.append("ops (p Q and Q v)")
                worst = max(worst, (err, -1, "ops"))
    except (TypeError, ValueError, NotImplementedError) as err:
        return skip("likelihood", err)
    if not checked:
        return CheckRow("likelihood", "pass", "no likelihood form: EM runs on the exact channel's columns")
    spread, col, form = worst
    where = f" (column {col})" if col >= 0 else ""
    detail = f"{', '.join(checked)} against the exact channel: worst log-ratio spread {spread:.3g}{where}"
    if np.isfinite(spread) and spread <= LIKELIHOOD_RTOL:
        return CheckRow("likelihood", "pass", f"{detail}; tolerance {LIKELIHOOD_RTOL:g}")
    why = {"product": "the product form's rate t is not this channel's bits' rate",
           "report": "report() gives factors the channel does not have", "ops": "ops do not compute p Q, Q v"}
    return CheckRow("likelihood", "FAIL", f"{detail}: {why[form]}, so EM is misspecified")
