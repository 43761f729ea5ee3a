"""The protocol every mechanism implements and what mechanisms share.

``_base`` (``Mechanism``), ``_pytree`` (``static_field``, pytree registration, ``replace``), ``_spec``
(``PrivacySpec``), ``_protocol`` (required-member checks), ``_estimation`` and ``_capabilities`` (the base
class's default members), ``_reports`` (histograms, report checks, channel-size checks), ``_grid_check``
(``grid_shape`` and ``validate_grid``: grids of mechanisms and parameter checks), ``_report_space`` (``reports()``'s
record: ``num_stats``, ``comm_bits``), ``_compact`` (packed bit reports), ``_counts`` (exact multinomial/binomial
count samplers), ``_likelihood`` (support-ratio EM terms), RNG helpers (``_uniform``, ``_hashing``) and the leaf formula modules
that several families and ``theory`` use (``_family``, ``_nmse``, ``_optima``, ``_pure_uldp``). Nothing here
imports a family.
"""

# Functions of a mechanism that generic code (and users) call; they were ``Mechanism`` members before issue 25.
from uldp_jax.mechanisms.core._estimation import debias
from uldp_jax.mechanisms.core._grid_check import grid_shape, validate_grid
from uldp_jax.mechanisms.core._report_space import comm_bits, num_stats
from uldp_jax.mechanisms.core._reports import check_reports, sample_stats

__all__ = ["check_reports", "comm_bits", "debias", "grid_shape", "num_stats", "sample_stats", "validate_grid"]
