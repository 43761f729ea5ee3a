"""Estimators of the input distribution: empirical, thresholded, EM, post-processing."""

from uldp_jax.estimation._em import em, em_likelihood, em_stats, histogram_update, likelihood_update
from uldp_jax.estimation._em_core import EMInfo, EMState, squarem_step
from uldp_jax.estimation._em_core import init as em_init
from uldp_jax.estimation._em_core import run as em_run
from uldp_jax.estimation._em_core import step as em_step
from uldp_jax.estimation._em_reports import PackedReports, SupportReports, em_reports, to_packed, to_support
from uldp_jax.estimation._grr_mle import grr_mle, water_filling
from uldp_jax.estimation._empirical import channel_inverse, empirical, empirical_variance
from uldp_jax.estimation._postprocess import base_cut, clip, norm_sub, project
from uldp_jax.estimation._postprocess_ndss import base_pos, mle_apx, non_neg, norm, norm_cut, power, power_ns
from uldp_jax.estimation._registry import Method, get_method, method_names, register_method
from uldp_jax.estimation._threshold import apply_threshold, empirical_threshold, significance_threshold

__all__ = [
    "EMInfo",
    "EMState",
    "Method",
    "PackedReports",
    "SupportReports",
    "apply_threshold",
    "base_cut",
    "base_pos",
    "channel_inverse",
    "clip",
    "em",
    "em_init",
    "em_likelihood",
    "em_reports",
    "em_run",
    "em_stats",
    "em_step",
    "empirical",
    "empirical_threshold",
    "empirical_variance",
    "get_method",
    "grr_mle",
    "histogram_update",
    "likelihood_update",
    "method_names",
    "mle_apx",
    "non_neg",
    "norm",
    "norm_cut",
    "norm_sub",
    "power",
    "power_ns",
    "project",
    "register_method",
    "significance_threshold",
    "squarem_step",
    "to_packed",
    "to_support",
    "water_filling",
]
