"""SS's iid count sampler (``mechanisms.subset._ss_counts``): the exact joint law of the whole count vector.

The moments tests (``tests/engine/test_counts_path.py``) check means and covariances; here the sampled count vectors of a few
users are tested cell by cell against their exact joint law (the convolution of the users' report laws over all
k-subsets, from the channel): one ``ul.testing.chi_square`` per case at the suite's level ``ul.testing.ALPHA``.
Populations with different ``p`` (uSS's base) and narrow windows (several windows a step) are included.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.mechanisms.subset import _ss_counts

R = 20000


def _report_law(mech, p):
    """``{count vector: prob}`` of one user's support indicator drawn iid from ``p``."""
    Q = np.asarray(ul.channel(mech).Q, np.float64)
    bits = mech._subsets().astype(np.int64)
    w = np.asarray(p, np.float64) @ Q
    return {tuple(b): pr for b, pr in zip(bits, w)}


def _convolve(a, b):
    out = {}
    for (u, pu), (v, pv) in itertools.product(a.items(), b.items()):
        key = tuple(np.add(u, v))
        out[key] = out.get(key, 0.0) + pu * pv
    return out


def _check(mech, ns, ps, key, width=None, monkeypatch=None):
    if width is not None:
        monkeypatch.setattr(_ss_counts, "window_width", lambda d, k: width)
    law = {tuple([0] * mech.d): 1.0}
    for n, p in zip(ns, ps):
        for _ in range(n):
            law = _convolve(law, _report_law(mech, p))
    with jax.enable_x64(True):
        fn = jax.jit(jax.vmap(lambda kk: _ss_counts.ss_counts_mixed(kk, mech, jnp.asarray(ns, jnp.float64),
                                                                     jnp.asarray(ps, jnp.float64))))
        draws = np.asarray(fn(jax.random.split(key, R))).astype(np.int64)
    cells = list(law)
    index = {c: i for i, c in enumerate(cells)}
    observed = np.zeros(len(cells) + 1)
    for row in map(tuple, draws):
        observed[index.get(row, len(cells))] += 1
    probs = np.append([law[c] for c in cells], 0.0)
    res = testing.chi_square(observed, probs)
    assert testing.fits(res), res


@pytest.mark.parametrize("d,k,eps", [(4, 2, 1.0), (5, 1, 0.5), (5, 3, 1.5), (4, 3, 0.3)])
def test_ss_counts_joint_law(d, k, eps):
    mech = ul.SS(d, eps, k=k)
    p = np.linspace(1.0, 2.0, d)[::-1] / np.linspace(1.0, 2.0, d).sum()
    _check(mech, [2], [p], jax.random.key(10 * d + k))


def test_ss_counts_joint_law_two_populations_zero_mass():
    mech = ul.SS(4, 1.0, k=2)
    ps = [[0.0, 0.5, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25]]  # zero-mass items (first and last) in one population
    _check(mech, [2, 1], ps, jax.random.key(3))


def test_ss_counts_joint_law_narrow_windows(monkeypatch):
    mech = ul.SS(5, 1.0, k=2)
    p = [0.1, 0.3, 0.2, 0.25, 0.15]
    _check(mech, [3], [p], jax.random.key(4), width=1, monkeypatch=monkeypatch)  # one bin per window
