"""Unary encoding: UE/RAPPOR/SUE/OUE, uRAP (001) and uUE (003)."""

from uldp_jax.mechanisms.unary._ue import OUE as OUE, RAPPOR as RAPPOR, SUE as SUE, UE as UE
from uldp_jax.mechanisms.unary._urap import URAP as URAP
from uldp_jax.mechanisms.unary._uue import UUE as UUE
from uldp_jax.mechanisms.core._registry import register

register(UE, lambda e: UE(4, e, p=0.4))
register(RAPPOR, lambda e: RAPPOR(4, e))
register(SUE, lambda e: SUE(4, e))
register(OUE, lambda e: OUE(4, e))
register(URAP, lambda e: URAP(5, (0, 2, 3), e))
register(UUE, lambda e: UUE(5, (0, 2, 3), e, p=0.4))

__all__ = [
    "OUE", "RAPPOR", "SUE", "UE", "URAP", "UUE",
]
