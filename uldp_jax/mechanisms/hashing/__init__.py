"""Local hashing: OLH and uLH (003)."""

from uldp_jax.mechanisms.hashing._olh import OLH as OLH, HashReport
from uldp_jax.mechanisms.hashing._ulh import ULH as ULH
from uldp_jax.mechanisms.core._registry import register

register(OLH, lambda e: OLH(4, e, g=3, family="full"))
register(ULH, lambda e: ULH(5, (0, 2, 3), e, g=3, family="full"))

__all__ = ["OLH", "ULH"]  # the registered constructors (what ``from ... import *`` and type checkers see)
