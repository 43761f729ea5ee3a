"""``uldp_jax/experiments/_murakami_study.py``: 001's population (``population``), no-privacy error (``nonprivate``)."""

import dataclasses

import jax
import numpy as np
import pytest

from uldp_jax.experiments import _datasets
from uldp_jax.experiments import _murakami_study as S


def test_population_of_a_proxy_and_of_records():
    """A proxy's population is N people whose histogram is N p rounded by largest remainder (within 1 person per
    item); real data (``counts``) are their own population; n above the population is refused."""
    ds = _datasets.resolve(["census"], None, 1000)[0]
    xs = S.population(ds, 1000)
    counts = np.bincount(xs, minlength=ds.d)
    assert xs.dtype == np.int32 and xs.size == 2000 and np.all(np.abs(counts - 2000 * ds.p) < 1)
    assert S.population(ds, 1000, 5001).size == 5001
    real = dataclasses.replace(ds, counts=np.arange(ds.d))
    np.testing.assert_array_equal(np.bincount(S.population(real, 10), minlength=ds.d), np.arange(ds.d))
    with pytest.raises(ValueError, match="population"):
        S.population(dataclasses.replace(ds, counts=np.ones(ds.d, int)), 10**6)


def test_nonprivate_error_population_vs_iid():
    """The no-privacy error of a half of the population is about 1/sqrt(2) of the iid one (l2: half), 001's gap."""
    p = np.full(50, 1 / 50)
    counts = np.full(50, 40)  # N = 2000
    pop, _, _ = S.nonprivate(jax.random.key(0), 1000, 400, "l2sq", counts=counts, min_reps=400)
    iid, _, _ = S.nonprivate(jax.random.key(0), 1000, 400, "l2sq", p=p, min_reps=400)
    exact_iid = float(np.sum(p * (1 - p))) / 1000
    assert iid == pytest.approx(exact_iid, rel=0.1)
    assert pop == pytest.approx(exact_iid * 1000 / 1999, rel=0.1)
