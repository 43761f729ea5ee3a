"""Local hashing: OLH and uLH (003)."""

from uldp_jax.mechanisms.hashing._olh import OLH, HashReport
from uldp_jax.mechanisms.hashing._ulh import ULH
