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
from uldp_jax.mechanisms.core._estimation import affine, debias, debias_variance, own_debias, stats_matrix
from uldp_jax.mechanisms.core._grid_check import grid_shape, grid_shape_or_none, validate_grid
from uldp_jax.mechanisms.core._report_space import comm_bits, num_stats
from uldp_jax.mechanisms.core._reports import check_reports, sample_stats
from uldp_jax.mechanisms.core._revealed import supported_items
# What the estimators and the engine read of a mechanism's records, with their defaults filled in.
from uldp_jax.mechanisms.core._compact import CompactBits, to_dense
from uldp_jax.mechanisms.core._host import host_array
from uldp_jax.mechanisms.core._likelihood import SupportRatio, bit_log_odds, product_log_odds
from uldp_jax.mechanisms.core._records import counts_of, likelihood_of

__all__ = [
    "CompactBits", "SupportRatio", "affine", "bit_log_odds", "check_reports", "comm_bits", "counts_of", "debias",
    "debias_variance", "grid_shape", "grid_shape_or_none", "host_array", "likelihood_of", "num_stats", "own_debias",
    "product_log_odds", "sample_stats", "stats_matrix", "supported_items", "to_dense", "validate_grid",
]
