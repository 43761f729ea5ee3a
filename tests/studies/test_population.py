"""001's sampling model in ``ul.study(..., sample="population")``: exact uniform subsets, scored against the
population, against hand computations (the finite-population correction (N - n) / (N - 1))."""

import itertools

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing
from uldp_jax.studies import _metrics, _population

POP = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2], np.int32)  # N = 10 users over d = 3 items
P_POP = np.bincount(POP, minlength=3) / POP.size


def test_subsets_are_uniform():
    """Every 2-subset of 6 users is equally likely (chi-square over the 15 subsets, 6000 draws), and a subset of
    all users is a permutation."""
    keys = jax.random.split(jax.random.key(0), 6000)
    draws = [_population.subset(k, np.arange(6, dtype=np.int32), 2) for k in keys]
    pairs = {c: i for i, c in enumerate(itertools.combinations(range(6), 2))}
    counts = np.bincount([pairs[tuple(sorted(r.tolist()))] for r in draws], minlength=15)
    assert testing.fits(testing.chi_square(counts, np.full(15, 1 / 15)))
    whole = _population.subset(jax.random.key(1), np.arange(1000, dtype=np.int32), 1000)
    assert whole.dtype == np.int32 and sorted(whole.tolist()) == list(range(1000))


def test_subsets_follow_the_key():
    """Same key, same subset; another key (fold_in), another subset; raw uint32[2] keys work too."""
    pop = np.arange(50, dtype=np.int32)
    k = jax.random.key(3)
    np.testing.assert_array_equal(_population.subset(k, pop, 10), _population.subset(k, pop, 10))
    assert not np.array_equal(_population.subset(k, pop, 10), _population.subset(jax.random.fold_in(k, 1), pop, 10))
    np.testing.assert_array_equal(_population.subset(jax.random.key_data(k), pop, 10), _population.subset(k, pop, 10))


def _hand_l2(n):
    """E||p_subset - p_pop||^2 = sum_x p_x (1 - p_x) / n * (N - n) / (N - 1), by enumerating all subsets."""
    N = POP.size
    errs = [np.sum((np.bincount(POP[list(c)], minlength=3) / n - P_POP) ** 2)
            for c in itertools.combinations(range(N), n)]
    exact = float(np.mean(errs))
    assert exact == pytest.approx(float(np.sum(P_POP * (1 - P_POP))) / n * (N - n) / (N - 1), rel=1e-12)
    return exact


def test_population_error_matches_the_hand_computation():
    """With (numerically) no privacy noise, GRR at eps = 30, the error is the subset's own: its mean over
    repetitions matches the enumeration of all C(10, 4) subsets, and at n = N it is zero."""
    res = ul.study(jax.random.key(0), {"GRR": lambda eps: ul.GRR(3, eps)}, eps=[30.0], n=[4, 10], reps=200,
                   xs=POP, sample="population", metrics=("l2",))
    r4, r10 = res.rows()
    assert r4["sample"] == "population" and r4["n"] == 4
    assert testing.within_se(r4["mean"], _hand_l2(4), r4["se"], dof=199)
    assert r4["theory"] == pytest.approx(_hand_l2(4), rel=1e-4)  # the fixed-model noise is ~1e-13 here
    assert r10["mean"] < 1e-12 and r10["theory"] < 1e-12


def test_population_theory_is_fixed_plus_the_subset_error():
    mech = ul.URR(3, (0,), 1.0)
    v, _ = _metrics.item_variance(mech, P_POP, 4, "population", 10)
    fixed = np.asarray(ul.theory.item_variance(mech, P_POP, 4, "fixed"))
    np.testing.assert_allclose(v, fixed + P_POP * (1 - P_POP) / 4 * 6 / 9, rtol=1e-6)


def test_population_matches_theory_with_noise():
    res = ul.study(jax.random.key(2), {"uRR": lambda eps: ul.URR(3, (0,), eps)}, eps=[0.5, 2.0], n=[5],
                   reps=200, xs=POP, sample="population", metrics=("mse", "l2"))
    for r in res.rows():
        assert testing.within_se(r["mean"], r["theory"], r["se"], dof=199), r


def test_population_per_repetition_key_schedule():
    """Repetition r: subset from fold_in(fold_in(key_mj, r), 0), engine call fold_in(fold_in(key_mj, r), 1)."""
    key = jax.random.key(5)
    res = ul.study(key, {"GRR": lambda eps: ul.GRR(3, eps)}, eps=[1.0], n=[6], reps=3, xs=POP, sample="population")
    key_mj = jax.random.fold_in(jax.random.fold_in(key, 0), 0)
    vals = []
    for r in range(3):
        key_r = jax.random.fold_in(key_mj, r)
        sub = _population.subset(jax.random.fold_in(key_r, 0), POP, 6)
        sim = ul.simulate(jax.random.fold_in(key_r, 1), ul.GRR(3, 1.0), xs=sub, reps=1)
        vals.append(_metrics.evaluate("mse", "mse", np.asarray(sim.estimates["emp"])[0], P_POP))
    np.testing.assert_array_equal(res.values[0], np.asarray(vals))


@pytest.mark.slow
def test_population_on_the_per_user_path():
    """The same model through the per-user path (the route of mechanisms without a count sampler, e.g. OLH)."""
    res = ul.study(jax.random.key(6), {"GRR": lambda eps: ul.GRR(3, eps)}, eps=[1.0], n=[5], reps=200, xs=POP,
                   sample="population", metrics=("l2",), simulate_options={"path": "per_user"})
    (r,) = res.rows()
    assert testing.within_se(r["mean"], r["theory"], r["se"], dof=199), r


@pytest.mark.slow
def test_population_estimates_all_repetitions_in_one_call():
    """Stats-based methods (here EM on GRR's histogram, over a 2-point grid) estimate the stacked statistics of
    every repetition at once: the same numbers as one ``ul.simulate`` per repetition (same keys) up to float32
    rounding, as the batch has another shape."""
    key = jax.random.key(7)
    res = ul.study(key, {"GRR": lambda eps: ul.GRR(3, eps)}, eps=[0.5, 2.0], n=[6], reps=4, xs=POP,
                   sample="population", methods=("emp", "em"), metrics=("l1",))
    key_mj = jax.random.fold_in(jax.random.fold_in(key, 0), 0)
    grid = jax.tree_util.tree_map(lambda *ls: jax.numpy.stack(ls), ul.GRR(3, 0.5), ul.GRR(3, 2.0))
    want = {m: np.zeros((2, 4)) for m in ("emp", "em")}
    for r in range(4):
        key_r = jax.random.fold_in(key_mj, r)
        sub = _population.subset(jax.random.fold_in(key_r, 0), POP, 6)
        sim = ul.simulate(jax.random.fold_in(key_r, 1), grid, xs=sub, reps=1, methods=("emp", "em"))
        for m in want:
            want[m][:, r] = np.abs(np.asarray(sim.estimates[m])[:, 0] - P_POP).sum(-1)
    got = {(row["method"], row["eps"]): res.values[i] for i, row in enumerate(res.rows())}
    for m in want:
        for g, e in enumerate((0.5, 2.0)):
            np.testing.assert_allclose(got[(m, e)], want[m][g], rtol=1e-5, atol=1e-6)
