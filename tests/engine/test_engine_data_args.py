"""simulate's data arguments: the error says which of xs / p is missing or doubled."""

import jax
import numpy as np
import pytest

import uldp_jax as ul


def test_neither_xs_nor_p_names_both_options():
    with pytest.raises(ValueError, match="Got neither xs nor p"):
        ul.simulate(jax.random.key(0), ul.GRR(4, 1.0), reps=1)


def test_both_xs_and_p_refused():
    with pytest.raises(ValueError, match="Got both xs and p"):
        ul.simulate(jax.random.key(0), ul.GRR(4, 1.0), xs=np.zeros(3, np.int32), p=np.ones(4) / 4, reps=1)
