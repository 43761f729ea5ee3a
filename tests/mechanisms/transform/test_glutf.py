"""``uldp_jax/mechanisms/transform/_glutf.py``: with every item sensitive (X_N empty) ``glutf`` returns the LDP base
itself, and the named GLUTF mechanisms refuse it (``check_common``)."""

import pytest

import uldp_jax as ul


def test_sensitive_whole_domain_reduces_or_refuses():
    base = ul.SS(5, 1.0, k=2)
    assert ul.glutf(base, 5, range(5)) is base  # ULDP with X_N empty is LDP: the base itself
    for bad in (lambda: ul.USS(5, range(5), 1.0), lambda: ul.UUE(4, range(4), 1.0),
                lambda: ul.ULH(4, range(4), 1.0), lambda: ul.UWheel(4, range(4), 1.0)):
        with pytest.raises(ValueError, match="sensitive"):
            bad()
