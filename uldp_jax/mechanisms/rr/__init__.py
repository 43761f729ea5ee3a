"""Randomized response: GRR (k-ary RR) and uRR (utility-optimized RR, 001)."""

from uldp_jax.mechanisms.rr._grr import GRR as GRR
from uldp_jax.mechanisms.rr._urr import URR as URR
from uldp_jax.mechanisms.core._registry import register

register(GRR, lambda e: GRR(5, e))
register(URR, lambda e: URR(5, (0, 2, 3), e))

__all__ = [
    "GRR", "URR",
]
