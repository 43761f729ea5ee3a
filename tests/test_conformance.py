"""Conformance: every library mechanism, and one defined outside the package, keeps the protocol's promises.

Each mechanism (small d) must: expose the protocol members; have a channel whose rows sum to 1; pass its audit;
have a sampler that passes a chi-square test against that channel; give "emp" estimates that are unbiased within
statistical error where the exact channel moments say the estimator is unbiased (``ul.theory.exact_item_mse`` —
channel moments, not the estimator's code path); and work under jit and over a ``jax.vmap``-built grid of eps.

The outside mechanism is the docs' ``KeepRR`` (its code block is extracted from docs/own_mechanism.md and executed, so the two
cannot drift). Statistical thresholds: every chi-square test and every bias check is one ``ul.testing`` check
(``fits`` / ``within_se``) at the suite's per-check level ``ul.testing.ALPHA`` (Bonferroni over the items).
"""

from __future__ import annotations

import inspect
import pathlib
import re
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
import uldp_jax.testing  # noqa: F401  (ul.testing: the chi-square helpers)
from uldp_jax.mechanisms.core._records import likelihood_of

from tests.library_mechanisms import distinct_examples

OWN_MECHANISM = pathlib.Path(__file__).resolve().parents[1] / "docs" / "own_mechanism.md"  # the one copy
EPS_GRID = np.array([0.5, 2.0], dtype=np.float32)


def _readme_namespace() -> dict:
    text = OWN_MECHANISM.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 30, "the docs' worked example must stay within 30 lines"
    module = types.ModuleType("readme_example")  # as a user's own module (dataclasses look it up)
    sys.modules[module.__name__] = module
    exec(compile(code, str(OWN_MECHANISM), "exec", dont_inherit=True), module.__dict__)  # noqa: S102  (our docs)
    return module.__dict__


KeepRR = _readme_namespace()["KeepRR"]


class LeakyKeepRR(KeepRR):
    """KeepRR that keeps the true item more often than its eps allows (it claims eps, behaves like 2 eps)."""

    def keep(self):
        return 1.0 / (1.0 + (self.d - 1) * jnp.exp(-2.0 * self.eps))


# id -> eps -> mechanism: every library constructor's registered example (small domains; hash families use their
# exact "full" family where they have one; ``ul.mechanisms.examples()``) once per distinct instance (constructors
# that build the same mechanism, such as SUE and RAPPOR, run once), and README's KeepRR.


def _factories() -> dict:
    return {"KeepRR": lambda e: KeepRR(5, e), **distinct_examples()}


def _real_valued(make) -> bool:
    """A mechanism with real-valued reports (SHE): no finite channel, audited from its density
    (``likelihood().density``); it runs the density checks at the end of this file instead of the channel ones."""
    return likelihood_of(make(1.0)).density is not None


FACTORIES = {n: f for n, f in _factories().items() if not _real_valued(f)}
DENSITY_FACTORIES = {n: f for n, f in _factories().items() if _real_valued(f)}
IDS = list(FACTORIES)
# A mechanism whose sampler takes per-user arguments beyond ``(key, xs)`` (PUM's tags: ``perturb_batch(key, xs,
# personal)``) runs the sampler, estimator and grid checks on one user type, ``m.user(personal)`` (PUM's ``Q_cmn o
# f_pre``), itself a protocol mechanism over X (tests/pum/ covers PUM's population estimators). USER_TAGS: a user
# whose item 1 is personal under tag 0 (it is pre-processed to a bot), NO_TAGS: a user with no personal items (its
# channel is Q_cmn on X). The question is asked of the sampler's signature, never of the class name.
USER_TAGS, NO_TAGS = (1, -1), (-1, -1)


def _per_user(m) -> bool:
    """True when ``m.perturb_batch`` needs arguments besides ``key`` and ``xs`` (per-user tags)."""
    params = inspect.signature(m.perturb_batch).parameters.values()
    required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) > 2


def _user_view(name, eps, personal):
    """The mechanism the sampler/estimator/grid checks run on: one user type where the sampler takes per-user
    arguments (``m.user(personal)``), else the mechanism itself."""
    m = FACTORIES[name](eps)
    return m.user(jnp.asarray(personal, jnp.int32)) if _per_user(m) else m


def _rows(m) -> int:
    """The exact channel's rows: the mechanism's ``likelihood().inputs`` (default ``d``; PUM: its ``d`` items and
    its bots)."""
    return int(likelihood_of(m).inputs)


