"""For every mechanism with theory, the study's |z| of "emp" against ``ul.theory`` stays within the suite's
budget (``testing.within_se``: one check per row at the per-check level, Student t with reps - 1 dof).

mse and l2 are exact expectations; l1/tv use the normal approximation (001 Props 4, 7), checked at n large
enough for it (the l1 bias of the approximation is O(1/n) of the value, well below 4.5 standard errors here).
"""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

D = 8
SENS = (0, 2, 3)
P = np.random.default_rng(1).dirichlet(np.ones(D))
REPS = 200

COUNTS = {  # mechanisms with an exact counts path (iid model): cheap at any n
    "GRR": lambda eps: ul.GRR(D, eps),
    "OUE": lambda eps: ul.OUE(D, eps),
    "SUE": lambda eps: ul.SUE(D, eps),
    "RAPPOR": lambda eps: ul.RAPPOR(D, eps),
    "SS": lambda eps: ul.SS(D, eps),
    "HR": lambda eps: ul.HR(D, eps),
    "HighLowHR": lambda eps: ul.HighLowHR(D, SENS, eps),
    "BlockHR": lambda eps: ul.BlockHR([range(3), range(3, D)], eps),
    "uRR": lambda eps: ul.URR(D, SENS, eps),
    "uRAP": lambda eps: ul.URAP(D, SENS, eps),
    "uSS": lambda eps: ul.USS(D, SENS, eps),
    "uUE": lambda eps: ul.UUE(D, SENS, eps),
    "GLUTF(GRR)": lambda eps: ul.glutf(ul.GRR(len(SENS), eps), D, SENS),
}
PER_USER = {  # hashed mechanisms: per-user path (a compile each)
    "OLH": lambda eps: ul.OLH(D, eps),
    "Wheel": lambda eps: ul.Wheel(D, eps),
    "uLH": lambda eps: ul.ULH(D, SENS, eps),
    "uWheel": lambda eps: ul.UWheel(D, SENS, eps),
}


def _check(res):
    rows = [r for r in res.rows() if r["method"] == "emp"]
    assert rows and all(np.isfinite(r["theory"]) for r in rows)
    bad = [r for r in rows if not testing.within_se(r["mean"], r["theory"], r["se"], dof=REPS - 1)]
    assert not bad, bad


@pytest.mark.slow
def test_z_within_budget_counts_path():
    _check(ul.study(jax.random.key(0), COUNTS, eps=[0.5, 2.0], n=[20_000], reps=REPS, p=P,
                    metrics=("mse", "l2", "l1", "tv")))


@pytest.mark.slow
def test_z_within_budget_fixed_model():
    xs = np.repeat(np.arange(D), np.arange(1, D + 1) * 100).astype(np.int32)
    # the mechanisms with an exact count path in the fixed model too (SS/uSS run per user there)
    fixed = {k: v for k, v in COUNTS.items() if ul.fastpath.has_count_path(v(1.0))}
    _check(ul.study(jax.random.key(1), fixed, eps=[1.0], xs=xs, reps=REPS, metrics=("mse", "l2")))


@pytest.mark.slow
def test_z_within_budget_per_user_path():
    _check(ul.study(jax.random.key(2), PER_USER, eps=[1.0], n=[5000], reps=REPS, p=P,
                    metrics=("mse", "l2", "l1")))
