"""Re-export of the leaf formula module ``uldp_jax.mechanisms._forms.optima`` (mechanisms need it, so it lives below them)."""

from uldp_jax.mechanisms._forms.optima import *  # noqa: F401,F403
