"""Longitudinal collection (issue 52, second half): memoized protocols over ``tau`` rounds.

A permanent randomized response (PRR, ``eps_perm``) per user and value, then an instantaneous one (IRR) each
round, tuned so one report costs ``eps_1`` (RAPPOR's memoization; Arcolezi et al.'s L-GRR, L-UE family, LOLOHA;
Ding et al.'s dBitFlipPM), plus memoized uRR and uRAP. ``_items``/``_bits``: the protocols (they import only the
core validation); ``_simulate``: value models and the jitted scan sampler; ``_exact``: the exact law of a whole
run (privacy over ``tau``, the ULDP audit, exact attack success, round moments); ``_attack``: the simulated MAP
adversary. The package drives its own scans and imports no other layer, so it sits beside ``pum/``.
"""

from uldp_jax.longitudinal._attack import AttackCurve, attack_curve, compare_attack, map_win
from uldp_jax.longitudinal._base import Memoized
from uldp_jax.longitudinal._bits import LUE, LURAP, DBitFlipPM, l_oue, l_osue, l_soue, l_sue
from uldp_jax.longitudinal._exact import (
    SequenceAudit,
    audit_sequence,
    brute_force_eps,
    exact_attack_success,
    round_moments,
    sequence_eps,
    sequence_loglik,
)
from uldp_jax.longitudinal._items import LGRR, LOLH, LURR
from uldp_jax.longitudinal._simulate import (
    changing_values,
    check_trajectory,
    estimate_rounds,
    fixed_values,
    sample_reports,
    simulate_counts,
    variance_rounds,
)

__all__ = [
    "AttackCurve", "DBitFlipPM", "LGRR", "LOLH", "LUE", "LURAP", "LURR", "Memoized", "SequenceAudit",
    "attack_curve", "audit_sequence", "brute_force_eps", "changing_values", "check_trajectory", "compare_attack",
    "estimate_rounds", "exact_attack_success", "fixed_values", "l_oue", "l_osue", "l_soue", "l_sue", "map_win",
    "round_moments", "sample_reports", "sequence_eps", "sequence_loglik", "simulate_counts", "variance_rounds",
]
