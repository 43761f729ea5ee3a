"""Randomized response: GRR (k-ary RR) and uRR (utility-optimized RR, 001)."""

from uldp_jax.mechanisms.rr._grr import GRR
from uldp_jax.mechanisms.rr._urr import URR
