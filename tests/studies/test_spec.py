"""``uldp_jax.studies._spec``: the study runner validates every grid point like the other entry points (the message
names the grid argument and the bad index)."""

import jax
import numpy as np
import pytest

import uldp_jax as ul

from tests.outside_mechanisms import Keep

P6 = np.full(6, 1 / 6)
FACTORIES = {
    "library": lambda eps: ul.GRR(6, eps),
    "outside": lambda eps: Keep(6, eps),  # no constructor check of its own
    "tree_map": lambda eps: jax.tree.map(lambda v: v * eps, ul.GRR(6, 1.0)),  # no __init__ ran
}


@pytest.mark.parametrize("make", FACTORIES.values(), ids=FACTORIES.keys())
@pytest.mark.parametrize("bad", [-1.0, 0.0, 1e-9, 150.0, float("inf"), float("nan")])
def test_study_refuses_a_bad_grid_point_naming_the_argument_and_index(make, bad):
    if not np.isfinite(bad):  # the study's own grid check refuses non-finite values first
        with pytest.raises(ValueError, match=r"to be finite, got eps\[1\]="):
            ul.study(jax.random.key(0), {"M": make}, eps=[0.5, bad, 2.0], n=100, reps=2, p=P6)
        return
    with pytest.raises(ValueError, match=r"study grid point eps\[1\]=") as e:
        ul.study(jax.random.key(0), {"M": make}, eps=[0.5, bad, 2.0], n=100, reps=2, p=P6)
    assert "mechanisms['M']" in str(e.value)
