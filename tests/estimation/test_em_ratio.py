"""EM on support-ratio reports (``_em_ratio``: OLH, SS, Wheel and their GLUTF mechanisms) by projected Newton on
the ``Reduced`` problem: the MLE in a few steps, certified, with the full log-likelihood in ``EMInfo``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.estimation import _em_ratio
from uldp_jax.estimation._support import bucket
from uldp_jax.mechanisms.core import _estimation

D, N = 48, 4000
MECHS = [ul.OLH(D, 2.0), ul.ULH(D, list(range(8)), 1.0), ul.USS(D, list(range(10)), 1.0),
         ul.glutf(ul.SS(8, 1.0, k=2), D, list(range(8)))]


def _packed(mech, ys):
    form = jax.eval_shape(_em_ratio.likelihood_of(mech).report, ys)
    chunk = _em_ratio.chunk_rows(form.bits.shape[1], N)
    rows = chunk * bucket(-(-N // chunk))
    return _em_ratio._packed_terms(mech, _em_ratio._pad_rows(ys, rows), jnp.int32(N), chunk)


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: type(m).__name__)
def test_newton_lands_on_a_fixed_point_of_em_in_float64(mech):
    """x64: EM maps from Newton's answer move it by < 1e-12 and gain nothing; few steps; the certificate holds;
    ``EMInfo.loglik`` is the full model's (the others' split added back), not the reduced problem's."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(D, 0.3))
    with jax.enable_x64(True):
        xs = jnp.asarray(rng.choice(D, size=N, p=p).astype(np.int32))
        ys = ul.perturb(jax.random.key(1), mech, xs)
        est, info = ul.estimation.em(mech, ys, return_info=True)
        assert est.dtype == jnp.float64 and bool(info.converged) and int(info.num_steps) <= 40, info
        assert float(info.gap) <= 1e-8
        update = jax.jit(_em_ratio.ratio_update(_packed(mech, ys)))
        q, ll0 = update(est)
        np.testing.assert_allclose(float(info.loglik), float(ll0), rtol=0, atol=1e-12)
        for _ in range(200):
            q, ll = update(q)
        assert float(jnp.max(jnp.abs(q - est))) < 1e-10 and float(ll - ll0) < 1e-12


def test_others_with_no_invertible_report_share_their_total_uniformly():
    """ULH with a non-sensitive item nobody reported: the others' MLE total is split by their invertible counts
    (0 for that item), and the estimate sums to 1 (float32)."""
    mech = ul.ULH(12, [0, 1, 2], 1.0)
    xs = jnp.asarray(np.r_[np.zeros(300), np.ones(300), np.full(300, 5)].astype(np.int32))  # items 3, 4, 6.. absent
    est, info = ul.estimation.em(mech, ul.perturb(jax.random.key(0), mech, xs), return_info=True)
    est = np.asarray(est)
    assert bool(info.converged) and abs(est.sum() - 1.0) < 1e-5
    assert np.all(est[[3, 4, 6, 7, 8, 9, 10, 11]] == 0.0)
    # item 5 (p = 1/3, well inside (0, 1)) is not below 1/3 by more than the per-check level allows (one-sided), its
    # SE that of emp's own debias (iid users: it bounds this fixed sample's from above; ~0.030)
    p = np.where(np.isin(np.arange(12), [0, 1, 5]), 1 / 3, 0.0)
    with jax.enable_x64(True):
        se = float(np.sqrt(_estimation.debias_variance(mech, jnp.asarray(p), jnp.float64(xs.size))[5]))
    assert testing.at_most(1 / 3 - est[5], 0.0, se), (est[5], se)


@pytest.mark.parametrize("mech", MECHS, ids=lambda m: type(m).__name__)
def test_exact_hessian_products_and_model_against_the_explicit_likelihood_rows(mech):
    """``ratio_hessian``: ``G v`` equals :math:`\\sum_i c_i (L_i \\cdot v) L_i` from the explicit ``n x d`` rows
    :math:`L_i` (x64, to 1e-10 relative), and the model's diagonal is ``G``'s exact diagonal; in ``_em_reduced``'s
    coordinates (``pick``) the model's off-diagonal all-items part is ``G``'s too."""
    rng = np.random.default_rng(5)
    with jax.enable_x64(True):
        xs = jnp.asarray(rng.integers(0, D, N).astype(np.int32))
        ys = ul.perturb(jax.random.key(2), mech, xs)
        rep = _packed(mech, ys)
        p = jnp.asarray(rng.dirichlet(np.ones(D)))
        v = jnp.asarray(rng.normal(size=D))
        hvp, model = _em_ratio.ratio_hessian(rep)
        nb, items = rep.bits.shape[-1], np.asarray(rep.items)
        bits = np.asarray(jax.vmap(lambda b: jnp.unpackbits(b, bitorder="little"))(rep.bits.reshape(-1, nb)))
        bits = bits[:, : items.size].astype(bool)
        low, high, other, w = (np.asarray(a).reshape(-1) for a in (rep.low, rep.high, rep.other, rep.weight))
        L = np.repeat(other[:, None], D, axis=1)
        L[:, items] = np.where(bits, high[:, None], low[:, None])
        den = L @ np.asarray(p)
        c = np.where(w > 0, w / np.where(w > 0, den, 1.0) ** 2, 0.0)
        G = (L * c[:, None]).T @ L
        np.testing.assert_allclose(np.asarray(hvp(p, v)), G @ np.asarray(v), rtol=1e-10, atol=1e-10 * np.abs(G).max())
        m = model(p)
        np.testing.assert_allclose(np.asarray(m.diagonal()), np.diag(G), rtol=1e-10)
        np.testing.assert_allclose(float(m.c0), float(np.sum(c * low * low)), rtol=1e-10)
