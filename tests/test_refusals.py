"""Issue 22's last open reproducers: large work is refused before it allocates, and the study runner validates
every grid point like the other entry points (the message names the grid argument and the bad index)."""

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


def test_simulate_refuses_a_domain_whose_vectors_do_not_fit():
    with pytest.raises(ValueError, match=r"float64\[d\].*7.45 GiB"):
        ul.simulate(jax.random.key(0), ul.GRR(10**9, 1.0), xs=np.arange(10), reps=1)


def test_em_refuses_a_per_report_likelihood_too_large_to_iterate():
    mech = ul.OLH(10**4, 1.0)
    ys = ul.perturb(jax.random.key(0), mech, np.arange(2 * 10**4) % 10**4)
    with pytest.raises(ValueError, match=r"20000 x 10000 .*method='emp'"):
        ul.estimate(mech, ys, "em")


@pytest.mark.parametrize("call,err", [
    (lambda: ul.to_compact(np.array([1, 0, 1])), ValueError),  # one report: to_compact takes a batch
    (lambda: ul.to_compact(np.array([[2, 0]])), ValueError),  # not bits
    (lambda: ul.to_compact(np.ones((2, 2), np.float32)), TypeError),
    (lambda: ul.to_compact(np.eye(3, dtype=bool), width=0), ValueError),
    (lambda: ul.to_dense("x"), TypeError),
    (lambda: ul.to_dense(np.ones((2, 2, 2), bool)), ValueError),
], ids=["1-D", "values", "float", "width", "str", "3-D"])
def test_compact_converters_check_their_input(call, err):
    with pytest.raises(err, match="ys|width"):
        call()


def test_compact_converters_round_trip():
    bits = np.eye(5, dtype=bool)[[0, 3, 4]]
    np.testing.assert_array_equal(ul.to_dense(ul.to_compact(bits)), bits)
    np.testing.assert_array_equal(ul.to_dense(ul.to_compact(bits.astype(np.int32))), bits)
