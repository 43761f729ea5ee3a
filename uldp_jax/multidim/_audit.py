r"""Exact attribute-wise ULDP audit of a product protocol with utility-optimized oracles (float64, no sampling).

Why a separate audit: ``ul.audit``'s ULDP rule (001 Def 2) asks each invertible output to reveal the whole input.
Under SPL/SMP with uRR/uRAP/GLUTF oracles a report reveals *one attribute's* non-sensitive value and hides the
others, so over the product it has outputs that are neither protected nor invertible. The guarantee such a report
does give, checked here on the exact channel: for every report ``y``,

1. the inputs that reach ``y`` form a product set, each attribute either *hidden* (every value reaches ``y``) or
   *revealed* (one value only), and a revealed value is non-sensitive in its attribute (``X_S^j`` never revealed);
2. any two inputs that reach ``y`` (so agree on the revealed attributes) have
   :math:`Q(y|x) \le e^\varepsilon Q(y|x')`: the hidden attributes are protected at ``eps``.

On reports that reveal nothing this is plain eps-LDP (``ul.audit`` checks that part too: its ``eps``).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from uldp_jax.multidim import _product


class AttributeAudit(NamedTuple):
    """Result of ``audit_attributes``.

    Attributes:
      ok: both rules hold (``eps <= nominal`` within ``tol``, and ``reveal_ok``).
      eps: the largest log ratio between inputs that reach the same report.
      nominal: the claimed eps (``mech.privacy_spec().eps``).
      reveal_ok: rule 1 (product supports; only non-sensitive values revealed).
      num_revealing: reports that reveal at least one attribute.
    """

    ok: bool
    eps: float
    nominal: float
    reveal_ok: bool
    num_revealing: int


def _sensitive_masks(mech: Any) -> list[np.ndarray]:
    masks = []
    for o in mech.oracles:
        s = _product.oracle_sensitive(o)
        m = np.ones(o.d, bool) if s is None else np.isin(np.arange(o.d), np.asarray(s, int))
        masks.append(m)
    return masks


def audit_attributes(mech: Any, tol: float = 1e-9) -> AttributeAudit:
    """Checks the attribute-wise ULDP guarantee of ``mech`` (SPL/SMP over any oracles) on its exact channel."""
    Q, _ = mech.channel_matrix()
    Q = np.asarray(Q, np.float64)
    domains: Sequence[int] = mech.domains
    D = Q.shape[0]
    X = np.stack(np.unravel_index(np.arange(D), tuple(domains)), axis=1)  # [D, k]
    sens = _sensitive_masks(mech)
    support = Q > 0
    reveal_ok, revealing = True, 0
    for y in np.flatnonzero(support.any(axis=0)):
        rows = support[:, y]
        vals = [np.unique(X[rows, j]) for j in range(len(domains))]
        product = rows.sum() == int(np.prod([len(v) for v in vals]))
        shapes = all(len(v) in (1, d) for v, d in zip(vals, domains))
        revealed = [j for j, (v, d) in enumerate(zip(vals, domains)) if len(v) == 1 and d > 1]
        # An LDP oracle counts all its values as sensitive: it may never reveal one.
        leak = any(sens[j][vals[j][0]] for j in revealed)
        revealing += bool(revealed)
        reveal_ok &= bool(product and shapes and not leak)
    with np.errstate(divide="ignore"):
        L = np.log(Q)
    eps = -np.inf
    for y in np.flatnonzero(support.any(axis=0)):
        col = L[support[:, y], y]
        eps = max(eps, float(col.max() - col.min()))
    nominal = float(mech.privacy_spec().eps)
    ok = bool(reveal_ok and eps <= nominal + tol * max(1.0, nominal))
    return AttributeAudit(ok, eps, nominal, bool(reveal_ok), int(revealing))
