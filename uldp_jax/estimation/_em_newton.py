r"""Active-set (projected) Newton for the per-report likelihoods: the MLE in tens of passes instead of thousands.

The problem is :math:`\max_p \ell(p) = \sum_i w_i \log(p \cdot L_i) + \sum_x N_x \log p_x` on the simplex (concave;
``N``: invertible reports). Every per-report model of EM (bit vectors: packed, support lists, dense; support-ratio
reports; a user's dense factors) gives in one pass, like an E-step, the exact gradient
:math:`g_x = \sum_i w_i L_{ix}/(p \cdot L_i) + N_x/p_x` (so :math:`p \cdot g = W`, the total weight, and the EM map
is :math:`p \odot g / W`). Since :math:`\ell(cp) = \ell(p) + W \log c`, the problem equals
:math:`\max_{p \ge 0} \ell(p) - W \sum_x p_x` (its maximiser sums to 1), a concave problem with bounds only.

**Certificate.** By concavity, :math:`\ell(p^*) - \ell(p) \le g \cdot (p^* - p) \le \max_x g_x - W` for ``p`` on
the simplex: ``EMInfo.gap`` reports :math:`(\max_x g_x - W)/W`, an upper bound on the log-likelihood (nats per
report) still to gain, from the same pass (up to the pass's rounding: ~1e-7 in float32).

**Step** (Bertsekas' projected Newton). With :math:`q = g/W - 1` (the gradient of the problem above, per report)
and the complementarity residual :math:`\rho = \max_x |\min(p_x, -q_x)|`, the items with :math:`p_x \le
\min(10^{-6}, \rho)`, :math:`q_x \le 0`, no invertible report and :math:`p_x + q_x / H_{xx} \le 0` (their own
Newton step crosses 0) are *bound*: their step is :math:`-p_x` (to 0). The *free* items take the Newton step
:math:`\delta_F = H_{FF}^{-1} q_F` with the per-report negative Hessian :math:`H = \frac1W(G + \mathrm{diag}(N/p^2))`,
:math:`G = \sum_i w_i L_i L_i^\top / (p \cdot L_i)^2`. Where the model gives exact products ``G v``
(``_em_hessian.hessian_of``: one pass each, like the gradient's), :math:`\delta_F` comes from preconditioned
conjugate gradients (at most ``CG_ITERS`` products; relative residual :math:`\sqrt{gap}` clipped to
[``CG_TOL_MIN``, ``CG_TOL``], Eisenstat & Walker's forcing term) with the preconditioner ``G``
less the off-diagonal of its :math:`\sum_i c_i y_i y_i^\top` part (exact diagonal and all-items part, one pass).
Otherwise a dense model of ``G`` given by the caller is solved directly (tests; the library's models all give exact
products). The gradient stays exact either way, so this changes only the rate, never the answer: a model of ``G``
from a subsample of the reports, used here before, fails where a few reports with small :math:`p \cdot L_i` carry
much of the curvature (RAPPOR at eps = 10 on 001's census: 431 steps, 1,175 passes; with conjugate gradients 6
steps; OLH and SS reports: tens of steps, with exact products 5-8). The step
:math:`p(\alpha) = [p + \alpha\delta]_+` (normalised; items with invertible reports keep 1% of their mass) is
backtracked (:math:`\alpha = 1, 1/4, \dots`) until the precise log-likelihood change (the model's *gain*,
``_em_core``) is ``>= 0``; if none is, the step is an EM step (monotone). So the log-likelihood never decreases
and items whose MLE is 0 become exactly 0. The gradient passes sum in compensated float32 (``_compensated``), so
the certificate is not held above ``gap_tol`` by rounding.

**Stopping rule.** Stop after the first step whose precise log-likelihood change is at most ``tol`` nats per report
(default 1e-12, as for EM), whose size (max-norm) is at most :math:`\sqrt{tol}` (1e-6), *and* whose certificate ``gap`` is at most ``gap_tol`` (1e-6 per report in float32 — the
gradient's float32 resolution —, 1e-8 in float64), or after ``max_iters`` steps. Newton's change is that of a
step that (near the MLE) nearly reaches it, unlike EM's, which is small because EM is slow. Three steps in a row
with changes at most ``tol`` (rounding: no step improves) also stop it, converged only if the other two hold.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from uldp_jax.estimation import _em_core

BOUND_EPS = 1e-6  # largest mass an item may have and still be bound to 0 in one step
MAX_HALVINGS = 8  # backtracking tries (alpha = 4^-k) before an EM step
MAX_PASSES = 1000  # passes over the reports after which an unconverged Newton hands over to SQUAREM (``solve``)

CG_ITERS = 50  # Hessian-vector products (passes) per Newton direction at most (``_pcg``)
CG_TOL = 1e-1  # relative preconditioned residual at which conjugate gradients stop, far from the MLE
CG_TOL_MIN = 1e-3  # ... and near it: the forcing term is sqrt(gap) clipped to [CG_TOL_MIN, CG_TOL] (``_direction``)

Grad = Callable[[jax.Array], tuple[jax.Array, jax.Array]]
Gram = Callable[[jax.Array], jax.Array]
Hvp = Callable[..., jax.Array]  # (p, v, model at p, cols) -> G v, exact on the items in cols (``_em_hessian``)
Model = Callable[..., Any]  # (p, rows, cols) -> a preconditioner model of G (``LowRank``), read on cols only


class RowPasses(NamedTuple):
    r"""A model's passes that hand each report's :math:`s_i = \sum_{x \in y_i} p_x` on from one to the next (bit
    vectors, ``_em_passes.support_rows``), so that a Newton step gathers the reports' tables less often: the line
    search's gain gathers only the step ``p_b - p_a`` and returns :math:`s` at ``p_b`` (``s_a + \Delta s``),
    and the gradient and the preconditioner model (``Model`` called as ``model(p, rows)``) at the accepted point
    take it without a gather."""

    grad: Callable[..., tuple]  # (p, rows | None) -> (g, sum_i w_i log D_i, rows at p); None: gather p
    gain: Callable[..., tuple]  # (p_a, p_b, rows at p_a) -> (precise change per report, rows at p_b)


def default_gap_tol(dtype: Any) -> float:
    return 1e-8 if jnp.dtype(dtype) == jnp.float64 else 1e-6


def gap_tol_of(certify: bool, pass_dtype: Any, dtype: Any) -> jax.Array:
    """The certificate tolerance as an array (``default_gap_tol`` of the passes' dtype, or ``inf`` without the
    certificate: ``tol="stat"``), so that both rules run one compiled solver."""
    return jnp.asarray(default_gap_tol(pass_dtype) if certify else jnp.inf, dtype)


class NewtonState(NamedTuple):
    p: jax.Array  # float[d] current iterate (on the simplex)
    g: jax.Array  # float[d] product-part gradient at p (sum_i w_i L_ix / D_i)
    lsum: jax.Array  # sum_i w_i log D_i at p
    change: jax.Array  # precise log-likelihood change of the last step, per report
    num_steps: jax.Array
    num_evals: jax.Array  # passes over the reports (gradients and gains)
    stalls: jax.Array  # consecutive steps with |change| <= tol
    step: jax.Array  # max-norm of the last step
    rows: Any = None  # per-report s_i at p (``RowPasses``), else None


def as_update(grad: Grad, inverted: jax.Array, n: jax.Array) -> _em_core.Update:
    """The EM map ``p -> ((p g + N) / W, loglik per report)`` from a model's gradient pass (``n``: ``W``)."""

    def update(p):
        g, lsum = grad(p)
        inv = inverted.astype(p.dtype)
        w = jnp.asarray(n, p.dtype)
        return (jnp.where(p > 0, p * g, 0.0) + inv) / w, _loglik(p, lsum, inv, w)

    return update