@pytest.fixture(params=IDS)
def name(request):
    return request.param


def test_protocol_members(name):
    m = FACTORIES[name](1.0)
    assert isinstance(m, ul.Mechanism)
    assert isinstance(m.report_kind, str) and m.report_kind
    assert int(m.num_outputs) >= 2 and int(m.d) >= 2 and int(ul.mechanisms.core.num_stats(m)) >= 1
    spec = m.privacy_spec()
    rows = ul.channel(m).Q.shape[0]
    assert rows == _rows(m)
    assert isinstance(spec, ul.PrivacySpec) and spec.E.shape == (rows, rows)
    for member in ("perturb_batch", "aggregate", "reports", "estimator",
                   "counts", "closed_form", "likelihood"):
        assert callable(getattr(m, member))
    assert np.isfinite(ul.mechanisms.core.comm_bits(m))
    with pytest.raises(Exception):  # frozen dataclass
        m.eps = 3.0
    leaves, treedef = jax.tree_util.tree_flatten(m)
    assert jax.tree_util.tree_unflatten(treedef, leaves) == m


def test_channel_rows_sum_to_one_and_audit_passes(name):
    m = FACTORIES[name](1.0)
    Q, protected = ul.channel(m)
    assert Q.dtype == np.float64 and Q.shape[1] == m.num_outputs and protected.shape == (m.num_outputs,)
    assert Q.shape[0] == _rows(m)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(Q >= 0)
    rep = ul.audit(m)
    assert rep.ok, rep


# One compiled sampler per mechanism, shared by the chi-square and the unbiasedness tests: both draw DRAWS reports
# per input (``d * DRAWS`` users, same mechanism pytree, same shapes: one compile).
DRAWS = 4000
_SAMPLER = jax.jit(lambda mech, key, xs: mech.perturb_batch(key, xs))


def test_sampler_matches_channel(name):
    m = _user_view(name, 1.0, USER_TAGS)
    Q = ul.channel(m).Q
    draws = DRAWS
    xs = jnp.repeat(jnp.arange(m.d, dtype=jnp.int32), draws)  # every input at once: one compiled sampler call
    idx = ul.testing.report_index(m, _SAMPLER(m, jax.random.key(7), xs)).reshape(m.d, draws)
    for x in range(m.d):
        res = ul.testing.chi_square(np.bincount(idx[x], minlength=Q.shape[1]), Q[x])
        assert ul.testing.fits(res), (x, res)


def test_sampler_rejects_a_wrong_channel():
    m = KeepRR(5, 1.0)
    wrong = ul.channel(KeepRR(5, 1.5)).Q
    assert ul.testing.sampler_vs_channel(jax.random.key(0), m, 0, 20000, Q=wrong).pvalue < 1e-6


