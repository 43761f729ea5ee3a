"""Binary-attribute mechanisms: Warner, Mangat and the context-aware BinaryCA (E-LDP)."""

from uldp_jax.mechanisms.binary._binary import BinaryCA, Mangat, Warner
