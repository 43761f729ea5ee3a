"""Every mechanism's constructor checks the same things the same way (one parametrized table)."""

import inspect

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import _validate

# name -> build(d, eps); sensitive sets and parameters are fixed and valid for d >= 2 (or 3). Not the registry's
# examples (tests/library_mechanisms.py): these calls leave d free and keep each constructor's eps-dependent
# defaults (SS's k, OLH's g, Wheel's l, UUE's p), which the registered examples fix.
BUILD = {
    "GRR": lambda d, e: ul.GRR(d, e), "URR": lambda d, e: ul.URR(d, [0], e), "OUE": lambda d, e: ul.OUE(d, e),
    "UE": lambda d, e: ul.UE(d, e), "RAPPOR": lambda d, e: ul.RAPPOR(d, e), "SUE": lambda d, e: ul.SUE(d, e),
    "URAP": lambda d, e: ul.URAP(d, [0], e), "UUE": lambda d, e: ul.UUE(d, [0], e), "SS": lambda d, e: ul.SS(d, e),
    "USS": lambda d, e: ul.USS(d, [0, 1], e), "OLH": lambda d, e: ul.OLH(d, e), "ULH": lambda d, e: ul.ULH(d, [0], e),
    "Wheel": lambda d, e: ul.Wheel(d, e), "UWheel": lambda d, e: ul.UWheel(d, [0], e),
    "HR": lambda d, e: ul.HR(d, e), "HadamardResponse": lambda d, e: ul.HadamardResponse(d, e),
    "HighLowHR": lambda d, e: ul.HighLowHR(d, [0], e),
    "BlockHR": lambda d, e: ul.BlockHR([range(d)], e), "PUM": lambda d, e: ul.PUM(d, [0], 1, e),
    "GLUTF": lambda d, e: ul.GLUTF(ul.GRR(2, e), d, [0, 1]),
    "CMS": lambda d, e: ul.CMS(d, e, k=2, m=4), "HCMS": lambda d, e: ul.HCMS(d, e, k=2, m=4),
    "RHR": lambda d, e: ul.RHR(d, e), "PIRAPPOR": lambda d, e: ul.PIRAPPOR(d, e), "RWS": lambda d, e: ul.RWS(d, e),
}
NAMES = sorted(BUILD)
D_OK = 4  # valid for every builder


@pytest.mark.parametrize("name", NAMES)
def test_valid_scalar_eps(name):
    for e in (1, 1.0, np.float32(1.0), np.float64(1.0), np.array(1.0), _validate.EPS_MIN, _validate.EPS_MAX):
        BUILD[name](D_OK, e)


# constructors that take d (BlockHR's comes from its blocks): asked of the constructor's signature
@pytest.mark.parametrize("name", [n for n in NAMES if "d" in inspect.signature(getattr(ul, n)).parameters])
@pytest.mark.parametrize("d,exc", [(1, ValueError), (0, ValueError), (-3, ValueError), (2.0, TypeError),
                                   (True, TypeError), ("4", TypeError), (None, TypeError)])
def test_bad_d(name, d, exc):
    with pytest.raises(exc, match="d"):
        BUILD[name](d, 1.0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps,exc", [
    (0.0, ValueError), (-1.0, ValueError), (float("nan"), ValueError), (float("inf"), ValueError),
    (_validate.EPS_MAX * 1.01, ValueError), (1e4, ValueError), (_validate.EPS_MIN / 2, ValueError),
    (np.ones((2, 2)), ValueError), ([[1.0]], ValueError), ("1", TypeError), (None, TypeError), (1j, TypeError),
    (True, TypeError),
])
def test_bad_eps(name, eps, exc):
    with pytest.raises(exc, match="eps"):
        BUILD[name](D_OK, eps)


@pytest.mark.parametrize("name", NAMES)
def test_eps_grid_is_accepted_or_refused_naming_eps(name):
    """A 1-D grid of eps builds a batched mechanism, or (where a default parameter needs one concrete eps)
    is refused with a ValueError that names eps and says what to pass."""
    try:
        m = BUILD[name](D_OK, np.array([0.5, 1.0]))
    except ValueError as e:
        assert "eps" in str(e), e
    else:
        leaves = [np.shape(v) for v in __import__("jax").tree_util.tree_leaves(m)]
        assert (2,) in leaves, leaves
