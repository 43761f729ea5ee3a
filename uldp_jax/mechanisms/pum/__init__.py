"""The personalized ULDP mechanism (PUM, 001 §5); its estimation, audit and simulation are ``uldp_jax.pum``."""

from uldp_jax.mechanisms.pum._pum import PUM, PUMUser, preprocess
from uldp_jax.mechanisms.core._registry import register

register("PUM", lambda e: PUM(5, (0, 2, 3), 2, e))
