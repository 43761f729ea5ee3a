"""``ul.audit_sampler`` (``uldp_jax/_audit_sampler.py``) under ULDP claims whose reports are not enumerable
(support events, issue 50 item 1).

Only protected reports (``Mechanism.revealed_inputs(ys) < 0``, or a user's ``protected=`` predicate) make events;
every invertible report is checked to come from the one non-sensitive input it names. No-false-alarm checks go
through ``uldp_jax.testing.fits`` on the claim's p-value (one counted check each); detection checks (a defect must
be flagged) are not false-alarm prone and are not counted; each states the bound it expects.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import testing

# the constructors whose reports are neither items nor short bit vectors (refused before support events knew Y_P)
SUPPORT_ONLY = ["GLUTF", "glutf", "UUE", "USS", "ULH", "UWheel", "UBD"]


@pytest.fixture(scope="module")
def key():
    return jax.random.key(0)


@pytest.mark.parametrize("name", SUPPORT_ONLY)
def test_library_uldp_mechanisms_audit_ok_with_support_events(key, name):
    mech = ul.mechanisms.examples()[name](1.0)
    r = ul.audit_sampler(key, mech, trials=80_000, progress=False)
    assert r.kind == "uldp" and r.events_from == "support" and r.invertible_ok, r
    assert testing.fits(r.pvalue), r
    assert "invertible" not in r.event  # the invertible reports' cell is never an event
    assert len(r.pairs) == mech.d * (mech.d - 1)  # every ordered pair: ULDP constrains them all on Y_P
    assert r.eps_lower > 0.5, r  # power: about 0.9 eps at this size ("supports x, not x'")


class LeakyUSS(ul.USS):
    """uSS whose sampler sometimes discloses a sensitive input as if it were non-sensitive (an invertible
    report ``x`` alone from ``x`` in ``X_S``); its channel is uSS's, so ``ul.audit`` passes it."""

    def perturb_batch(self, key, xs):
        k1, k2 = jax.random.split(key)
        ys = super().perturb_batch(k2, xs)
        sens = jnp.isin(xs, jnp.asarray(self.sensitive))
        leak = sens & (jax.random.uniform(k1, xs.shape) < 0.01)
        return ys._replace(has_base=ys.has_base & ~leak, item=jnp.where(leak, xs, ys.item))


def test_flags_an_invertible_report_from_a_sensitive_input(key):
    mech = LeakyUSS(5, (0, 2, 3), 1.0, k=2)
    assert ul.audit(mech).ok  # the channel is honest
    r = ul.audit_sampler(key, mech, trials=60_000, progress=False)
    assert not r.ok and not r.invertible_ok, r
    assert {(x, (x,)) for x in (0, 2, 3)} <= set(r.invertible_breaches)  # each names its own sensitive input
    assert "invertibility breached: an invertible report naming input" in str(r)


LOOSE = ul.UUE(5, (0, 2, 3), 3.0)


class LooseUUE(ul.UUE):
    """uUE claiming eps = 1 with a sampler that spends eps = 3 on its protected reports (uUE's at eps 3)."""

    def perturb_batch(self, key, xs):
        return LOOSE.perturb_batch(key, xs)


def test_flags_protected_reports_that_leak_more_than_eps(key):
    r = ul.audit_sampler(key, LooseUUE(5, (0, 2, 3), 1.0), trials=120_000, progress=False)
    # the own sensitive bit at eps 3 against the claim of 1: "supports x, not x'" has ratio about e^3
    assert not r.ok and r.invertible_ok and r.eps_lower > 1.5, r


# ---- user samplers: a protected predicate ------------------------------------------------------------------------
URAP = ul.URAP(20, tuple(range(0, 20, 2)), 1.0)  # 20 bits: support events (more than 16 bits)


def _leaky_urap(k, xs):  # uRAP, but a sensitive input 0 sometimes sets the non-sensitive bit 1
    k1, k2 = jax.random.split(k)
    ys = URAP.perturb_batch(k2, xs)
    return ys.at[:, 1].set(ys[:, 1] | ((xs == 0) & (jax.random.uniform(k1, xs.shape) < 0.02)))


