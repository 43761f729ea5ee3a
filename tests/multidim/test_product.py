"""``uldp_jax/multidim/_product.py``'s checks, shared by SPL, SMP and RS+FD: bad arguments raise ValueError/TypeError
naming the argument."""

import numpy as np
import pytest

import uldp_jax as ul
from uldp_jax import multidim as md


@pytest.mark.parametrize("build", [md.spl, md.smp, md.rsfd])
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_eps(build, eps):
    with pytest.raises(ValueError, match="eps"):
        build(ul.GRR, (3, 4), eps)


@pytest.mark.parametrize("build", [md.smp, md.rsfd])
def test_fewer_than_two_attributes(build):
    with pytest.raises(ValueError, match="domains"):
        build(ul.GRR, (3,), 1.0)


@pytest.mark.parametrize("domains,err", [((3, 1), ValueError), ((3, 2.5), TypeError), (5, TypeError)])
def test_bad_domains(domains, err):
    with pytest.raises(err, match="domains"):
        md.spl(ul.GRR, domains, 1.0)


def test_encode_wrong_shape_and_value_outside_its_domain():
    with pytest.raises(ValueError, match=r"xs of shape \[n, 2\]"):
        md.encode(np.zeros((4, 3), int), (3, 4))
    with pytest.raises(ValueError, match=r"xs\[:, 1\] in \[0, 4\)"):
        md.encode(np.array([[0, 1], [2, 4]]), (3, 4))
    with pytest.raises(ValueError, match=r"xs\[:, 0\]"):
        md.encode(np.array([[-1, 0]]), (3, 4))
    with pytest.raises(TypeError, match="xs"):
        md.encode(np.array([[0.5, 1.0]]), (3, 4))


def test_bad_oracles_and_fake():
    with pytest.raises(ValueError, match="fake"):
        md.rsfd(ul.GRR, (3, 4), 1.0, fake="q")
    with pytest.raises(ValueError, match="fake='z'"):
        md.rsfd(ul.GRR, (3, 4), 1.0, fake="z")
    with pytest.raises(ValueError, match="oracles"):
        md.RSFD((ul.URR(3, (0,), 1.0), ul.GRR(4, 1.0)))
    with pytest.raises(TypeError, match=r"oracles\[1\]"):
        md.SPL((ul.GRR(3, 1.0), "GRR"))
    with pytest.raises(ValueError, match="report_kind"):
        md.SPL((ul.GRR(3, 1.0), ul.OLH(4, 1.0)))
    with pytest.raises(ValueError, match="make"):
        md.spl([ul.GRR], (3, 4), 1.0)


def test_channel_too_large_is_refused():
    with pytest.raises(ValueError, match="2\\^24"):
        md.spl(ul.GRR, (64, 64, 64), 1.0).channel_matrix()