def _loglik(p, lsum, inv, n):
    return (lsum + jnp.sum(jnp.where(inv > 0, inv * jnp.log(jnp.where(inv > 0, p, 1.0)), 0.0))) / n


def _full_grad(p, g, inv, n):
    """``q = (g + N / p) / W - 1`` (``+inf`` where ``p = 0 < N``)."""
    safe = jnp.where(p > 0, p, 1.0)
    extra = jnp.where(inv > 0, jnp.where(p > 0, inv / safe, jnp.inf), 0.0)
    return (g + extra) / n - 1.0


def certificate(p, g, inv, n):
    """``(max_x g_x - W) / W``: an upper bound on ``(l(MLE) - l(p)) / W`` at ``p`` on the simplex."""
    return jnp.max(_full_grad(p, g, inv, n))


class LowRank(NamedTuple):
    r"""A model of ``G`` held as :math:`\mathrm{diag}(a) + c_0 11^\top + u 1^\top + 1 u^\top` (``_em_hessian``'s
    preconditioner): O(d) to hold and to solve (a rank-2 Woodbury solve), so Newton with exact Hessian products
    runs at any ``d`` (a dense ``d x d`` model and its Cholesky factor grow as ``d^2`` and ``d^3``)."""

    a: jax.Array  # float[d]
    c0: jax.Array  # scalar
    u: jax.Array  # float[d]
    rows: Any = None  # optional per-report state of the model's pass (``_em_hessian``: s_i), reused by ``Hvp``

    def diagonal(self) -> jax.Array:
        return self.a + self.c0 + 2.0 * self.u

    def dense(self) -> jax.Array:
        """The ``d x d`` matrix (tests and small domains only)."""
        return jnp.diag(self.a) + self.c0 + self.u[:, None] + self.u[None, :]


