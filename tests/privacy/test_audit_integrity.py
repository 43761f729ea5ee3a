"""The audit checks what it is given: a malformed claim or tolerance is refused, never passed (a malformed channel:
tests/privacy/test_channel.py)."""

import numpy as np
import pytest

import uldp_jax as ul


_Fixed = ul.testing.FixedChannel


def _grr(d=4, eps=1.0):
    ch = ul.channel(ul.GRR(d, eps))
    return ch.Q.copy(), ch.protected.copy(), ul.GRR(d, eps).privacy_spec()


def test_malformed_spec_refused():
    Q, p, spec = _grr()
    with pytest.raises(ValueError, match="kind"):
        ul.audit(_Fixed(Q, p, spec._replace(kind="nope")))
    with pytest.raises(ValueError, match="shape"):
        ul.audit(_Fixed(Q, p, spec._replace(E=np.zeros((3, 3)))))
    with pytest.raises(ValueError, match="eps"):
        ul.audit(_Fixed(Q, p, spec._replace(eps=float("nan"))))
    with pytest.raises(ValueError, match="constrain"):
        ul.audit(_Fixed(Q, p, spec._replace(E=np.full((4, 4), np.inf))))
    urr = ul.URR(4, [0], 1.0)
    s = urr.privacy_spec()
    with pytest.raises(ValueError, match="invertible_inputs"):
        ul.audit(_Fixed(*ul.channel(urr), s._replace(invertible_inputs=np.ones(3, bool))))


@pytest.mark.parametrize("tol", [1e-5, 1.0, 1e9, np.inf, 0.0, -1e-9, float("nan")])
def test_tol_cannot_loosen_the_audit(tol):
    with pytest.raises(ValueError, match="tol"):
        ul.audit(ul.GRR(4, 1.0), tol=tol)
    with pytest.raises(ValueError, match="tol"):
        ul.audit_pum(ul.PUM(4, [0], 1, 1.0), [[1]], tol=tol)


def test_tol_type_and_all_inf_E():
    with pytest.raises(TypeError, match="tol"):
        ul.audit(ul.GRR(4, 1.0), tol="1e-9")
    with pytest.raises(ValueError, match="constrain"):
        ul.audit(ul.GRR(4, 1.0), E=np.full((4, 4), np.inf))


def test_a_channel_over_its_bound_fails_at_every_accepted_tol():
    # GRR at eps = 1 audited against E = 1 - 2e-6: excess 2e-6 > MAX_TOL * 1 -> fails whatever tol.
    E = ul.ldp_matrix(4, 1.0 - 2e-6)
    for tol in (1e-12, 1e-9, 1e-6):
        rep = ul.audit(ul.GRR(4, 1.0), E=E, tol=tol)
        assert not rep.ok and rep.excess == pytest.approx(2e-6, rel=1e-6)


def test_audit_refuses_large_d_squared_before_the_spec():
    # OLH's channel (d x num_hashes*g) is small, but the [d, d] ratio matrix is not.
    mech = ul.OLH(8192, 1.0, num_hashes=2)
    with pytest.raises(ValueError, match="entries"):
        ul.audit(mech)
