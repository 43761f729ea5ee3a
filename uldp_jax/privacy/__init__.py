"""Exact channels and privacy audits (float64 NumPy; never samples)."""

from uldp_jax.privacy._audit import AuditReport, audit, pairwise_log_ratios
from uldp_jax.privacy._channel import Channel, channel
from uldp_jax.privacy._hypothesis import (
    Tradeoff,
    achievable,
    privacy_tradeoff,
    satisfies_tradeoff,
    tradeoff_curve,
    tradeoff_eps,
)
from uldp_jax.mechanisms.hadamard._matrices import bsldp_matrix, hlldp_matrix, ldp_matrix, uldp_matrix
