r"""uBD's estimator and its exact per-item variance (traceable JAX; Yoon, Park, Nam, Lee 2025).

The statistic (``UBD.aggregate``): for each drawn size ``K_j`` the support counts ``C_j float[s]`` of the
sensitive items over the ``K_j``-subset reports (``N_j = sum(C_j) / K_j`` such reports), then the counts
``c_N float[d - s]`` of the disclosed non-sensitive items (``n_I`` reports).

The estimator is phy811/uBD ``decode_opt_ULDP.m``'s score estimator: the mean likelihood ratio
:math:`\eta = \frac1n\sum_i Q(y_i|\cdot)/Q_\alpha(y_i)` at the prior :math:`P_\alpha`, projected on the three
invariant subspaces ``H_1`` (zero-sum on X_S), ``H_2`` (zero-sum on X_N), ``H_3`` (the contrast
``u = ((d-s) 1_S, -s 1_N)``) and divided by the information there, :math:`\hat p = P_\alpha + \sum_i \Phi_i/J_i`.
It is unbiased for every ``(alpha, t)`` (the three ``J_i`` are the eigenvalues of the information matrix on those
subspaces) and, at ``ubd_weights``' saddle point, its worst case over the simplex is the minimax risk. Written out
(``D_j = 1 + alpha K_j (e^eps - 1)/s``, ``B_i`` the ``J_i`` without their common factors, see ``_terms``):

.. math::
   \hat p_S = \frac{\alpha}{s} + \frac{s-1}{s B_1}\sum_j \frac{C_j - \bar C_j}{n D_j} + (d-s)\gamma,\quad
   \hat p_N = \frac{1-\alpha}{d-s} + \frac{c_N - \bar c_N}{n B_2} - s\gamma,\quad
   \gamma = \frac{(1-\alpha)\sum_j K_j N_j (e^\varepsilon-1)/D_j - s\,n_I}{n s^2 (d-s) B_3}.

With one size (``t`` a point mass) this is uSS's channel with the score estimator at ``P_alpha`` (at ``alpha =
1``, phy811's ``decode_single``).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

# ``debias`` and ``item_nvar`` are jitted (static sizes): called eagerly (``ul.theory``'s exact risks, estimates
# from host statistics) their few dozen small operations would each compile once; inside a caller's jit, vmap or
# grad a nested jit is inlined.
_jit = functools.partial(jax.jit, static_argnums=(1, 2, 3))


def _terms(eps: Any, s: int, d: int, sizes: Any, weights: Any, alpha: Any) -> dict:
    """Shared factors (float ``[len(sizes)]`` per size or scalars), finite for every eps the library accepts."""
    eps = jnp.asarray(eps)
    t, u, em1 = jnp.exp(-eps), -jnp.expm1(-eps), jnp.expm1(eps)
    k = jnp.asarray(sizes, t.dtype)
    w = jnp.asarray(weights, t.dtype)
    alpha = jnp.asarray(alpha, t.dtype)
    den = k + (s - k) * t  # (k e + s - k) / e
    dk = 1.0 + alpha * k * em1 / s  # D_j
    ratio = em1 / dk  # (e - 1) / D_j, bounded as eps grows
    return dict(
        t=t, k=k, w=w, alpha=alpha, dk=dk, ratio=ratio,
        B1=jnp.sum(w * k * (s - k) * u / (s * dk * den)),  # (e - 1) sum t_k k(s-k) / ((a k (e-1) + s)(k e + s - k))
        B2=jnp.sum(w * k * u / den),  # (e - 1) sum t_k k / (k e + s - k)
        B3=jnp.sum(w * k * ratio / s),  # (e - 1) sum t_k k / (alpha k (e - 1) + s)
        p_in=k / den,  # a sensitive input's own item is in its subset
        q=k * (k - 1.0 + (s - k) * t) / (den * (s - 1.0)),  # another sensitive item is in it
        nz=s * t / den,  # 1 - z_k: a non-sensitive input reports a subset (given size k)
    )


@_jit
def debias(eps: Any, s: int, d: int, sizes: Any, weights: Any, alpha: Any, stats: Any, n: Any) -> Any:
    """``(p_S float[s], p_N float[d - s])``: the estimate from ``stats float[len(sizes) * s + d - s]`` of ``n``
    reports, sensitive items in rank order, then non-sensitive ones."""
    T = _terms(eps, s, d, sizes, weights, alpha)
    m = len(sizes)
    stats = jnp.asarray(stats, T["t"].dtype)
    n = jnp.asarray(n, T["t"].dtype)
    C = stats[: m * s].reshape(m, s)
    cN = stats[m * s:]
    N = jnp.sum(C, axis=1) / T["k"]
    n_i = jnp.sum(cN)
    spread = jnp.sum((C - jnp.mean(C, axis=1, keepdims=True)) / T["dk"][:, None], axis=0)
    gamma = ((1.0 - T["alpha"]) * jnp.sum(T["k"] * N * T["ratio"]) - s * n_i) / (n * s**2 * (d - s) * T["B3"])
    p_s = T["alpha"] / s + (s - 1.0) / (s * T["B1"]) * spread / n + (d - s) * gamma
    p_n = (1.0 - T["alpha"]) / (d - s) + (cN - jnp.mean(cN)) / (n * T["B2"]) - s * gamma
    return p_s, p_n


@_jit
def item_nvar(eps: Any, s: int, d: int, sizes: Any, weights: Any, alpha: Any, p_s: Any, p_n: Any) -> tuple[Any, Any]:
    r"""``(float[s], float[d - s])``: exact :math:`n\,\mathrm{Var}(\hat p_x)` per item in the iid model, for the
    true masses ``p_s`` (sensitive items, rank order) and ``p_n`` (non-sensitive ones).

    One report adds ``g(y)`` to ``debias`` (``n = 1``): a ``K_j``-subset adds ``alpha/s + a_j(1[r in y] - K_j/s)
    + (d - s) gamma_j`` to sensitive item ``r`` and ``(1 - alpha)/(d - s) - s gamma_j`` to every non-sensitive
    item; a disclosed item ``x`` adds ``alpha/s + (d - s) gamma_I`` to every sensitive item and
    ``(1 - alpha)/(d - s) + (1[x = j] - 1/(d - s))/B_2 - s gamma_I`` to non-sensitive item ``j``. The variance is
    :math:`E_p[g^2] - p^2`, with the report probabilities of the channel (``UBD.channel_matrix``).
    """
    T = _terms(eps, s, d, sizes, weights, alpha)
    p_s, p_n = jnp.asarray(p_s), jnp.asarray(p_n)
    P_S = jnp.sum(p_s, axis=-1, keepdims=True)
    P_N = jnp.sum(p_n, axis=-1, keepdims=True)
    k, w, al = T["k"], T["w"], T["alpha"]
    a = (s - 1.0) / (s * T["B1"] * T["dk"])  # [m]
    g_j = (1.0 - al) * k * T["ratio"] / (s**2 * (d - s) * T["B3"])  # gamma of one K_j-subset report
    g_i = -1.0 / (s * (d - s) * T["B3"])  # gamma of one disclosed item
    Z = jnp.sum(w * (1.0 - T["nz"]))  # a non-sensitive input discloses itself
    size = w * (P_S + P_N * T["nz"])  # [.., m]: P(a K_j-subset report)
    hit = w * (p_s[..., :, None] * T["p_in"] + (P_S[..., None] - p_s[..., :, None]) * T["q"]
               + P_N[..., None] * T["nz"] * k / s)  # [.., s, m]: P(a K_j-subset containing r)
    base_s = al / s + (d - s) * g_j  # [m]
    e_s = (jnp.sum(hit * (base_s + a * (1.0 - k / s)) ** 2 + (size[..., None, :] - hit) * (base_s - a * k / s) ** 2,
                   axis=-1) + P_N * Z * (al / s + (d - s) * g_i) ** 2)
    base_n = (1.0 - al) / (d - s) - s * g_i
    e_n = (jnp.sum(size * ((1.0 - al) / (d - s) - s * g_j) ** 2, axis=-1, keepdims=True)
           + p_n * Z * (base_n + (1.0 - 1.0 / (d - s)) / T["B2"]) ** 2
           + (P_N - p_n) * Z * (base_n - 1.0 / ((d - s) * T["B2"])) ** 2)
    return e_s - p_s**2, e_n - p_n**2
