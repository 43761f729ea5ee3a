"""``uldp_jax/longitudinal/_exact.py``: privacy over tau of the memoized protocols (the exact histogram
enumeration against the closed form and brute force), and the ULDP audit of memoized uRR/uRAP's sequences."""

import pytest

from uldp_jax import longitudinal as lg

from tests.longitudinal._protocols import D, PROTOCOLS


@pytest.mark.parametrize("name", ["L-GRR", "L-SUE", "L-OUE", "L-OSUE", "L-SOUE", "L-uRR"])
def test_privacy_over_tau_exact_equals_closed_form_and_brute_force(name):
    """One report costs eps_1; tau reports of one value cost the closed form, which rises with tau and stays
    below eps_perm; the histogram enumeration equals every sequence enumerated."""
    mech = PROTOCOLS[name]()
    eps = [lg.sequence_eps(mech, tau) for tau in (1, 2, 3)]
    assert eps[0] == pytest.approx(mech.eps_1, abs=1e-9)
    for tau, e in zip((1, 2, 3), eps):
        assert e == pytest.approx(float(mech.closed_form_eps(tau)), abs=1e-8)
        assert e == pytest.approx(lg.brute_force_eps(mech, tau), abs=1e-8)
    assert eps[0] < eps[1] < eps[2] < mech.eps_perm
    assert float(mech.closed_form_eps(200)) == pytest.approx(mech.eps_perm, abs=1e-6)


@pytest.mark.parametrize("name", ["L-uRR", "L-uRAP"])
def test_memoized_utility_optimized_sequences_are_uldp(name):
    """Every sequence that not every input reaches is reached by one non-sensitive input only, and the protected
    sequences' log-ratio is the closed form (at most eps_perm)."""
    mech = PROTOCOLS[name]()
    for tau in (1, 2, 3):
        audit = lg.audit_sequence(mech, tau)
        assert audit.invertible_ok and audit.num_invertible > 0 and audit.num_protected > 0
        assert audit.eps == pytest.approx(float(mech.closed_form_eps(tau)), abs=1e-8)
        assert audit.eps <= mech.eps_perm + 1e-12
    assert not lg.audit_sequence(mech, 2, sensitive=range(D)).invertible_ok  # a wrong X_S is caught
