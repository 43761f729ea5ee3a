"""``uldp_jax/multidim/_audit.py``: utility-optimized SPL and SMP (uRR, uRAP per attribute, each with its own X_S):
the attribute-wise guarantee."""

import jax
import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md
from uldp_jax import testing

MAKERS = {
    "urr-urap": [lambda d, e: ul.URR(d, (0,), e), lambda d, e: ul.URAP(d, (1, 2), e)],
    "urr-grr-urr": [lambda d, e: ul.URR(d, (1,), e), ul.GRR, lambda d, e: ul.URR(d, (0, 1), e)],
}
DOMAINS = {"urr-urap": (3, 4), "urr-grr-urr": (2, 3, 2)}


@pytest.mark.parametrize("proto", [md.spl, md.smp])
@pytest.mark.parametrize("name", MAKERS)
def test_attribute_wise_uldp_certified(proto, name):
    m = proto(MAKERS[name], DOMAINS[name], 1.0)
    a = md.audit_attributes(m)
    assert a.ok and a.reveal_ok and a.num_revealing > 0, a
    assert a.eps == pytest.approx(1.0, rel=1e-9)  # tight: the hidden attributes are protected at exactly eps
    full = ul.audit(m)  # the product spec: eps on fully protected reports holds ...
    assert full.kind == "uldp" and full.excess <= 1e-9
    assert not full.invertible_ok  # ... but a report reveals one attribute, not the tuple (001 Def 2 does not fit)


@pytest.mark.parametrize("proto", [md.spl, md.smp])
def test_attribute_audit_catches_a_sensitive_value_revealed(proto):
    """An oracle whose claimed X_S is wrong: its invertible outputs reveal a value the audit is told is sensitive."""
    honest = proto(MAKERS["urr-urap"], (3, 4), 1.0)
    liar = ul.URR(3, (0,), 0.5 if proto is md.spl else 1.0)
    fake_spec = ul.PrivacySpec.uldp(3, (0, 1), liar.privacy_spec().eps)
    lying = type(liar)
    Liar = type("LyingURR", (lying,), {"privacy_spec": lambda self: fake_spec})
    bad = type(honest)((Liar(3, (0,), liar.eps), honest.oracles[1]))
    assert not md.audit_attributes(bad).reveal_ok
    assert md.audit_attributes(bad).eps <= 1.0 + 1e-9


def test_attribute_audit_catches_too_much_eps():
    m = md.spl(MAKERS["urr-urap"], (3, 4), 1.0)
    wide = md.SPL((ul.URR(3, (0,), 0.9), m.oracles[1]))  # 0.9 + 0.5 > the 1.0 a caller may assume
    a = md.audit_attributes(wide)
    assert a.ok and a.eps == pytest.approx(1.4, rel=1e-9)  # the spec follows the oracles: eps = sum
    assert a.eps > 1.0


@pytest.mark.parametrize("proto", [md.spl, md.smp])
def test_uldp_sampler_matches_channel_and_marginals_unbiased(proto):
    m = proto(MAKERS["urr-urap"], (3, 4), 1.0)
    for x, k in zip((0, 11), jax.random.split(jax.random.key(2), 2)):
        assert testing.fits(testing.sampler_vs_channel(k, m, x, 30_000))
    with jax.enable_x64(True):
        Q, _ = m.channel_matrix()
        p = np.random.default_rng(1).dirichlet(np.ones(m.d))
        stats = 1000 * (p @ Q)
        for est, true in zip(m.marginals(stats, 1000), md.marginals_of(p, m.domains)):
            np.testing.assert_allclose(np.asarray(est), np.asarray(true), atol=1e-9)
