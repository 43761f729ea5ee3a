"""Property-based checks (hypothesis) over every mechanism family, drawn across (d, s, eps, parameters) in
the stated exact range ``[EPS_MIN, EPS_MAX]`` (tested up to eps = 50; refusal beyond the range):

* the exact channel is a probability matrix (rows sum to 1 within ``ROW_SUM_ATOL``, entries >= 0);
* the audit passes at the nominal eps and fails once one protected ratio is pushed 5% past ``e^eps``;
* estimates from a few reports are finite.

Examples are derandomized (fixed per hypothesis version), so a run is reproducible; domains are small so each
channel has at most a few thousand entries.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uldp_jax as ul
from uldp_jax import _validate
from uldp_jax.privacy import _channel

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


_Fixed = ul.testing.FixedChannel


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
    bad = ul.audit(_Fixed(Q2, ch.protected, spec))
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
