"""The memoized protocols the longitudinal tests share (tests/longitudinal/test_*.py): one small domain, D = 4."""

from uldp_jax import longitudinal as lg

D = 4
PROTOCOLS = {
    "L-GRR": lambda: lg.LGRR(D, 2.0, 1.0),
    "L-SUE": lambda: lg.l_sue(D, 2.0, 1.0),
    "L-OUE": lambda: lg.l_oue(D, 2.0, 1.0),
    "L-OSUE": lambda: lg.l_osue(D, 2.0, 1.0),
    "L-SOUE": lambda: lg.l_soue(D, 2.0, 1.0),
    "L-uRR": lambda: lg.LURR(D, (0, 1), 2.0, 1.0),
    "L-uRAP": lambda: lg.LURAP(D, (0, 1), 2.0, 1.0),
}
ITEM = ("L-GRR", "L-uRR")