def _low_rank_precond(m: LowRank, inv_h, n, free, dg, ridge):
    r"""``r -> H_FF^{-1} r`` (zero off ``F``) for ``H = M / n + diag(inv_h)``, Jacobi-scaled by ``dg`` with a
    relative ``ridge``, exactly as the dense path's Cholesky solve: in scaled coordinates the matrix is
    :math:`\mathrm{diag}(\tilde a) + U C U^\top` with :math:`U = [f/dg,\ f u/(n\,dg)]` and
    :math:`C = [[c_0/n, 1], [1, 0]]`, solved by Woodbury; where that matrix is not positive definite (both
    eigenvalues of :math:`I + C U^\top \tilde A^{-1} U` must be positive, as ``tilde a > 0``) the preconditioner
    is Jacobi, as where the dense Cholesky fails."""
    tiny = jnp.finfo(dg.dtype).tiny
    a = jnp.where(free > 0, m.a / n + inv_h, 1.0) / (dg * dg) + ridge
    a = jnp.maximum(a, tiny)
    uu = jnp.stack([free / dg, free * m.u / n / dg], axis=1)  # [d, 2]
    ua = uu / a[:, None]
    k = uu.T @ ua  # [2, 2]
    c = jnp.array([[m.c0 / n, 1.0], [1.0, 0.0]], dg.dtype)
    s = jnp.eye(2, dtype=dg.dtype) + c @ k
    det = s[0, 0] * s[1, 1] - s[0, 1] * s[1, 0]
    pd = (det > 0) & (s[0, 0] + s[1, 1] > 0) & jnp.all(jnp.isfinite(s))
    s_inv = jnp.array([[s[1, 1], -s[0, 1]], [-s[1, 0], s[0, 0]]], dg.dtype) / jnp.where(pd, det, 1.0)
    sc = s_inv @ c

    def precond(r):
        b = r * free / dg
        y = b / a
        x = y - ua @ (sc @ (uu.T @ y))
        return jnp.where(pd, x, b) / dg * free

    return precond


