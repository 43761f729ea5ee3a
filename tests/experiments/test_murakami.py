"""``uldp_jax/experiments/_murakami.py``'s summary claims for 001's sweeps: "best mechanism" tested per end of the
sweep, and claims from few repetitions (or few random X_S) tested with Student t. Deterministic (no sampling)."""

import math

from uldp_jax.experiments import _claims


def test_001_sweep_best_mechanism_is_tested_per_end_of_the_sweep():
    """001 Figs 6/7/11/12: "best mechanism" at both ends of the sweep, each mechanism at its lowest-error estimator,
    tested against the other mechanisms (Bonferroni over 3); a row without se leaves the claim untested."""
    from uldp_jax.experiments import _murakami

    def rows(s, vals, se="0.01"):
        return [dict(dataset="fs", eps="0.1", s=str(s), mechanism=m, method=meth, value=str(v), se=se)
                for (m, meth), v in vals.items()]

    far = {("RR", "emp"): 2.0, ("RR", "EM"): 0.9, ("RAPPOR", "emp"): 1.5, ("uRR", "EM"): 1.0, ("uRAP", "emp+thr"): 0.5}
    near = {**far, ("uRR", "EM"): 0.51}
    out = _murakami.sweep_checks(rows(1, far) + rows(625, near) + [dict(rows(1, far)[0], mechanism="no privacy")], "s")
    assert len(out) == 2 and out[0].startswith("fs, eps = 0.1, |X_S| = 1: best mechanism")
    assert "uRAP (emp+thr) (0.5)" in out[0] and "holds" in out[0] and "RR (EM)" in out[0]  # RR enters with EM
    assert "RR (emp)" not in out[0] and "no privacy" not in out[0]
    assert "not established" in out[1] and "closest: uRR (EM)" in out[1]
    untested = _murakami.sweep_checks(rows(4, far, se=""), "s")
    assert untested == ["fs, eps = 0.1, |X_S| = 4: lowest uRAP (emp+thr) (0.5); no standard error (one repetition), "
                        "not tested."]


def test_claims_from_few_repetitions_use_student_t():
    """A reduced run's se comes from 2 repetitions: a gap of 5 standard errors is 'significant' for a normal test
    (z > 1.645) but not for Student t with 1 dof (t > 6.31); the summaries must not call it established."""
    from uldp_jax.experiments import _murakami

    def rows(reps, cases="1"):
        vals = {("RAPPOR", "EM"): 1.0 + 5 * 0.01 * math.sqrt(2), ("uRAP", "EM"): 1.0}
        return [dict(dataset="fs", eps="0.1", s="1", mechanism=m, method=meth, value=str(v), se="0.01",
                     reps=str(reps), cases=cases) for (m, meth), v in vals.items()]

    few = _murakami.sweep_checks(rows(2), "s")[0]
    assert "t-tests (1 dof)" in few and "not established" in few
    many = _murakami.sweep_checks(rows(100), "s")[0]
    assert "t-tests (99 dof)" in many and "holds" in many
    by_cases = _murakami.sweep_checks(rows(1, cases="2"), "s")[0]  # Fig 6: se over the random X_S
    assert "t-tests (1 dof)" in by_cases
    assert "z-tests" in _claims.best({"a": (1.0, 0.01), "b": (2.0, 0.01)})  # no dof given: normal, as before

    class DS:
        name, d = "fs", 625

    lnd = round(math.log(625), 4)
    eps_rows = [dict(dataset="fs", eps=e, mechanism=m, value=v, se=0.01, reps=2)
                for e in (0.1, lnd) for m, v in (("RAPPOR", 1.0 + 0.05 * math.sqrt(2)), ("uRAP", 1.0))]
    checks = _murakami._eps_checks(eps_rows, DS, "tv")
    assert len(checks) == 2 and all("1 dof" in c and "not significant" in c for c in checks), checks
