"""Subset selection: SS and uSS (003)."""

from uldp_jax.mechanisms.subset._ss import SS
from uldp_jax.mechanisms.subset._uss import USS
