"""EM is exact up to eps = 100 (float32: t = e^-eps underflows beyond ~87) and refuses bad init/throw options."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul

XS = jnp.arange(3000, dtype=jnp.int32) % 8


@pytest.mark.parametrize("eps", [85.0, 87.0, 90.0, 100.0])
def test_oue_em_at_large_eps_is_the_count_mle(eps):
    """At eps >= 85 an OUE report holds its own bit w.p. 1/2 and nothing else (q < 1e-36): the MLE is the share
    of each item among the non-empty reports."""
    mech = ul.OUE(8, eps)
    ys = ul.perturb(jax.random.key(1), mech, XS)
    c = np.asarray(mech.aggregate(ys), np.float64)
    p_hat = np.asarray(ul.estimate(mech, ys, "em"), np.float64)
    np.testing.assert_allclose(p_hat, c / c.sum(), atol=1e-5)


@pytest.mark.parametrize("eps", [85.0, 100.0])
def test_glutf_oue_em_at_large_eps(eps):
    mech = ul.UUE(8, [0, 3, 6], eps)
    ref = ul.UUE(8, [0, 3, 6], 60.0)  # e^-60 is still a normal float32: the old form is exact here
    ys, ys_ref = (ul.perturb(jax.random.key(2), m, XS) for m in (mech, ref))
    p_hat = np.asarray(ul.estimate(mech, ys, "em"))
    assert np.all(np.isfinite(p_hat)) and abs(p_hat.sum() - 1) < 1e-5
    np.testing.assert_allclose(p_hat, np.asarray(ul.estimate(ref, ys_ref, "em")), atol=1e-5)


@pytest.mark.parametrize("mech", [ul.GRR(4, 1.0), ul.SS(4, 1.0, k=2), ul.RAPPOR(4, 1.0)], ids=lambda m: type(m).__name__)
def test_bad_init_and_throw(mech):
    ys = ul.perturb(jax.random.key(0), mech, jnp.arange(100, dtype=jnp.int32) % 4)
    for bad, exc in (("abc", TypeError), ([True, False, True, True], TypeError), ([1, 2, 3, np.nan], ValueError),
                     ([[0.25] * 4], ValueError), ([0, 0, 0, 0], ValueError), ([1, -1, 1, 1], ValueError)):
        with pytest.raises(exc, match="init"):
            ul.estimate(mech, ys, "em", init=bad)
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="throw"):
            ul.estimate(mech, ys, "em", throw=bad)


def _fixed_oue_reports() -> np.ndarray:
    """Fixed ``bool[n, 6]`` reports: one-bit reports of every item (unequal counts), empty reports (no
    information) and two-bit reports (improbable at large eps, but valid: they tie their two items, so the MLE is
    not a share of counts)."""
    rows = [np.eye(6, dtype=bool)[x] for x, c in enumerate([30, 21, 14, 9, 6, 4]) for _ in range(c)]
    rows += [np.zeros(6, bool)] * 40
    for a, b, c in [(0, 5, 7), (3, 4, 5), (1, 2, 3), (4, 5, 6)]:
        rows += [np.isin(np.arange(6), [a, b])] * c
    return np.stack(rows)


def _exact_oue_mle(ys: np.ndarray, eps: float) -> np.ndarray:
    """The MLE on the simplex of the exact OUE product likelihood (keep 1/2, flip q = 1/(e^eps + 1)), independent
    of the library: float64 NumPy EM on per-report factors scaled by their maximum, run until the KKT conditions
    hold to 1e-12 (at eps = 100, q ~ e^-100 is a normal float64)."""
    log_q, log_1q = -eps - np.log1p(np.exp(-eps)), -np.log1p(np.exp(-eps))
    y = ys.astype(np.float64)
    ones, zeros = y.sum(1, keepdims=True), (1 - y).sum(1, keepdims=True)
    # bit x: probability 1/2 either way; every other bit j: q if set, 1 - q if not
    log_l = np.log(0.5) + (ones - y) * log_q + (zeros - (1 - y)) * log_1q
    r = np.exp(log_l - log_l.max(axis=1, keepdims=True))
    p = np.full(6, 1 / 6)
    for _ in range(100_000):
        grad = (r / (r @ p)[:, None]).mean(axis=0)  # KKT: grad_x = 1 where p_x > 0 (and <= 1 elsewhere)
        p = p * grad
        if np.max(np.abs(grad - 1)) < 1e-12:
            break
    assert np.max(np.abs(grad - 1)) < 1e-12 and abs(p.sum() - 1) < 1e-12
    return p


@pytest.mark.parametrize("eps", [50.0, 80.0, 100.0])
def test_oue_em_is_the_exact_mle_up_to_eps_100(eps):
    """Issue 53 item 4: EM equals the exact MLE (computed here in float64 from the product likelihood) to 1e-6 up to
    eps = 100 on fixed reports; a miss against the truth there is sampling error, not EM's."""
    ys = _fixed_oue_reports()
    p_exact = _exact_oue_mle(ys, eps)
    counts = ys[ys.sum(1) == 1].sum(0)
    assert np.max(np.abs(p_exact - counts / counts.sum())) > 1e-2  # the two-bit reports move it off the shares
    p_hat = np.asarray(ul.estimate(ul.OUE(6, eps), ys, "em"), np.float64)
    np.testing.assert_allclose(p_hat, p_exact, atol=1e-6, rtol=0)
