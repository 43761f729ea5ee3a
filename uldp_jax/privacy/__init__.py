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

__all__ = [
    "AuditReport", "Channel", "Tradeoff", "achievable", "audit", "bsldp_matrix", "channel", "hlldp_matrix",
    "ldp_matrix", "pairwise_log_ratios", "privacy_tradeoff", "satisfies_tradeoff", "tradeoff_curve",
    "tradeoff_eps", "uldp_matrix",
]
