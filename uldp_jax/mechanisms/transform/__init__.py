"""GLUTF, the general LDP-to-ULDP transformation (003 Algorithm 1), and what its instances share.

uSS, uUE, uLH and uWheel (in their base's family) build on ``GLUTFMixin``, ``check_common``, ``raw``,
``check_theta_n`` and ``concrete_eps`` from here.
"""

from uldp_jax.mechanisms.transform._glutf import (
    GLUTF,
    GLUTFMixin,
    GLUTFReport,
    check_common,
    check_theta_n,
    concrete_eps,
    glutf,
    raw,
)
