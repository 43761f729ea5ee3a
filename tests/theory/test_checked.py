"""``uldp_jax/theory/_checked.py``: ``ul.theory``'s closed forms take an array of eps (a grid) and name its first bad
entry, and likewise the bad index of their other arguments (theta_n, n, p)."""

from __future__ import annotations

import numpy as np
import pytest

from uldp_jax import theory as th

BAD = {"negative": -1.0, "zero": 0.0, "tiny": 1e-9, "huge": 150.0, "inf": np.inf, "nan": np.nan}


CLOSED_FORMS = {
    "grr_nmse": lambda e: th.grr_nmse(e, 6),
    "olh_nmse": lambda e: th.olh_nmse(e, 6, 3),
    "urr_nmse": lambda e: th.urr_nmse(e, 2, 0.5),
    "optimal_theta": lambda e: th.optimal_theta(e, 2, 0.5),
    "rr_l2": lambda e: th.rr_l2(np.full(6, 1 / 6), e, 100),
}


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("name", list(CLOSED_FORMS))
def test_closed_forms_on_an_eps_array_name_the_bad_index(name, bad):
    """``ul.theory``'s closed forms take an array of eps (a grid) and name its first bad entry."""
    with pytest.raises(ValueError, match=r"eps=.*\(bad entry: eps\[2\]="):
        CLOSED_FORMS[name](np.array([0.5, 1.0, BAD[bad], 2.0]))


def test_closed_forms_name_the_bad_index_of_other_arguments():
    with pytest.raises(ValueError, match=r"theta_n\[1\]=1.5"):
        th.urr_nmse(1.0, 2, np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"n\[2\]=-5"):
        th.nonprivate_l2(np.full(4, 0.25), np.array([10.0, 20.0, -5.0]))
    with pytest.raises(ValueError, match=r"p.sum\(-1\)\[1\]"):
        th.nonprivate_l2(np.array([[0.5, 0.5], [0.5, 0.6]]), 10.0)
