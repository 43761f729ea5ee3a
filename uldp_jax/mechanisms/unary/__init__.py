"""Unary encoding: UE/RAPPOR/SUE/OUE, uRAP (001), uUE (003), histogram encoding (HE/SHE, THE; Wang et al. 2017)
and PI-RAPPOR (Feldman, Talwar 2021)."""

from uldp_jax.mechanisms.unary._ue import OUE as OUE, RAPPOR as RAPPOR, SUE as SUE, UE as UE
from uldp_jax.mechanisms.unary._urap import URAP as URAP
from uldp_jax.mechanisms.unary._uue import UUE as UUE
from uldp_jax.mechanisms.unary._the import THE as THE
from uldp_jax.mechanisms.unary._she import HE as HE, SHE as SHE
from uldp_jax.mechanisms.unary._pi_rappor import PIRAPPOR as PIRAPPOR
from uldp_jax.mechanisms.unary._pi_rappor import pi_rappor_item_nvar, pi_rappor_probs  # noqa: F401  (ul.theory's)
from uldp_jax.mechanisms.core._registry import register

register(UE, lambda e: UE(4, e, p=0.4))
register(RAPPOR, lambda e: RAPPOR(4, e))
register(SUE, lambda e: SUE(4, e))
register(OUE, lambda e: OUE(4, e))
register(URAP, lambda e: URAP(5, (0, 2, 3), e))
register(UUE, lambda e: UUE(5, (0, 2, 3), e, p=0.4))
register(THE, lambda e: THE(4, e))
register(SHE, lambda e: SHE(4, e))
register(HE, lambda e: HE(4, e))
register(PIRAPPOR, lambda e: PIRAPPOR(6, e, q=3))

__all__ = [
    "HE", "OUE", "PIRAPPOR", "RAPPOR", "SHE", "SUE", "THE", "UE", "URAP", "UUE",
]