def test_emp_mean_matches_the_exact_moments(name):
    """The mean of "emp" equals its exact expectation from the channel: the truth where the per-item estimator is
    unbiased; where the mechanism declares its affine model inexact on the exact channel (``estimator().exact`` is
    False: Wheel/uWheel over a finite hash family, whose ``estimator().affine`` is only nearly right) a real,
    exactly computed bias, which the Monte Carlo mean must reproduce."""
    m = _user_view(name, 1.0, NO_TAGS)
    xs = jnp.asarray(np.repeat(np.arange(m.d), [40, 10, 25, 5, 20, 30][: m.d]), jnp.int32)
    n, target = xs.shape[0], np.bincount(np.asarray(xs), minlength=m.d) / xs.shape[0]
    try:
        var = ul.theory.exact_item_mse(m, target, n, model="fixed")
        affine = "channel"
        assert m.estimator() is None or m.estimator().exact, name  # a model declared inexact is biased here
    except ValueError as e:
        # only a mechanism whose affine model is declared inexact on its exact channel may be biased there
        assert "biased" in str(e) and m.estimator() is not None and not m.estimator().exact, (name, e)
        affine = "mechanism"
    # "emp" is affine in the statistic, so the mean of R estimates (n users each) is the estimate from the pooled
    # statistic of R * n reports. The users report independently, so the pooled statistic has the law of the
    # aggregate of the users ``tile(xs, R)``: drawn here with the chi-square test's compiled sampler (``d *
    # DRAWS`` users per call, calls with independent keys), at least R = 200 repetitions' worth of reports.
    reps = 200
    base_xs = np.tile(np.asarray(xs), -(-DRAWS * m.d // n))[: DRAWS * m.d]  # whole copies of xs, then a rest
    calls = -(-reps * n // (DRAWS * m.d))
    stats = sum(m.aggregate(_SAMPLER(m, jax.random.fold_in(jax.random.key(1), c), jnp.asarray(base_xs)))
                for c in range(calls))
    counts = calls * np.bincount(base_xs, minlength=m.d)
    total = calls * base_xs.shape[0]
    assert total >= reps * n  # at least the power of 200 repetitions of n users
    mean_est = np.asarray(ul.estimate_from_stats(m, stats, total, "emp"), np.float64)
    # exact mean and variance of the pooled estimate (fixed model): p_hat = h @ W / n + c
    q = counts / total
    W, c = ul.theory.estimator_matrix(m, affine)
    Q = ul.channel(m).Q
    M1, M2 = Q @ W, Q @ W**2
    expected = q @ M1 + c
    var_total = q @ (M2 - M1**2) / total
    bias = expected - q
    if affine == "channel":
        np.testing.assert_allclose(bias, 0.0, atol=1e-9)
        np.testing.assert_allclose(var_total, ul.theory.exact_item_mse(m, q, total, model="fixed"), rtol=1e-9)
    else:
        assert np.max(np.abs(bias)) > 1e-4, bias  # the bias the ValueError announced is real
    z = (mean_est - expected) / np.sqrt(var_total)
    assert ul.testing.within_se(mean_est, expected, np.sqrt(var_total)), z
    if affine == "channel":  # and the closed form (or the default from channel moments) agrees with the exact risk
        np.testing.assert_allclose(float(ul.theory.mse(m, target, n, model="fixed")), var.sum(), rtol=1e-5)


def _single(grid, i):
    return jax.tree.map(lambda v: v[i], grid)


def test_jit_and_vmap_over_eps(name):
    make = lambda e: _user_view(name, e, USER_TAGS)  # noqa: E731
    grid = jax.vmap(make)(jnp.asarray(EPS_GRID))
    xs = jnp.arange(make(1.0).d, dtype=jnp.int32)
    key = jax.random.key(3)
    sampler = jax.jit(lambda mech: mech.perturb_batch(key, xs))  # one compile for every grid point
    batched = jax.jit(jax.vmap(sampler))(grid)
    for i in range(EPS_GRID.size):
        one = make(jnp.asarray(EPS_GRID[i]))
        # float32 leaves in the grid (vmap broadcasts constant leaves such as l=0.3 to float32 arrays)
        np.testing.assert_allclose(ul.channel(_single(grid, i)).Q, ul.channel(one).Q, rtol=1e-4, atol=1e-9)
        single = sampler(one)
        for a, b in zip(jax.tree_util.tree_leaves(_single(batched, i)), jax.tree_util.tree_leaves(single)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ---- the outside-defined mechanism through every generic entry point ----------------------------------------------

@pytest.mark.slow
def test_keeprr_generic_entry_points():
    m = KeepRR(5, 1.0)
    Q, protected = ul.channel(m)
    e = np.exp(1.0)
    np.testing.assert_allclose(Q[0], [e / (e + 4)] + [1 / (e + 4)] * 4, rtol=1e-15)
    assert protected.all()
    rep = ul.audit(m)
    assert rep.ok and rep.tight and abs(rep.eps - 1.0) < 1e-12
    key = jax.random.key(0)
    xs = jnp.asarray(np.repeat(np.arange(5), [400, 100, 250, 50, 200]), jnp.int32)
    ys = ul.perturb(key, m, xs)
    assert ys.dtype == jnp.int32 and ys.shape == xs.shape
    for method in ("emp", "emp+thr", "em", "norm-sub"):
        p_hat = np.asarray(ul.estimate(m, ys, method))
        assert p_hat.shape == (5,) and np.all(np.isfinite(p_hat)), method
        if method != "emp":
            assert abs(p_hat.sum() - 1.0) < 1e-3, method
    p = np.array([0.4, 0.1, 0.25, 0.05, 0.2])
    res_p = ul.simulate(key, m, p=p, n=1000, reps=3, methods=("emp",))
    res_x = ul.simulate(key, m, xs=xs, reps=3, methods=("emp+thr",))
    assert res_p.estimates["emp"].shape == (3, 5) and res_x.estimates["emp+thr"].shape == (3, 5)
    exact = ul.theory.exact_mse(m, p, 1000)
    grr = ul.theory.mse(ul.GRR(5, 1.0), p, 1000)  # KeepRR is GRR: same exact risk
    np.testing.assert_allclose(exact, float(grr), rtol=1e-6)
    np.testing.assert_allclose(float(ul.theory.mse(m, p, 1000)), exact, rtol=1e-8)  # default: channel moments
    assert ul.testing.fits(ul.testing.sampler_vs_channel(key, m, 2, 5000))


def test_keeprr_audit_fails_when_the_channel_leaks():
    rep = ul.audit(LeakyKeepRR(5, 1.0))
    assert not rep.ok and rep.eps > 1.9


def test_keeprr_grid_audit():
    """The README contract: ul.audit on a vmap-built grid of an outside-defined mechanism (one verdict a point)."""
    rep = ul.audit(jax.vmap(lambda e: KeepRR(5, e))(jnp.asarray(EPS_GRID)))
    assert rep.ok.shape == EPS_GRID.shape and rep.ok.all() and rep.tight.all()
    np.testing.assert_allclose(rep.eps, EPS_GRID, rtol=1e-6)
    leaky = ul.audit(jax.vmap(lambda e: LeakyKeepRR(5, e))(jnp.asarray(EPS_GRID)))
    assert not leaky.ok.any()


def test_keeprr_grid_through_simulate():
    grid = jax.vmap(lambda e: KeepRR(5, e))(jnp.asarray(EPS_GRID))
    p = np.array([0.4, 0.1, 0.25, 0.05, 0.2])
    res = ul.simulate(jax.random.key(2), grid, p=p, n=500, reps=2, methods=("emp",))
    assert res.estimates["emp"].shape == (EPS_GRID.size, 2, 5)
    for i in range(EPS_GRID.size):
        one = ul.simulate(jax.random.key(2), KeepRR(5, jnp.asarray(EPS_GRID[i])), p=p, n=500, reps=2,
                          methods=("emp",))
        np.testing.assert_allclose(np.asarray(res.estimates["emp"][i]), np.asarray(one.estimates["emp"]),
                                   rtol=1e-5, atol=1e-6)


def test_tunable_parameters_come_from_the_closed_form():
    assert ul.URAP(6, (0, 1), 1.0).closed_form().param == "theta"
    assert ul.USS(6, (0, 1, 2), 1.0, k=1).closed_form().param == "k"
    assert ul.GRR(6, 1.0).closed_form().param is None and KeepRR(5, 1.0).closed_form() is None


# ---- mechanisms with real-valued reports (no finite channel) ------------------------------------------------------

@pytest.mark.parametrize("dname", list(DENSITY_FACTORIES))
def test_density_mechanism_audit_and_grid(dname):
    """Audit from the density (tight at the default scale), ``channel`` refused with a reason, ``ul.check`` ok, and
    a vmap grid audited per point with a sampler equal to its points'."""
    m = DENSITY_FACTORIES[dname](1.0)
    rep = ul.audit(m)
    assert rep.ok and rep.tight and rep.source == "density" and abs(rep.eps - 1.0) < 1e-12
    with pytest.raises(NotImplementedError, match="no finite channel"):
        ul.channel(m)
    assert ul.check(m).ok and np.isfinite(ul.mechanisms.core.comm_bits(m))
    grid = jax.vmap(DENSITY_FACTORIES[dname])(jnp.asarray(EPS_GRID))
    assert ul.audit(grid).ok.all()
    xs = jnp.arange(m.d, dtype=jnp.int32)
    batched = jax.jit(jax.vmap(lambda mech: mech.perturb_batch(jax.random.key(3), xs)))(grid)
    for i in range(EPS_GRID.size):
        one = DENSITY_FACTORIES[dname](jnp.asarray(EPS_GRID[i])).perturb_batch(jax.random.key(3), xs)
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(one), rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("dname", list(DENSITY_FACTORIES))
def test_density_mechanism_emp_is_unbiased_through_simulate(dname):
    """"emp" through ``ul.simulate`` (both paths) is unbiased within its closed-form standard error."""
    m = DENSITY_FACTORIES[dname](1.0)
    p = np.array([0.4, 0.3, 0.2, 0.1, 0.0, 0.0])[: m.d]
    p = p / p.sum()
    n, reps = 2000, 50
    se = np.sqrt(np.asarray(ul.theory.item_variance(m, p, n), np.float64) / reps)
    for path in ("counts", "per_user"):
        res = ul.simulate(jax.random.key(11), m, p=p, n=n, reps=reps, methods=("emp",), path=path)
        mean = np.asarray(res.estimates["emp"], np.float64).mean(axis=0)
        assert ul.testing.within_se(mean, p, se), (path, (mean - p) / se)
