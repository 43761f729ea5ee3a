"""ul.recommend: ranking by closed-form MSE and communication (003 §5.4, Table 1, corrected)."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import theory as th


@pytest.mark.parametrize("d,s,eps,tn", [(1200, 424, 5.0, 0.56), (10, 3, 2.0, 0.78)])
def test_recommend_ranking(d, s, eps, tn):
    recs = ul.recommend(d, s, eps, tn, n=1000.0)
    assert [r.mse for r in recs] == sorted(r.mse for r in recs)
    by = {r.name.split(" ")[0]: r for r in recs}
    assert {"uRR", "uRAP", "uSS", "uUE", "uLH", "uWheel"} <= set(by)
    p = np.where(np.arange(d) < s, (1 - tn) / s, tn / (d - s))
    e = np.exp(eps)
    with jax.enable_x64(True):
        for r in recs:
            assert r.comm_bits == ul.mechanisms.core.comm_bits(r.mechanism)
            if d > 64:
                continue  # exact channels below; the closed forms recommend uses are checked against them there
            m = r.mechanism
            if r.name.startswith("uLH"):  # same risk for any uniform hash family: the full one is enumerable
                m = ul.ULH(d, m.sensitive, eps, g=m.g, family="full")
            if r.name.startswith("uWheel"):  # 003 eq 28 with hand-derived p*, q*, z* (no enumerable channel)
                l = float(np.asarray(m.l))
                want = float(th.pure_uldp_mse(l * e / (l * e + 1 - l), l, (e - 1) / (e + s - 1), s, tn, 1000.0))
            else:  # the exact channel's moments: independent of the closed forms recommend ranks by
                want = th.exact_mse(m, p, 1000.0, "fixed")
            np.testing.assert_allclose(r.mse, want, rtol=1e-9, err_msg=r.name)
    urap = [r for r in recs if r.name.startswith("uRAP")]
    assert "tuned" in urap[0].name  # the tuned theta is never worse than 001's default
    assert by["uSS"].mse <= by["uRR"].mse * (1 + 1e-12)  # k = 1 is uRR
    np.testing.assert_allclose(by["uUE"].mse, by["uWheel"].mse, rtol=1e-9)  # same risk at the optimum (docs/errata.md#003-ulh-and-uwheel-as-published-violate-uldp)
    comm = ul.recommend(d, s, eps, tn, sort_by="comm")
    assert [r.comm_bits for r in comm] == sorted(r.comm_bits for r in comm)


def test_recommend_census_order():
    recs = ul.recommend(1200, 424, 5.0, 0.56, include_ldp=True)
    names = [r.name.split(" ")[0] for r in recs]
    assert names[0] == "uSS"
    # every ULDP mechanism with a tuned parameter beats every LDP baseline here
    worst_uldp = max(r.mse for r in recs if not r.ldp and r.name.split(" ")[0] in ("uSS", "uUE", "uLH", "uWheel"))
    assert worst_uldp < min(r.mse for r in recs if r.ldp)


def test_recommend_bad_input():
    with pytest.raises(ValueError, match="theta_n"):
        ul.recommend(10, 3, 1.0, 1.2)
    with pytest.raises(ValueError, match="sensitive"):
        ul.recommend(10, 10, 1.0, 0.5)
    with pytest.raises(ValueError, match="sensitive"):
        ul.recommend(10, range(10), 1.0, 0.5)
    with pytest.raises(ValueError, match="eps"):
        ul.recommend(10, 3, -1.0, 0.5)
    with pytest.raises(ValueError, match="sort_by"):
        ul.recommend(10, 3, 1.0, 0.5, sort_by="speed")
    with pytest.raises(ValueError, match="model"):
        ul.recommend(10, 3, 1.0, 0.5, model="x")