def _direction(p, q, hess, inv, n, hvp=None, cg_tol=CG_TOL):
    """The projected-Newton direction: ``H_FF^{-1} q_F`` on the free items, ``-p`` on the bound ones, and the
    passes it took. With ``hvp`` (``hvp(v, cols) -> G v``, exact on the items of ``cols``: the free ones):
    preconditioned conjugate gradients on the exact ``H_FF`` (``_pcg``), preconditioned by ``hess`` (a dense model
    or a ``LowRank`` one); without: ``hess`` (a dense model of ``G``) solved directly. ``hess`` is read only on
    items at ``p > 0``, ``q > 0`` or with invertible reports (the others are bound whatever it says)."""
    safe = jnp.where(p > 0, p, 1.0)
    inv_h = jnp.where(inv > 0, inv / (safe * safe), 0.0) / n
    low_rank = isinstance(hess, LowRank)
    if low_rank:
        diag_h = hess.diagonal() / n + inv_h
    else:
        h = hess / n + jnp.diag(inv_h)
        diag_h = jnp.diag(h)
    rho = jnp.max(jnp.abs(jnp.minimum(p, -q)))
    # bound: small, pushed down, and the item's own Newton step p_x + q_x / h_xx would cross 0 (else sending
    # it to 0 can lose more than the step gains: a tiny item whose MLE is not 0, RAPPOR at eps = 10)
    bound = (p <= jnp.minimum(BOUND_EPS, rho)) & (q <= 0) & (inv <= 0) & (p * diag_h + q <= 0)
    free = (~bound).astype(p.dtype)
    tiny = jnp.finfo(p.dtype).tiny
    dg = jnp.sqrt(jnp.maximum(jnp.where(bound, 1.0, diag_h), tiny))  # Jacobi scaling, then a relative ridge
    ridge = 1e-12 if p.dtype == jnp.float64 else 1e-6
    if low_rank:
        precond = _low_rank_precond(hess, inv_h, n, free, dg, ridge)
    else:
        h = h * free[:, None] * free[None, :] + jnp.diag(1.0 - free)
        hs = h / dg[:, None] / dg[None, :]
        chol = jnp.linalg.cholesky(hs + ridge * jnp.eye(p.shape[0], dtype=p.dtype))
        if hvp is not None:  # an indefinite model (possible, rare): Jacobi preconditioning
            chol = jnp.where(jnp.all(jnp.isfinite(chol)), chol, jnp.eye(p.shape[0], dtype=p.dtype))

        def precond(r):
            return jax.scipy.linalg.cho_solve((chol, True), r * free / dg) / dg * free

    if hvp is None:
        delta, passes = precond(q), jnp.int32(0)
    else:
        delta, passes = _pcg(lambda v: (hvp(v * free, free > 0) / n + inv_h * v) * free, precond, q * free, cg_tol)
    delta = jnp.where(bound, -p, delta)
    ok = jnp.all(jnp.isfinite(delta))
    return jnp.where(ok, delta, jnp.zeros_like(p)), ok, passes


def _pcg(apply, precond, b, rel_tol=CG_TOL):
    """Preconditioned conjugate gradients for ``A x = b`` from ``x = 0``: at least one and at most ``CG_ITERS``
    products, stopping when the residual's preconditioned norm is ``rel_tol`` times the first; ``(x, products)``."""
    z = precond(b)
    rz0 = jnp.dot(b, z)

    def cond(c):
        k, _, _, _, _, rz = c
        return (k == 0) | ((k < CG_ITERS) & (rz > rel_tol ** 2 * rz0) & jnp.isfinite(rz))

    def body(c):
        k, x, r, z, d, rz = c
        ad = apply(d)
        dad = jnp.dot(d, ad)
        alpha = jnp.where(dad > 0, rz / jnp.where(dad > 0, dad, 1.0), 0.0)  # a non-positive curvature: stop
        x, r = x + alpha * d, r - alpha * ad
        z = precond(r)
        rz_new = jnp.where(dad > 0, jnp.dot(r, z), 0.0)
        return k + 1, x, r, z, z + rz_new / jnp.where(rz > 0, rz, 1.0) * d, rz_new

    zero = jnp.zeros_like(b)
    k, x, *_ = jax.lax.while_loop(cond, body, (jnp.int32(0), zero, b, z, z, rz0))
    return x, k


