"""Re-export of the leaf formula module ``uldp_jax.mechanisms._forms.partition``.

Mechanisms need these formulas, so they live below them (ARCHITECTURE: leaf modules both layers import).
"""

from uldp_jax.mechanisms._forms.partition import *  # noqa: F401,F403
