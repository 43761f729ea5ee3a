"""``uldp_jax/mechanisms/hashing/_sketch_forms.py``: the closed-form risks of Apple's count mean sketches (CMS, HCMS)
with Apple's estimator, exactly: the risk given the hashes against the exact channel moments, the hash-averaged
risk against the average of the exact risks over every hash table, and the fixed model's collision rows in chunks."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core import _estimation
from uldp_jax.mechanisms.hashing import _sketch_forms as forms

MECHS = {"CMS": ul.CMS, "HCMS": ul.HCMS}


@pytest.mark.parametrize("name", MECHS)
@pytest.mark.parametrize("model", ["iid", "fixed"])
def test_risk_given_the_hashes_is_the_exact_channels(name, model, x64):
    """``ul.theory.mse``/``item_variance`` (the instance's risk: variance plus the collisions' squared bias) equal
    the exact channel moments of Apple's estimator; ``estimator().variance`` is the channel's iid variance."""
    rng = np.random.default_rng(0)
    for d, k, m_, seed in [(5, 3, 4, 0), (7, 2, 8, 3), (6, 1, 2, 1)]:
        m = MECHS[name](d, 0.8, k=k, m=m_, seed=seed)
        for p in (np.full(d, 1.0 / d), rng.dirichlet(np.ones(d))):
            exact = ul.theory.exact_item_mse(m, p, 300.0, model=model, affine="mechanism")
            np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 300.0, model)), exact, rtol=1e-10)
            np.testing.assert_allclose(float(ul.theory.mse(m, p, 300.0, model)), exact.sum(), rtol=1e-10)
            if model == "iid":
                W, c = ul.theory.estimator_matrix(m, "mechanism")
                Q = ul.channel(m).Q
                q = p @ Q
                var = (q @ W**2 - (q @ W) ** 2) / 300.0
                np.testing.assert_allclose(np.asarray(_estimation.debias_variance(m, jnp.asarray(p), 300.0)), var,
                                           rtol=1e-10)


@pytest.mark.parametrize("name", MECHS)
@pytest.mark.parametrize("model", ["iid", "fixed"])
def test_hash_averaged_risk_is_the_mean_exact_risk_over_every_hash_table(name, model, x64):
    """``ul.theory.cms_item_mse``/``hcms_item_mse`` (Apple's model: k independent uniformly random functions
    [d] -> [m]) equal the average, over all ``m^(d k)`` hash tables, of the exact risk given the table; and the
    estimator is unbiased on that average."""
    d, k, m_, eps, n = 3, 2, 2, 0.9, 50.0
    p = np.array([0.5, 0.3, 0.2])
    collide, apart = (forms.cms_rates if name == "CMS" else forms.hcms_rates)(eps)
    funcs = list(itertools.product(range(m_), repeat=d))
    risks, means = [], []
    for rows in itertools.product(funcs, repeat=k):
        table = jnp.asarray(rows, jnp.int32)
        risks.append(np.asarray(forms.given_item_mse(collide, apart, table, m_, jnp.asarray(p), n, model)))
        a, b = forms.apple_affine(collide, apart, m_)
        fbar = apart + (collide - apart) * forms._cell_mass(table, m_, jnp.asarray(p))
        means.append(np.asarray((fbar - b) / a))
    closed = (ul.theory.cms_item_mse if name == "CMS" else ul.theory.hcms_item_mse)(eps, p, n, k, m_, model)
    np.testing.assert_allclose(np.asarray(closed), np.mean(risks, axis=0), rtol=1e-10)
    np.testing.assert_allclose(np.mean(means, axis=0), p, atol=1e-12)
    # and the table-given form is the exact channel's for a seed's table (the test above), so the chain is exact
    mech = MECHS[name](d, eps, k=k, m=m_, seed=4)
    np.testing.assert_allclose(
        np.asarray(forms.given_item_mse(collide, apart, jnp.asarray(mech.hashes()), m_, jnp.asarray(p), n, model)),
        ul.theory.exact_item_mse(mech, p, n, model=model, affine="mechanism"), rtol=1e-10)


def test_fixed_model_collision_rows_in_chunks(monkeypatch, x64):
    m = ul.CMS(9, 1.0, k=3, m=4, seed=1)
    p = np.random.default_rng(2).dirichlet(np.ones(9))
    whole = np.asarray(ul.theory.item_variance(m, p, 100.0, "fixed"))
    monkeypatch.setattr(forms, "ROW_CHUNK_ENTRIES", 2 * 3 * 9)  # two rows a chunk, a ragged last chunk
    np.testing.assert_allclose(np.asarray(ul.theory.item_variance(m, p, 100.0, "fixed")), whole, rtol=1e-13)