def run(grad: Grad, gram: Gram, gain: _em_core.Gain, inverted: jax.Array, n: Any, p0: jax.Array, tol: Any,
        max_iters: int, gap_tol: Any = None, hessian: tuple[Hvp, Model] | None = None,
        rows: RowPasses | None = None) -> tuple[jax.Array, _em_core.EMInfo]:
    """Projected Newton from ``p0`` (module docstring); pure, vmappable, not jitted.

    Args:
      grad: the model's gradient pass ``p -> (g float[d], sum_i w_i log D_i)`` (product part, no ``N``).
      gram: ``p -> float[d, d]``: (an estimate of) :math:`\\sum_i w_i L_i L_i^\\top / D_i^2`.
      gain: the model's precise log-likelihood change of the normalised iterates (``_em_core``).
      inverted: ``float[d]`` invertible report counts ``N``; ``n``: the total weight ``W`` (reports).
      p0: strictly positive start on the simplex.
      tol: stopping tolerance on the per-report log-likelihood change; ``max_iters``: step cap.
      gap_tol: stopping tolerance on the certificate (default ``default_gap_tol``).
      hessian: ``(hvp, model)``, exact products with the Gram part and a model of it for preconditioning
        (``_em_hessian.hessian_of``): each direction is then conjugate gradients on the exact Hessian and
        ``gram`` is not used; ``None``: ``gram`` alone is the Hessian.
      rows: the same gradient and gain as ``RowPasses`` (used instead of ``grad`` and ``gain``, and
        ``hessian[1]`` then gets the rows; same steps up to rounding, fewer gathers), or ``None``.

    Returns:
      ``(p_hat float[d], EMInfo)`` (``num_steps``: Newton steps; ``num_evals``: passes over the reports).
    """
    dtype = p0.dtype
    tol = jnp.asarray(tol, dtype)
    gap_tol = jnp.asarray(default_gap_tol(dtype) if gap_tol is None else gap_tol, dtype)
    inv = inverted.astype(dtype)
    n = jnp.asarray(n, dtype)
    if rows is None:
        g0, l0 = grad(p0)
        r0 = None
    else:
        g0, l0, r0 = rows.grad(p0, None)

    step_tol = jnp.sqrt(tol)

    def done(s):
        small = (jnp.abs(s.change) <= tol) & (s.step <= step_tol)
        return small & (certificate(s.p, s.g, inv, n) <= gap_tol)

    def body(s):
        p, g = s.p, s.g
        q = _full_grad(p, g, inv, n)
        if hessian is None:
            delta, ok, cg = _direction(p, q, gram(p), inv, n)
        else:
            # inexact Newton with a forcing term (Eisenstat & Walker): loose far from the MLE, tight near it, so the
            # steps converge superlinearly where the Hessian is ill-conditioned (uRAP at eps = 0.1 on 001's
            # 8-attribute census: 10 products per direction at 0.1 took > 10,000 passes, this ~700)
            cg_tol = jnp.clip(jnp.sqrt(jnp.maximum(certificate(p, g, inv, n), 0.0)), CG_TOL_MIN, CG_TOL)
            # the model's entries are read where an item may be free: at 0 with q <= 0 and no invertible report an
            # item is bound whatever the model says (``_direction``), so its column sums are skipped
            need = (p > 0) | (q > 0) | (inv > 0)
            model = hessian[1](p, None, need) if rows is None else hessian[1](p, s.rows, need)
            delta, ok, cg = _direction(p, q, model, inv, n, lambda v, cols: hessian[0](p, v, model, cols),
                                       cg_tol.astype(dtype))
            cg = cg + 1  # the model's pass
        floor = jnp.where(inv > 0, 0.01 * p, 0.0)

        def change(pa):  # (precise change, rows at pa or None)
            return (gain(p, pa), None) if rows is None else rows.gain(p, pa, s.rows)

        def trial(alpha):
            pa = jnp.maximum(p + alpha * delta, floor)
            pa = pa / jnp.sum(pa)
            return pa, *change(pa)

        def ls_cond(c):
            k, _, ch, _ = c
            return (k < MAX_HALVINGS) & ~(jnp.isfinite(ch) & (ch >= 0))

        def ls_body(c):
            k = c[0]
            return k + 1, *trial(jnp.asarray(0.25, dtype) ** k)

        k0 = jnp.where(ok, 0, MAX_HALVINGS)
        k, pn, ch, rn = jax.lax.while_loop(ls_cond, ls_body, (k0, p, jnp.asarray(-jnp.inf, dtype), s.rows))
        accepted = jnp.isfinite(ch) & (ch >= 0)

        def em_step(_):
            pe = jnp.where(p > 0, p * g, 0.0) + inv
            pe = pe / jnp.sum(pe)
            return pe, *change(pe)

        pn, ch, rn = jax.lax.cond(accepted, lambda _: (pn, ch, rn), em_step, None)
        if rows is None:
            gn, ln = grad(pn)
        else:
            gn, ln, rn = rows.grad(pn, rn)
        evals = s.num_evals + cg + (k - k0) + jnp.where(accepted, 1, 2)
        stalls = jnp.where(jnp.abs(ch) <= tol, s.stalls + 1, 0)
        return NewtonState(pn, gn, ln, ch, s.num_steps + 1, evals, stalls, jnp.max(jnp.abs(pn - p)), rn)

    def cond(s):
        return (s.num_steps < max_iters) & ~done(s) & (s.stalls < 3) & (s.num_evals < MAX_PASSES)

    inf = jnp.asarray(jnp.inf, dtype)
    zero = jnp.int32(0)
    s = jax.lax.while_loop(cond, body, NewtonState(p0, g0, l0, inf, zero, jnp.int32(1), zero, inf, r0))
    gap = certificate(s.p, s.g, inv, n)
    info = _em_core.EMInfo(s.num_steps, s.num_evals, done(s), _loglik(s.p, s.lsum, inv, n), s.change, gap)
    return s.p, info


