"""Estimators of the input distribution: empirical, thresholded, EM, post-processing."""

from uldp_jax.estimation._empirical import channel_inverse, empirical, empirical_variance
from uldp_jax.estimation._registry import Method, get_method, method_names, register_method
