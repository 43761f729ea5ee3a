"""Personalized ULDP mechanism (PUM, 001 §5), all in one place: the mechanism (``_mechanism``: a protocol
mechanism that imports only ``mechanisms/``), its estimation and Theorem 1 terms, exact privacy checks and
simulation (which drive the engine, so the package sits at the engine's layer)."""

from uldp_jax.mechanisms.core._registry import register
from uldp_jax.pum._mechanism import PUM as PUM, PUMUser, preprocess
from uldp_jax.pum._audit import PUMAudit, audit_pum, cross_user_log_ratio
from uldp_jax.pum._estimate import (
    PUMEstimate,
    PUMLoss,
    PUMTruth,
    check_prior,
    combine,
    pum_estimate,
    pum_loss,
    pum_truth,
)
from uldp_jax.pum._personal import personal_from_pairs
from uldp_jax.pum._simulate import PUMSimResult, simulate_pum

register(PUM, lambda e: PUM(5, (0, 2, 3), 2, e))

__all__ = [
    "PUM", "PUMAudit", "PUMEstimate", "PUMLoss", "PUMSimResult", "PUMTruth", "PUMUser", "audit_pum",
    "check_prior", "combine", "cross_user_log_ratio", "personal_from_pairs", "preprocess", "pum_estimate",
    "pum_loss", "pum_truth", "simulate_pum",
]
