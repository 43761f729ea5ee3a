"""The protocol every mechanism implements and what mechanisms share.

``_base`` (``Mechanism``), ``_pytree`` (``static_field``, pytree registration, ``replace``), ``_spec``
(``PrivacySpec``), ``_protocol`` (required-member checks), ``_estimation`` and ``_capabilities`` (the base
class's default members), ``_reports`` (histograms, report checks, channel-size checks), ``_grid_check``
(parameter checks), ``_compact`` (packed bit reports), ``_counts`` (exact multinomial/binomial count samplers),
``_likelihood`` (support-ratio EM terms), RNG helpers (``_uniform``, ``_hashing``) and the leaf formula modules
that several families and ``theory`` use (``_family``, ``_nmse``, ``_optima``, ``_pure_uldp``). Nothing here
imports a family.
"""
