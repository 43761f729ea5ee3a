"""The personalized ULDP mechanism (PUM, 001 §5); its estimation, audit and simulation are ``uldp_jax.pum``."""

from uldp_jax.mechanisms.pum._pum import PUM, PUMUser, preprocess
