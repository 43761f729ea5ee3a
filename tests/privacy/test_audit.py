"""The audit reads exact channels: verdicts for LDP, ULDP, HLLDP, BSLDP and E-LDP."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uldp_jax as ul
from uldp_jax import _validate, testing
from uldp_jax.mechanisms.core import _records
from uldp_jax.privacy import _channel, pairwise_log_ratios

from tests.outside_mechanisms import Keep


class _Fixed(ul.Mechanism):
    """A mechanism given by an explicit channel and spec (to test the audit itself)."""

    Q: np.ndarray
    protected: np.ndarray
    spec: object = ul.static_field()
    report_kind = "item"

    def __post_init__(self):
        object.__setattr__(self, "Q", np.asarray(self.Q, float))
        object.__setattr__(self, "protected", np.asarray(self.protected, bool))

    @property
    def d(self):
        return self.Q.shape[0]

    @property
    def num_outputs(self):
        return self.Q.shape[1]

    def perturb_batch(self, key, xs):
        raise NotImplementedError  # the audit never samples

    def channel_matrix(self):
        return self.Q, self.protected

    def privacy_spec(self):
        return self.spec


def test_pairwise_log_ratios_conventions():
    Q = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.0, 0.5, 0.5]])
    L = pairwise_log_ratios(Q)
    assert L[0, 1] == pytest.approx(np.log(2))
    assert L[1, 0] == np.inf  # output 2 is possible from 1 but not from 0
    assert L[0, 2] == np.inf and np.all(np.diag(L) == 0)


def test_uldp_requires_invertibility():
    eps = 1.0
    spec = ul.URR(3, [0], eps).privacy_spec()
    good = ul.channel(ul.URR(3, [0], eps))
    rep = ul.audit(_Fixed(good.Q, good.protected, spec))
    assert rep.ok and rep.invertible_ok
    # Output 1 (declared invertible) is also reached from input 2: not invertible.
    Q = good.Q.copy()
    Q[2] = [Q[2, 0], 0.1, Q[2, 2] - 0.1]
    rep = ul.audit(_Fixed(Q, good.protected, spec))
    assert not rep.ok and not rep.invertible_ok
    # A sensitive input reaching an invertible output breaks Def 2 (1).
    Q = good.Q.copy()
    Q[0] = [Q[0, 0] - 0.01, Q[0, 1] + 0.01, Q[0, 2]]
    rep = ul.audit(_Fixed(Q, good.protected, spec))
    assert not rep.invertible_ok


def test_e_matrix_audit_and_hlldp_bsldp_verdicts():
    mech = ul.URR(5, [1, 3], 1.0)
    # uRR satisfies (A, eps)-HLLDP only on protected outputs; as E-LDP on all outputs it fails HLLDP,
    # because a non-sensitive input reveals itself (E[x in B, .] = inf is fine, but E[a, b] = eps with
    # Q(y=b | b) > 0 = Q(y=b | a) is fine too: the ratio Q(y|a)/Q(y|b) is bounded). Check directly:
    E = ul.hlldp_matrix(5, [1, 3], 1.0)
    rep = ul.audit(mech, E=E)
    L = pairwise_log_ratios(ul.channel(mech).Q)
    assert rep.ok == bool(np.all(L[[1, 3]] <= 1.0 + 1e-9)) and rep.kind == "eldp"
    assert rep.ok  # uRR is HLLDP with A = X_S (sensitive rows bounded on every output)
    # GRR is E-LDP for any E >= eps and fails for a smaller entry.
    grr = ul.GRR(4, 1.0)
    assert ul.audit(grr, E=ul.ldp_matrix(4, 1.0)).ok
    E = ul.ldp_matrix(4, 1.0)
    E[0, 1] = 0.5
    rep = ul.audit(grr, E=E)
    assert not rep.ok and rep.excess == pytest.approx(0.5)
    # Block-structured E: GRR restricted to blocks is fine; inf across blocks is unconstrained.
    Eb = ul.bsldp_matrix([[0, 1], [2, 3]], 1.0)
    assert ul.audit(grr, E=Eb).ok
    assert np.isinf(Eb[0, 2]) and Eb[0, 1] == 1.0


def test_audit_bad_input():
    with pytest.raises(ValueError, match="E"):
        ul.audit(ul.GRR(3, 1.0), E=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="E"):
        ul.audit(ul.GRR(3, 1.0), E=-np.ones((3, 3)))
    with pytest.raises(TypeError, match="mechanism"):
        ul.channel(object())
    with pytest.raises(ValueError, match="too|entries"):
        ul.channel(ul.RAPPOR(30, 1.0))
    with pytest.raises(ValueError, match="blocks"):
        ul.bsldp_matrix([[0, 1], [1, 2]], 1.0)
    with pytest.raises(ValueError, match="blocks"):
        ul.bsldp_matrix([[0, 2]], 1.0)
    with pytest.raises(ValueError, match=r"grid point \(1,\) \(eps=nan\)"):  # a grid is checked point by point
        ul.audit(jax.vmap(lambda e: ul.GRR(3, e))(jnp.array([1.0, np.nan])))


class _LeakyAbove(ul.Mechanism):
    """RR over d items that really spends 2 * eps when eps > 1.5 while claiming eps (leaks on part of a grid)."""

    d: int = ul.static_field()
    eps: float
    report_kind = "item"

    @property
    def num_outputs(self):
        return self.d

    def perturb_batch(self, key, xs):
        raise NotImplementedError  # the audit never samples

    def channel_matrix(self):
        e = jnp.where(self.eps > 1.5, 2.0 * self.eps, self.eps)
        keep = 1.0 / (1.0 + (self.d - 1) * jnp.exp(-e))
        Q = jnp.where(jnp.eye(self.d, dtype=bool), keep, (1.0 - keep) / (self.d - 1))
        return Q, jnp.ones(self.d, dtype=bool)

    def privacy_spec(self):
        return ul.PrivacySpec.ldp(self.d, self.eps)


def test_audit_and_channel_of_a_vmapped_grid():
    """A grid built with jax.vmap: each point is audited on its own; fields gain the grid's shape."""
    eps = np.array([[0.5, 1.0, 2.0], [3.0, 1.2, 4.0]])
    grid = jax.vmap(jax.vmap(lambda e: ul.URR(6, (0, 2), e)))(jnp.asarray(eps))
    rep = ul.audit(grid)
    assert rep.ok.shape == (2, 3) and rep.worst_pair.shape == (2, 3, 2) and rep.ok.all() and rep.tight.all()
    np.testing.assert_allclose(rep.eps, eps, rtol=1e-6)  # float32 leaves, audited in float64
    single = ul.audit(ul.URR(6, (0, 2), 3.0))
    assert rep.num_invertible[1, 0] == single.num_invertible and tuple(rep.worst_pair[1, 0]) == single.worst_pair
    ch = ul.channel(grid)
    assert ch.Q.shape == (2, 3, 6, 6) and ch.protected.shape == (2, 3, 6)
    np.testing.assert_allclose(ch.Q[1, 2], ul.channel(ul.URR(6, (0, 2), 4.0)).Q, rtol=1e-6)

    leaky = ul.audit(jax.vmap(lambda e: _LeakyAbove(5, e))(jnp.array([0.5, 1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(leaky.ok, [True, True, False, False])
    np.testing.assert_allclose(leaky.eps, [0.5, 1.0, 4.0, 6.0], rtol=1e-6)


# ---- the audit checks the claim --------------------------------------------------------------------------

def _fixed(Q, spec, protected=None):
    Q = np.asarray(Q, np.float64)
    return testing.FixedChannel(Q, np.ones(Q.shape[1], bool) if protected is None else protected, spec)


def test_audit_refuses_claims_inconsistent_with_their_kind():
    Q = ul.channel(ul.GRR(4, 1.0)).Q
    E = np.full((4, 4), 10.0)
    np.fill_diagonal(E, 0.0)
    with pytest.raises(ValueError, match="claims eps=0.5"):
        ul.audit(_fixed(Q, ul.PrivacySpec("ldp", E, 0.5, None)))
    E1 = np.full((4, 4), np.inf)
    np.fill_diagonal(E1, 0.0)
    E1[0, 1] = 1.0
    with pytest.raises(ValueError, match="not eps"):
        ul.audit(_fixed(np.eye(4), ul.PrivacySpec("uldp", E1, 1.0, np.ones(4, bool))))
    with pytest.raises(ValueError, match="no sensitive input"):
        ul.audit(_fixed(np.eye(4), ul.PrivacySpec.uldp(4, [], 1.0), np.zeros(4, bool)))


class LyingLog(Keep):
    """Honest ``likelihood().log_channel`` except on tiny entries, where it hides an e^9.2 ratio."""

    def channel_matrix(self):
        Q = np.full((2, 2), 0.5)
        Q[0] = [1.0, 1e-305]
        Q[1] = [1.0, 1e-301]
        Q = Q / Q.sum(axis=1, keepdims=True)
        return Q, np.ones(2, bool)

    def likelihood(self):
        def log_channel():
            Q, p = self.channel_matrix()
            with np.errstate(divide="ignore"):
                return np.log(np.maximum(Q, 1e-300)), p

        return _records.Likelihood(log_channel=log_channel)


def test_a_lying_log_channel_is_refused():
    with pytest.raises(ValueError, match=r"likelihood\(\).log_channel disagrees"):
        ul.audit(LyingLog(2, 1.0))


# ---- properties over every family (from tests/test_properties.py) ----------------------------------------
# Property-based checks (hypothesis) over every mechanism family, drawn across (d, s, eps, parameters) in
# the stated exact range ``[EPS_MIN, EPS_MAX]`` (tested up to eps = 50; refusal beyond the range):
#
# * the exact channel is a probability matrix (rows sum to 1 within ``ROW_SUM_ATOL``, entries >= 0);
# * the audit passes at the nominal eps and fails once one protected ratio is pushed 5% past ``e^eps``;
# * estimates from a few reports are finite.
#
# Examples are derandomized (fixed per hypothesis version), so a run is reproducible; domains are small so each
# channel has at most a few thousand entries.

EPS = st.floats(1e-3, 50.0, allow_nan=False, allow_infinity=False)
SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def _sens(draw, d, proper=True, min_size=1):
    """A subset of [0, d) with at least ``min_size`` items (a proper one when asked)."""
    k = draw(st.integers(min_size, d - 1 if proper else d))
    return sorted(draw(st.permutations(range(d)))[:k])


def _unit(draw, lo=0.05, hi=0.95):
    return draw(st.floats(lo, hi, allow_nan=False))


# name -> composite strategy drawing (mechanism) for a given eps
BUILDERS = {
    "GRR": lambda draw, e: ul.GRR(draw(st.integers(2, 8)), e),
    "URR": lambda draw, e: (lambda d: ul.URR(d, draw(_sens(d, proper=False)), e))(draw(st.integers(2, 8))),
    "OUE": lambda draw, e: ul.OUE(draw(st.integers(2, 6)), e),
    "UE": lambda draw, e: ul.UE(draw(st.integers(2, 6)), e, p=_unit(draw)),
    "RAPPOR": lambda draw, e: ul.RAPPOR(draw(st.integers(2, 6)), e),
    "SUE": lambda draw, e: ul.SUE(draw(st.integers(2, 6)), e),
    "URAP": lambda draw, e: (lambda d: ul.URAP(d, draw(_sens(d, proper=False)), e))(draw(st.integers(2, 6))),
    "UUE": lambda draw, e: (lambda d: ul.UUE(d, draw(_sens(d)), e, p=_unit(draw)))(draw(st.integers(3, 6))),
    "SS": lambda draw, e: (lambda d: ul.SS(d, e, k=draw(st.integers(1, d - 1))))(draw(st.integers(2, 6))),
    "USS": lambda draw, e: (lambda d: (lambda s: ul.USS(d, s, e, k=draw(st.integers(1, len(s) - 1))))(
        draw(_sens(d, min_size=2))))(draw(st.integers(3, 6))),
    "OLH": lambda draw, e: ul.OLH(draw(st.integers(2, 4)), e, g=draw(st.integers(2, 4)), family="full"),
    "ULH": lambda draw, e: (lambda d: ul.ULH(d, draw(_sens(d)), e, g=draw(st.integers(2, 3)), family="full"))(
        draw(st.integers(3, 5))),
    "Wheel": lambda draw, e: ul.Wheel(draw(st.integers(2, 5)), e, num_hashes=4),
    "UWheel": lambda draw, e: (lambda d: ul.UWheel(d, draw(_sens(d)), e, num_hashes=4))(draw(st.integers(3, 5))),
    "HR": lambda draw, e: ul.HR(draw(st.integers(2, 8)), e),
    "HadamardResponse": lambda draw, e: ul.HadamardResponse(draw(st.integers(2, 8)), e,
                                                        num_blocks=draw(st.integers(1, 4))),
    "HighLowHR": lambda draw, e: (lambda d: ul.HighLowHR(d, draw(_sens(d)), e))(draw(st.integers(3, 8))),
    "BlockHR": lambda draw, e: (lambda d: ul.BlockHR([range(0, d // 2), range(d // 2, d)], e))(
        draw(st.integers(4, 8))),
    "GLUTF": lambda draw, e: (lambda d: (lambda s: ul.GLUTF(ul.GRR(len(s), e), d, s))(draw(_sens(d, min_size=2))))(
        draw(st.integers(3, 7))),
    "Warner": lambda draw, e: ul.Warner(e),
    "Mangat": lambda draw, e: ul.Mangat(e),
    "BinaryCA": lambda draw, e: ul.BinaryCA(e, draw(EPS)),
    "PUM": lambda draw, e: (lambda d: ul.PUM(d, draw(_sens(d)), draw(st.integers(1, 2)), e))(draw(st.integers(3, 6))),
    "CMS": lambda draw, e: ul.CMS(draw(st.integers(2, 6)), e, k=draw(st.integers(1, 3)), m=draw(st.integers(2, 5)),
                                  seed=draw(st.integers(0, 2**32 - 1))),
    "HCMS": lambda draw, e: ul.HCMS(draw(st.integers(2, 6)), e, k=draw(st.integers(1, 3)),
                                    m=draw(st.sampled_from([2, 4, 8])), seed=draw(st.integers(0, 2**32 - 1))),
}


@st.composite
def mechanisms(draw, name):
    return BUILDERS[name](draw, draw(EPS))


_FixedChannel = ul.testing.FixedChannel


def _perturb_past_the_bound(Q, protected, spec, factor=1.05):
    """Lowers Q[x', y] so that Q[x, y] / Q[x', y] = factor * e^{E[x, x']} on a protected output y; the mass goes
    to another output of row x' (rows still sum to 1)."""
    E = spec.E
    d, m = Q.shape
    prot = np.ones(m, bool) if spec.invertible_inputs is None else protected
    for y in np.flatnonzero(prot):
        for x in np.argsort(-Q[:, y]):
            if Q[x, y] <= 0:
                break
            for xp in range(d):
                if xp == x or not np.isfinite(E[x, xp]):
                    continue
                new = Q[x, y] / (factor * np.exp(E[x, xp]))  # < Q[xp, y], since the audit passed
                Q2 = Q.copy()
                z = (y + 1) % m
                Q2[xp, z] += Q2[xp, y] - new
                Q2[xp, y] = new
                return Q2
    raise AssertionError("no constrained protected pair to perturb")


def _check_channel_and_audit(mech):
    ch = ul.channel(mech)
    assert np.all(ch.Q >= 0)
    np.testing.assert_allclose(ch.Q.sum(axis=1), 1.0, rtol=0, atol=_channel.ROW_SUM_ATOL)
    rep = ul.audit(mech)
    assert rep.ok, (mech, rep)
    spec = mech.privacy_spec()
    Q2 = _perturb_past_the_bound(ch.Q, ch.protected, spec)
    bad = ul.audit(_FixedChannel(Q2, ch.protected, spec))
    assert not bad.ok, (mech, bad)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_channel_rows_sum_to_one_and_audit_discriminates(name):
    @settings(max_examples=8, **SETTINGS)
    @given(mechanisms(name))
    def run(mech):
        _check_channel_and_audit(mech)

    run()


def _estimate_finite(mech):
    if isinstance(mech, ul.PUM):
        xs = jnp.arange(8, dtype=jnp.int32) % mech.d
        personal = jnp.full((8, mech.num_tags), -1, jnp.int32)
        ys = ul.perturb(jax.random.key(0), mech, xs, personal)
        est = ul.pum_estimate(mech, ys, method="emp").p
    else:
        ys = ul.perturb(jax.random.key(0), mech, jnp.arange(8, dtype=jnp.int32) % mech.d)
        est = ul.estimate(mech, ys)
    assert np.all(np.isfinite(np.asarray(est))), (mech, est)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_estimates_finite(name):
    @settings(max_examples=2, **SETTINGS)
    @given(mechanisms(name))
    def run(mech):
        _estimate_finite(mech)

    run()


GRID = (1e-3, 0.1, 1.0, 10.0, 30.0, 50.0)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_whole_range_exact_and_refused_beyond(name):
    """eps over [1e-3, 50]: channel, audit and estimates exact; beyond [EPS_MIN, EPS_MAX]: a ValueError naming eps."""
    build = BUILDERS[name]

    @settings(max_examples=1, **SETTINGS)
    @given(st.data())
    def run(data):
        for e in GRID:
            mech = build(data.draw, e)
            _check_channel_and_audit(mech)
        _estimate_finite(build(data.draw, 50.0))
        for e in (_validate.EPS_MAX * 1.01, 1e3, _validate.EPS_MIN / 10):
            with pytest.raises(ValueError, match="eps"):
                build(data.draw, e)

    run()


# ---- extreme eps: exact or refused, never silent garbage (from tests/test_extremes.py) --------------------

@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda e: ul.Wheel(6, e, num_hashes=16),
                                  lambda e: ul.UWheel(6, [0, 2], e, num_hashes=16), lambda e: ul.OUE(6, e),
                                  lambda e: ul.UUE(6, [0, 2], e), lambda e: ul.RAPPOR(6, e)],
                         ids=["Wheel", "UWheel", "OUE", "UUE", "RAPPOR"])
def test_large_eps_exact_up_to_the_limit_and_refused_beyond(make):
    for e in (70.0, _validate.EPS_MAX):  # [1e-3, 50]: test_whole_range_exact_and_refused_beyond above
        mech = make(e)
        ch = ul.channel(mech)
        np.testing.assert_allclose(ch.Q.sum(1), 1.0, atol=1e-12)
        rep = ul.audit(mech)
        assert rep.ok and rep.tight and rep.eps == pytest.approx(e, rel=1e-9), (mech, rep)
        ys = ul.perturb(jax.random.key(0), mech, jnp.arange(6, dtype=jnp.int32))
        assert np.all(np.isfinite(np.asarray(ul.estimate(mech, ys))))
        res = ul.simulate(jax.random.key(1), mech, p=np.full(6, 1 / 6), n=60, reps=1)
        assert np.all(np.isfinite(np.asarray(res.estimates["emp"])))
    for e in (200.0, 700.0):
        with pytest.raises(ValueError, match="eps"):
            make(e)


def test_bit_product_channel_audited_in_log_space():
    # 0.5 q^13 with q = e^-100 / (1 + ...) underflows float64: exp(-1300); the log-space audit stays exact
    for mech in (ul.OUE(14, 100.0), ul.UUE(14, list(range(12)), 100.0), ul.URAP(14, [0, 1, 2], 100.0)):
        assert np.any(ul.channel(mech).Q == 0)  # the float64 channel has underflowed entries ...
        rep = ul.audit(mech)
        assert rep.ok and rep.eps == pytest.approx(100.0, rel=1e-9), (mech, rep)  # ... the audit does not care
