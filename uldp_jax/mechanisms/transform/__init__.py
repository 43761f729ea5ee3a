"""GLUTF, the general LDP-to-ULDP transformation (003 Algorithm 1), and what its instances share.

uSS, uUE, uLH and uWheel (in their base's family) build on ``GLUTFMixin``, ``check_common``, ``raw``,
and ``check_named`` from here.
"""

from uldp_jax.mechanisms.transform._glutf import (
    GLUTF as GLUTF,
    GLUTFMixin,
    GLUTFReport,
    check_common,
    check_theta_n,
    check_named,
    glutf as glutf,
    raw,
)
from uldp_jax.mechanisms import rr as _rr
from uldp_jax.mechanisms.core._registry import register

register(GLUTF, lambda e: glutf(_rr.GRR(3, e), 5, (0, 2, 3)))
register(glutf, lambda e: glutf(_rr.GRR(3, e), 5, (0, 2, 3)))

__all__ = ["GLUTF", "glutf"]  # the registered constructors (what ``from ... import *`` and type checkers see)
