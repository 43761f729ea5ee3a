"""Leaf formula modules (closed forms, optima, privacy matrices, partitions): pure math on eps and sizes.

Mechanisms need these for their defaults (GLUTF's z*, the optimal k, HR risks), and ``theory``/``privacy``
re-export them; they import nothing from ``uldp_jax`` except ``_validate`` and each other.
"""
