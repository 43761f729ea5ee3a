"""``uldp_jax/testing.py``: the statistical checks the suite uses and users may: ``estimate_within_se`` passes an
honest estimate and refuses a biased one (one check per call), ``at_most`` is one-sided at the per-check level, and
``emp_tv`` agrees with simulated emp estimates."""


def test_estimate_within_se_passes_an_honest_estimate_and_refuses_a_biased_one():
    """The helper that replaced fixed tolerances on estimates: the SE is the mechanism's own (``_estimation.debias_variance``)."""
    import jax
    import numpy as np

    import uldp_jax as ul
    from uldp_jax import testing

    mech = ul.OUE(6, 1.0)
    xs = np.repeat(np.arange(6), 5000)
    est = np.asarray(ul.estimate(mech, ul.perturb(jax.random.key(5), mech, xs)), np.float64)
    truth = np.full(6, 1 / 6)
    assert testing.estimate_within_se(mech, est, truth, xs.size)
    before = testing.checks_run()
    assert not testing.estimate_within_se(mech, 1.5 * est, truth, xs.size, alpha=1e-6)  # power: 50% bias
    assert not testing.estimate_within_se(mech, np.stack([est + 0.05] * 400), truth, xs.size, alpha=1e-6)
    assert testing.checks_run() == before + 2  # one check per call


def test_at_most_is_one_sided_and_emp_tv_matches_simulation():
    """``at_most`` (ordering claims) is one check at the per-check level, one-sided; ``emp_tv`` (the normal
    approximation of emp's TV) agrees with 400 simulated emp estimates of GRR (mean and sd within their SEs)."""
    import jax
    import numpy as np

    import uldp_jax as ul
    from uldp_jax import testing

    before = testing.checks_run()
    z1 = testing.z_critical(2 * testing.ALPHA)  # one-sided critical value, 4.42
    assert testing.at_most(1.0 + 0.99 * z1, 1.0, 1.0) and testing.at_most(-50.0, 1.0, 1.0)
    assert not testing.at_most(1.0 + 1.01 * z1, 1.0, 1.0)
    assert testing.checks_run() == before + 3

    mech, n, reps = ul.GRR(8, 1.0), 20_000, 400
    p = np.linspace(1.0, 2.0, 8) / np.linspace(1.0, 2.0, 8).sum()
    res = ul.simulate(jax.random.key(11), mech, p=p, n=n, reps=reps, methods=("emp",))
    est = np.asarray(res.estimates["emp"], np.float64)
    tv = 0.5 * np.abs(est - p).sum(-1)
    mean, sd = testing.emp_tv(mech, p, n)
    assert testing.within_se(tv.mean(), mean, tv.std(ddof=1) / np.sqrt(reps))
    # sd of the sample sd of 400 draws ~ sd / sqrt(2 * 399) (normal); the folded sum is close to normal at d = 8
    assert testing.within_se(tv.std(ddof=1), sd, 2 * sd / np.sqrt(2 * (reps - 1)))
