"""Private machinery of the count-level fast path and of multi-device sharding (see ``uldp_jax.fastpath``)."""
