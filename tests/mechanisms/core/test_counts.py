"""Exact binomial draws of the count samplers (``mechanisms.core._counts.binomial``) against the exact law, at the extremes.

One jitted call draws every case at once (one compile). Thresholds: chi-square goodness of fit against
``scipy.stats.binom`` (cells with expected count < 5 pooled into the tails) and standardized means and variances
through ``uldp_jax.testing`` (``fits`` / ``within_se``, the suite's per-check level). Fixed keys.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats as sps

from uldp_jax import testing
from uldp_jax.mechanisms.core import _counts

R = 40000  # draws per case
# (n, p): small n, p near 0 and 1, the inversion/BTRS boundary (n q = 10 and just below), huge n
CASES = [(1.0, 0.5), (5.0, 0.3), (7.0, 0.97), (20.0, 0.999), (30.0, 0.2), (99.0, 0.1), (100.0, 0.1),
         (50.0, 0.5), (1e3, 0.999), (1e6, 2e-5), (1e9, 1e-8), (1e9, 0.3), (3e12, 0.5)]


@pytest.fixture(scope="module")
def draws():
    with _counts.x64_context():
        ns = jnp.asarray([c[0] for c in CASES], jnp.float64)[:, None]
        ps = jnp.asarray([c[1] for c in CASES], jnp.float64)[:, None]
        fn = jax.jit(lambda k, n, p: _counts.binomial(k, jnp.broadcast_to(n, (len(CASES), R)), p))
        return np.asarray(fn(jax.random.key(2026), ns, ps))


def _binned_chisquare(x, n, p, bins=40):
    """Chi-square over integer bins of about equal exact probability (right edges from the exact quantiles, and
    each one's predecessor so that a point mass gets its own bin); adjacent bins merged up to >= 5 expected."""
    q = sps.binom.ppf(np.linspace(0, 1, bins + 1)[1:-1], n, p)
    edges = np.unique(np.clip(np.concatenate([q - 1, q, [n]]), -1, n))  # right edges (inclusive), last = n
    probs = np.diff(np.concatenate([[0.0], sps.binom.cdf(edges, n, p)]))
    observed = np.bincount(np.searchsorted(edges, x, side="left"), minlength=edges.size)
    obs, exp, o_acc, e_acc = [], [], 0, 0.0
    for o, e in zip(observed, probs * x.size):
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= 5:
            obs.append(o_acc), exp.append(e_acc)
            o_acc, e_acc = 0, 0.0
    obs[-1] += o_acc
    exp[-1] += e_acc
    return sps.chisquare(obs, np.asarray(exp) * x.size / np.sum(exp))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_binomial_law(draws, case):
    n, p = CASES[case]
    x = draws[case]
    assert np.all(x == np.round(x)) and x.min() >= 0 and x.max() <= n
    mean, var = n * p, n * p * (1 - p)
    if n <= 1e9:  # scipy's CDF is exact enough up to here
        assert testing.fits(_binned_chisquare(x, n, p)), (n, p)
    assert testing.within_se(x.mean(), mean, np.sqrt(var / R)), (n, p, x.mean(), mean)
    # variance: the sample variance has SE ~ var sqrt(2 / R) (normal kurtosis; excess kurtosis is O(1 / var))
    kurt = (1 - 6 * p * (1 - p)) / var if var > 0 else 0.0
    if 2 + kurt > 0.1:  # Bernoulli(1/2) has an almost deterministic sample variance (the chi-square covers it)
        assert testing.within_se(x.var(), var, var * np.sqrt((2 + kurt) / R)), (n, p, x.var(), var)


def test_binomial_wrong_law_rejected(draws):
    x = draws[CASES.index((50.0, 0.5))]
    assert _binned_chisquare(x, 50.0, 0.52).pvalue < 1e-6
    x = draws[CASES.index((1e9, 0.3))]
    assert _binned_chisquare(x, 1e9, 0.3 + 2e-6).pvalue < 1e-6
