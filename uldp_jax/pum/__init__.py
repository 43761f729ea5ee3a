"""Personalized ULDP mechanism (PUM, 001 §5): estimation, Theorem 1 terms, exact privacy checks, simulation."""

from uldp_jax.mechanisms.pum._pum import PUM, PUMUser, preprocess
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
