"""``uldp_jax/privacy/_channel.py``: a channel that is not a probability matrix (a scaled, NaN, negative, infinite
or off-by-more-than-``ROW_SUM_ATOL`` row, a bad shape, a protected mask that is not one bool per output) is refused
before the audit reads it, and a channel too large to build is refused before allocation."""

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax.privacy import _channel


_Fixed = ul.testing.FixedChannel


def _grr(d=4, eps=1.0):
    ch = ul.channel(ul.GRR(d, eps))
    return ch.Q.copy(), ch.protected.copy(), ul.GRR(d, eps).privacy_spec()


def _scaled(Q):
    return Q * 0.5


def _nan(Q):
    Q[0, 1] = np.nan
    return Q


def _neg(Q):  # rows still sum to 1
    Q[0, 1] -= 0.01
    Q[0, 2] += 0.01
    Q[1, 0] = -1e-3
    Q[1, 1] += 1e-3
    return Q


def _inf(Q):
    Q[2, 2] = np.inf
    return Q


def _off(Q):  # rows off by 1e-8 > ROW_SUM_ATOL
    Q[3, 3] += 1e-8
    return Q


@pytest.mark.parametrize("corrupt,match", [(_scaled, "summing"), (_nan, "non-finite"), (_neg, "negative"),
                                           (_inf, "non-finite"), (_off, "summing")])
def test_corrupt_channel_refused(corrupt, match):
    Q, p, spec = _grr()
    with pytest.raises(ValueError, match=match):
        ul.audit(_Fixed(corrupt(Q), p, spec))


def test_subclass_with_scaled_channel_refused():
    class Half(ul.GRR):
        def channel_matrix(self):
            Q, p = super().channel_matrix()
            return Q * 0.5, p

    with pytest.raises(ValueError, match="not a probability matrix"):
        ul.audit(Half(4, 1.0))
    with pytest.raises(ValueError, match="not a probability matrix"):
        ul.channel(Half(4, 1.0))


def test_row_sum_tolerance_is_the_stated_one():
    Q, p, spec = _grr()
    Q[0, 1] += 0.5 * _channel.ROW_SUM_ATOL  # an output whose ratios stay far inside e^eps
    assert ul.audit(_Fixed(Q, p, spec)).ok
    Q[0, 1] += 1.0 * _channel.ROW_SUM_ATOL
    with pytest.raises(ValueError, match="summing"):
        ul.audit(_Fixed(Q, p, spec))


@pytest.mark.parametrize("bad", [np.ones((3, 4)), np.ones(4), np.ones((4, 4, 1)), np.ones((4, 0))])
def test_bad_shape_refused(bad):
    _, p, spec = _grr()
    with pytest.raises(ValueError, match="shape|rows"):
        ul.audit(_Fixed(bad / max(bad.shape[-1], 1), p, spec))


def test_protected_partition_checked():
    Q, p, spec = _grr()
    with pytest.raises(ValueError, match="bool"):
        ul.audit(_Fixed(Q, p.astype(int), spec))
    with pytest.raises(ValueError, match="one entry per output"):
        ul.audit(_Fixed(Q, p[:3], spec))
    # An LDP claim is checked on every output, whatever the mask says: unmarking an output hides nothing.
    Q2 = Q.copy()
    Q2[0] = [0.7, 0.1, 0.1, 0.1]  # ratio 7 > e on output 0
    p2 = p.copy()
    p2[0] = False
    rep = ul.audit(_Fixed(Q2, p2, spec))
    # worst pair (1, 0) on output 1: Q(1|1) / Q(1|0) = keep / 0.1
    assert not rep.ok and rep.eps == pytest.approx(np.log(Q[1, 1] / 0.1)) and rep.worst_pair == (1, 0)


@pytest.mark.parametrize("make", [lambda: ul.GRR(10**9, 1.0), lambda: ul.URR(10**9, [0], 1.0),
                                  lambda: ul.GRR(20000, 1.0), lambda: ul.PUM(10**6, [0], 1, 1.0),
                                  lambda: ul.OLH(10**7, 1.0), lambda: ul.RAPPOR(64, 1.0),
                                  lambda: ul.URAP(10**9, [0], 1.0), lambda: ul.HR(10**8, 1.0)])
def test_size_guard_before_allocation(make):
    mech = make()
    with pytest.raises(ValueError, match="entries"):
        ul.channel(mech)
    with pytest.raises(ValueError, match="entries"):
        ul.audit(mech)
