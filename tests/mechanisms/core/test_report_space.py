"""``uldp_jax/mechanisms/core/_report_space.py``: ``comm_bits`` from each mechanism's ``Reports`` record: the exact
integer's bits past float64's range (SS), d bits for the unary family at any d, the hash seed and value bits of OLH
and the Wheel."""

import math

import pytest

import uldp_jax as ul
from uldp_jax.mechanisms.core._records import pure_floats


def test_comm_bits():
    assert ul.mechanisms.core.comm_bits(ul.SS(10, 1.0, k=3)) == pytest.approx(math.log2(120))
    big = ul.SS(4096, 0.1)  # C(4096, k) is past float64's range: the bits come from the exact integer
    want = (math.lgamma(4097) - math.lgamma(big.k + 1) - math.lgamma(4097 - big.k)) / math.log(2)
    assert ul.mechanisms.core.comm_bits(big) == pytest.approx(want, rel=1e-9) and want > 1024
    # the unary family's 2**d outputs, likewise: exactly d bits at any d
    assert ul.mechanisms.core.comm_bits(ul.OUE(5000, 1.0)) == 5000.0
    assert ul.mechanisms.core.comm_bits(ul.OLH(10, 1.0, g=4)) == pytest.approx(34.0)
    assert ul.OLH(10, 1.0, g=4).value_bits() == pytest.approx(2.0)
    assert ul.mechanisms.core.comm_bits(ul.OLH(3, 1.0, g=4, family="full")) == pytest.approx(math.log2(64 * 4))
    assert ul.Wheel(10, 1.0).value_bits() == 32.0
    assert pure_floats(ul.UE(5, 1.0))[0] == 0.5
