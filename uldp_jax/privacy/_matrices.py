"""Re-export of the leaf formula module ``uldp_jax.mechanisms._forms.matrices`` (mechanisms need it, so it lives below them)."""

from uldp_jax.mechanisms._forms.matrices import *  # noqa: F401,F403