def test_a_jax_function_under_uldp_takes_a_protected_predicate(key):
    spec, inputs = URAP.privacy_spec(), (0, 1, 2, 3)
    honest = ul.audit_sampler(key, URAP.perturb_batch, spec=spec, d=20, protected=URAP.revealed_inputs,
                              inputs=inputs, trials=60_000, progress=False)
    assert honest.events_from == "support" and honest.invertible_ok and testing.fits(honest.pvalue), honest
    mech = ul.audit_sampler(key, URAP, inputs=inputs, trials=60_000, progress=False)  # the mechanism's own
    assert mech.eps_lower == honest.eps_lower  # same key, same reports, same predicate


def test_a_leaky_jax_function_under_uldp_is_flagged_and_a_missing_predicate_refused(key):
    spec, inputs = URAP.privacy_spec(), (0, 1, 2, 3)
    named = ul.audit_sampler(key, _leaky_urap, spec=spec, d=20, protected=URAP.revealed_inputs, inputs=inputs,
                             trials=40_000, progress=False)
    assert not named.ok and (1, (0,)) in named.invertible_breaches, named  # names input 1, came from 0
    unnamed = ul.audit_sampler(key, _leaky_urap, spec=spec, d=20, protected=lambda ys: URAP.revealed_inputs(ys) < 0, inputs=inputs,
                               trials=40_000, progress=False)
    assert not unnamed.ok and (-1, (0,)) in unnamed.invertible_breaches, unnamed  # a bool predicate names none
    with pytest.raises(ValueError, match="pass protected=, a callable"):
        ul.audit_sampler(key, URAP.perturb_batch, spec=spec, d=20, trials=1000, progress=False)
    with pytest.raises(ValueError, match="needs enumerable reports"):
        ul.audit_sampler(key, URAP.perturb_batch, spec=spec, d=20, protected=np.ones(20, bool), trials=1000,
                         progress=False)


def test_a_python_callable_under_uldp_takes_a_protected_predicate(key):
    rng = np.random.default_rng(6)
    sens = np.zeros(20, bool)
    sens[list(URAP.sensitive)] = True
    theta, d1, keep_n = (float(v) for v in URAP.probs())

    def client(x):  # uRAP's client in NumPy (001 Def 4)
        v = np.zeros(20, np.int8)
        v[sens] = rng.random(10) < np.where(np.flatnonzero(sens) == x, theta, d1)
        if not sens[x]:
            v[x] = rng.random() < keep_n
        return v

    def revealed(reports):
        bits = np.asarray(reports, bool) & ~sens
        return np.where(bits.any(axis=1), bits.argmax(axis=1), -1)

    r = ul.audit_sampler(key, client, spec=URAP.privacy_spec(), d=20, protected=revealed, inputs=(0, 1, 2),
                         trials=30_000, progress=False)
    assert r.events_from == "support" and r.invertible_ok and testing.fits(r.pvalue), r
    with pytest.raises(ValueError, match="pass protected=, a callable"):
        ul.audit_sampler(key, client, spec=URAP.privacy_spec(), d=20, inputs=(0, 1), trials=1000, progress=False)


def test_a_predicate_on_enumerable_reports_gives_the_column_mask(key):
    urr = ul.URR(5, (0, 2, 3), 1.0)
    kw = dict(spec=urr.privacy_spec(), d=5, trials=100_000, progress=False)
    by_mask = ul.audit_sampler(key, urr.perturb_batch, protected=urr.channel_matrix()[1], **kw)
    by_predicate = ul.audit_sampler(key, urr.perturb_batch, protected=lambda ys: urr.revealed_inputs(ys) < 0, **kw)
    assert by_predicate.events_from == "outputs" and by_predicate.eps_lower == by_mask.eps_lower
    assert testing.fits(by_predicate.pvalue), by_predicate


def test_a_predicate_on_a_python_clients_hashable_reports(key):
    """Reports of any hashable form (here names): the predicate is asked about each report seen, in column order."""
    urr, rng = ul.URR(5, (0, 2, 3), 1.0), np.random.default_rng(7)
    Q, _ = urr.channel_matrix()
    names = [f"item-{y}" for y in range(5)]

    def client(x):
        return names[rng.choice(5, p=np.asarray(Q[x], np.float64) / np.sum(Q[x]))]

    def revealed(reports):
        ys = np.array([names.index(r) for r in reports])
        return np.where(np.isin(ys, urr.sensitive), -1, ys)

    r = ul.audit_sampler(key, client, spec=urr.privacy_spec(), d=5, protected=revealed, trials=50_000,
                         progress=False)
    assert r.events_from == "outputs" and r.invertible_ok and testing.fits(r.pvalue), r
    assert r.eps_lower > 0.5, r