def solve(grad: Grad, gram: Gram, gain: _em_core.Gain, update: _em_core.Update, inverted: jax.Array, n: Any,
          p0: jax.Array, tol: Any, max_iters: int, hessian: tuple[Hvp, Model] | None = None,
          gap_tol: Any = None, rows: RowPasses | None = None) -> tuple[jax.Array, _em_core.EMInfo]:
    """Newton (``run``), handing over to SQUAREM (``_em_core.run``, from Newton's iterate) where Newton stopped
    before ``max_iters`` without its certificate: after ``MAX_PASSES`` passes (the subsampled Hessian can be too
    poor a model: RAPPOR at eps = 10 on 001's census took 768 steps, ~10 passes each, mostly EM fallbacks; a hand-over
    after 2 failed steps in a row cost uRAP at eps = 1, whose Newton converges in 168 passes with some failed
    steps, minutes of SQUAREM) or on the stall rule (float32 rounding can hold the certificate above ``gap_tol``: uRAP at eps 6-10).
    SQUAREM's own rule then decides ``converged``, as without Newton. ``gap_tol``: as in ``run`` (give the passes'
    dtype's where they sum in a narrower float than ``p0``: float32 passes resolve the certificate to ~1e-7, so a
    float64 ``p0`` with float32 passes stalled three steps below 1e-7, then handed over). ``EMInfo`` counts both
    phases; ``gap`` is the final certificate. ``rows``: as in ``run`` (Newton only)."""
    p_n, info_n = run(grad, gram, gain, inverted, n, p0, tol, max_iters, gap_tol, hessian, rows)
    hand_over = ~info_n.converged & (info_n.num_steps < max_iters)

    def squarem(_):
        p, info = _em_core.run(update, _em_core.start_point(p_n, 1e-6), tol, max_iters, True, gain)
        g, _ = grad(p)
        gap = certificate(p, g, inverted.astype(p.dtype), jnp.asarray(n, p.dtype))
        return p, _em_core.EMInfo(info_n.num_steps + info.num_steps, info_n.num_evals + info.num_evals + 1,
                                  info.converged, info.loglik, info.loglik_change, gap)

    return jax.lax.cond(hand_over, squarem, lambda _: (p_n, info_n), None)
