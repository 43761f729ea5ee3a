"""``uldp_jax/experiments/_claims.py``: the claim tests of the summaries ("X is best", "error decreases", agreement
within standard errors), one-sided at a stated level, Student t where the values give their repetitions.
Deterministic (no sampling)."""

import math

import pytest

from uldp_jax.experiments import _claims


def test_best_claim_is_a_bonferroni_one_sided_test():
    vals = {"a": (1.0, 0.1), "b": (2.0, 0.1), "c": (1.2, 0.1)}
    text = _claims.best(vals, "MSE")
    crit = _claims.z_one_sided(0.05 / 2)
    assert text.startswith("best MSE: a (1)") and "Bonferroni" in text
    assert ("holds" in text) == (math.hypot(0.1, 0.1) * crit < 0.2)  # closest: c, z = 0.2 / 0.141 = 1.41 < 1.96
    assert "not established" in text and "closest: c" in text
    assert "holds" in _claims.best({"a": (1.0, 0.01), "b": (2.0, 0.01)}, "MSE")
    assert "higher" not in _claims.best({"a": (0.9, 0.0), "b": (0.5, 0.0)}, "F1", higher_is_better=True)
    exact = _claims.best({"a": (1.0, 0.0), "b": (1.5, 0.0)}, "MSE")
    assert "exact values (no sampling error): holds" in exact
    tie = _claims.best({"uRR": (1.39e-9, 0.0), "uSS": (1.39e-9 * (1 + 1e-13), 0.0), "uUE": (2e-9, 0.0)}, "MSE")
    assert "tied with uSS (equal values)" in tie  # uSS with k = 1 is uRR: rounding must not make a winner


def test_decreasing_and_agree():
    seq = [("x", (3.0, 0.1)), ("y", (2.0, 0.1)), ("z", (1.95, 0.1))]
    text = _claims.decreasing(seq, "TV")
    assert "not established" in text and "y -> z" in text
    assert "holds" in _claims.decreasing(seq[:2], "TV")
    bad, k, crit = _claims.agree([1.0, 1.0, 5.0], [1.0, 1.1, 1.0], [0.1, 0.1, 0.0])
    assert (bad, k) == (0, 2) and crit == pytest.approx(_claims.z_one_sided(0.05 / 4))
    assert _claims.agree([1.0, 2.0], [1.0, 1.0], [0.1, 0.1])[0] == 1


@pytest.mark.parametrize("dof", [1, 2, 3, 9, 30, 999, 1001, 10**6])
@pytest.mark.parametrize("alpha", [0.05, 0.025, 0.05 / 3, 1e-6])
def test_t_critical_values_match_scipy(dof, alpha):
    from scipy import stats

    assert _claims.t_one_sided(alpha, dof) == pytest.approx(stats.t.isf(alpha, dof), rel=1e-8)
    assert _claims.z_one_sided(alpha, dof) == _claims.t_one_sided(alpha, dof)
    with pytest.raises(ValueError, match="dof"):
        _claims.t_one_sided(alpha, 0)


def test_values_that_give_their_repetitions_are_tested_with_student_t():
    """``(mean, se, reps)`` values (the 003/004 claims pass their rows' reps): t with the smallest reps - 1 dof;
    pairs, or a value without a usable reps, keep the normal limit."""
    gap = {"a": (1.0, 0.01, 3), "b": (1.0 + 2.5 * 0.01 * math.sqrt(2), 0.01, 5)}  # z = 2.5: normal holds, t(2) not
    assert _claims.sample_dof(gap.values()) == 2
    text = _claims.best(gap, "MSE")
    assert "t-tests (2 dof)" in text and "not established" in text
    assert "holds" in _claims.best({k: v[:2] for k, v in gap.items()}, "MSE")  # no reps: normal, z > 1.64
    assert _claims.sample_dof([(1.0, 0.1, 10), (2.0, 0.1, None)]) is None
    assert _claims.sample_dof([(1.0, 0.1, "30"), (2.0, 0.1, "100")]) == 29  # CSV text
    seq = [("x", (3.0, 0.1, 2)), ("y", (2.0, 0.1, 2)), ("z", (1.0, 0.1, 2))]  # z = 7.1 per step: t(1) needs 12.7
    down = _claims.decreasing(seq, "TV")
    assert "t-test (1 dof)" in down and "not established" in down
    assert "holds" in _claims.decreasing([(lab, m[:2]) for lab, m in seq], "TV")
