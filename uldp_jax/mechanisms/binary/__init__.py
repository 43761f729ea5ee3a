"""Binary-attribute mechanisms: Warner, Mangat and the context-aware BinaryCA (E-LDP)."""

from uldp_jax.mechanisms.binary._binary import BinaryCA as BinaryCA, Mangat as Mangat, Warner as Warner
from uldp_jax.mechanisms.core._registry import register

register(BinaryCA, lambda e: BinaryCA(e, 0.5 * e))
register(Warner, lambda e: Warner(e))
register(Mangat, lambda e: Mangat(e))

__all__ = [
    "BinaryCA", "Mangat", "Warner",
]
