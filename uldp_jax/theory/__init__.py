"""Closed-form utility (001, 003, 004 with docs/errata.md corrections), optimal parameters, exact channel risks.

Units: ``mse`` is the expected squared l2 loss summed over items, ``sum_x E(p_hat(x) - p(x))^2``; ``nmse`` is
``n`` times the fixed-model ``mse``. See ``_mse`` for the variance models.
"""

from uldp_jax.theory._mse import (
    check_theta_n,
    item_variance,
    l1,
    mse,
    nmse,
    pure_item_variance,
    pure_probs,
    theta_n_of,
)
from uldp_jax.theory._exact import (
    SupportMoments,
    estimator_matrix,
    exact_item_mse,
    exact_item_variance,
    exact_mse,
    support_matrix,
    support_moments,
)
from uldp_jax.theory._families import Family, family_of
from uldp_jax.theory._worst import exact_worst_mse
from uldp_jax.mechanisms.subset._ubd_weights import UBDWeights, minimax_nmse as ubd_minimax_nmse, ubd_weights
from uldp_jax.mechanisms.subset._pgr import pgr_item_nvar, pgr_probs
from uldp_jax.mechanisms.hashing import cms_item_mse, hcms_item_mse
from uldp_jax.mechanisms.hadamard import rhr_item_nvar
from uldp_jax.mechanisms.unary import pi_rappor_item_nvar, pi_rappor_probs
from uldp_jax.mechanisms.core._nmse import (
    grr_nmse,
    nonprivate_nmse,
    olh_nmse,
    pure_nmse,
    ss_nmse,
    ue_nmse,
    ulh_nmse,
    urap_nmse,
    urr_nmse,
    uss_nmse,
    uue_nmse,
    uwheel_nmse,
    wheel_nmse,
)
from uldp_jax.mechanisms.hadamard._forms import (
    block_hr_item_nvar,
    block_hr_l2_risk,
    block_hr_users_for_tv,
    highlow_hr_item_nvar,
    highlow_hr_l2_risk,
    highlow_hr_users_for_tv,
    hr_item_nvar,
    hr_l2_risk,
    hr_users_for_tv,
    theorem3_rate,
    theorem4_rate,
    users_for_tv,
)
from uldp_jax.theory._murakami import (
    nonprivate_l1,
    nonprivate_l2,
    rappor_l1,
    rappor_l2,
    rr_l1,
    rr_l2,
    uniform_nonsensitive,
    urap_l1,
    urap_l1_threshold,
    urap_l2,
    urap_worst_l1,
    urap_worst_l2,
    urr_l1,
    urr_l2,
    urr_worst_distribution,
    urr_worst_l1,
    urr_worst_l2,
)
from uldp_jax.mechanisms.core._optima import (
    optimal_g,
    optimal_g_continuous,
    optimal_k,
    optimal_k_continuous,
    optimal_l,
    optimal_p,
    optimal_theta,
)
from uldp_jax.mechanisms.transform._nonpure_uldp import nonpure_covariance_gap, nonpure_estimate, nonpure_variance_eq31
from uldp_jax.mechanisms.core._pure_uldp import (
    glutf_f,
    glutf_f_nonpure,
    glutf_z_max,
    glutf_z_star,
    pure_uldp_estimate,
    pure_uldp_mse,
    pure_uldp_variance,
    ulh_z_max,
    ulh_z_published,
    uss_z_max,
    uss_z_star,
    uwheel_z_max,
    uwheel_z_published,
)

from uldp_jax.theory._checked import checked as _checked

# The closed forms check their concrete arguments (theory/_checked.py); the mechanism-level functions above
# (mse, item_variance, exact_mse, ...) check theirs themselves.
for _name in (
    "block_hr_item_nvar", "block_hr_l2_risk", "block_hr_users_for_tv", "glutf_f", "glutf_f_nonpure", "glutf_z_max",
    "glutf_z_star", "grr_nmse", "highlow_hr_item_nvar", "highlow_hr_l2_risk", "highlow_hr_users_for_tv",
    "hr_item_nvar", "hr_l2_risk", "hr_users_for_tv", "nonprivate_l1", "nonprivate_l2", "nonprivate_nmse",
    "nonpure_covariance_gap", "nonpure_estimate", "nonpure_variance_eq31", "olh_nmse", "optimal_g",
    "optimal_g_continuous", "optimal_k", "optimal_k_continuous", "optimal_l", "optimal_p", "optimal_theta",
    "pi_rappor_item_nvar", "pi_rappor_probs", "pure_item_variance", "pure_nmse", "pure_uldp_estimate",
    "pure_uldp_mse", "pure_uldp_variance", "rappor_l1", "rappor_l2", "rhr_item_nvar", "rr_l1", "rr_l2", "ss_nmse",
    "theorem3_rate", "theorem4_rate", "ue_nmse", "ulh_nmse", "ulh_z_max",
    "ulh_z_published", "urap_l1", "urap_l2", "urap_nmse", "urap_worst_l1", "urap_worst_l2", "urr_l1", "urr_l2",
    "urr_nmse", "urr_worst_distribution", "urr_worst_l1", "urr_worst_l2", "uss_nmse", "uss_z_max", "uss_z_star",
    "uue_nmse", "uwheel_nmse", "uwheel_z_max", "uwheel_z_published", "wheel_nmse", "cms_item_mse", "hcms_item_mse",
):
    globals()[_name] = _checked(globals()[_name], keep_p=_name in ("ue_nmse", "uue_nmse"))
del _name

__all__ = [
    "Family", "SupportMoments", "block_hr_item_nvar", "block_hr_l2_risk", "block_hr_users_for_tv",
    "check_theta_n", "estimator_matrix", "exact_item_mse", "exact_item_variance", "exact_mse", "family_of",
    "glutf_f", "glutf_f_nonpure", "glutf_z_max", "glutf_z_star", "grr_nmse", "highlow_hr_item_nvar",
    "highlow_hr_l2_risk", "highlow_hr_users_for_tv", "hr_item_nvar", "hr_l2_risk", "hr_users_for_tv",
    "item_variance", "l1", "mse", "nmse", "nonprivate_l1", "nonprivate_l2", "nonprivate_nmse",
    "nonpure_covariance_gap", "nonpure_estimate", "nonpure_variance_eq31", "olh_nmse", "optimal_g",
    "optimal_g_continuous", "optimal_k", "optimal_k_continuous", "optimal_l", "optimal_p", "optimal_theta",
    "pi_rappor_item_nvar", "pi_rappor_probs", "pure_item_variance", "pure_nmse", "pure_probs", "pure_uldp_estimate", "pure_uldp_mse",
    "pure_uldp_variance", "rappor_l1", "rappor_l2", "rhr_item_nvar", "rr_l1", "rr_l2", "ss_nmse", "support_matrix",
    "support_moments", "theorem3_rate", "theorem4_rate", "theta_n_of", "ue_nmse", "ulh_nmse", "ulh_z_max",
    "ulh_z_published", "uniform_nonsensitive", "urap_l1", "urap_l1_threshold", "urap_l2", "urap_nmse",
    "urap_worst_l1", "urap_worst_l2", "urr_l1", "urr_l2", "urr_nmse", "urr_worst_distribution", "urr_worst_l1",
    "urr_worst_l2", "users_for_tv", "uss_nmse", "uss_z_max", "uss_z_star", "uue_nmse", "uwheel_nmse",
    "uwheel_z_max", "uwheel_z_published", "wheel_nmse",
]
__all__ += ["cms_item_mse", "hcms_item_mse"]  # Apple's sketches, averaged over the hash draw
