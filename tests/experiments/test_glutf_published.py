"""``uldp_jax/experiments/_glutf_published.py``: the two parameter choices of 003's published-z uLH (the library's g
and 003's eq 49 g) against the corrected uLH. Deterministic (closed forms)."""

import numpy as np
import pytest

from uldp_jax.experiments import _datasets, _glutf, _glutf_published


@pytest.mark.parametrize("dataset,worse", [("foursquare25", 0.11), ("drug", 0.19)])
def test_eq49_g_published_ulh_is_worse_than_corrected_at_eps5(dataset, worse):
    """With 003's eq 49 g, published-z uLH at eps = 5 has ~11% (Foursquare) / ~19% (Drug) more MSE than the corrected
    uLH; with the library's g it has slightly less (the advantage its audit shows is not real)."""
    (ds,) = _datasets.resolve([dataset], None, None)
    mse = {lab: _glutf.theory_mse(_glutf.make(lab, ds.d, ds.sensitive, 5.0, ds.theta_n), ds.p, ds.n)
           for lab in ("uLH", "uLH (published z)", "uLH (published z, eq 49 g)")}
    assert mse["uLH (published z, eq 49 g)"] / mse["uLH"] - 1 == pytest.approx(worse, abs=0.02)
    assert mse["uLH (published z)"] < mse["uLH"]
    g49 = _glutf_published.eq49_g(5.0, ds.s, ds.theta_n)
    assert _glutf.make("uLH (published z, eq 49 g)", ds.d, ds.sensitive, 5.0, ds.theta_n).g == max(2, round(g49))
    e = np.exp(5.0)
    assert g49 == pytest.approx(e * np.sqrt((e * (ds.s + ds.theta_n - 1) - ds.theta_n + 1) / (e * (e + ds.s - 1))) + 1)
